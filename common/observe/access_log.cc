#include "observe/access_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include "observe/json_escape.h"

namespace hello {

LogWriter::LogWriter(int fd, bool owns_fd, int workers, LogFormat format)
    : fd_(fd),
      owns_fd_(owns_fd),
      format_(format),
      spare_(workers),
      allocated_(workers, 0),
      lost_(workers, 0) {
  queue_.reserve(static_cast<size_t>(workers) * kMaxBuffers);
  // Buffers come back here: room for all of them, so that no return allocates.
  for (std::vector<std::string>& spare : spare_) spare.reserve(kMaxBuffers);
  thread_ = std::thread([this] { run(); });
}

LogWriter::~LogWriter() {
  stop();
  if (owns_fd_) close(fd_);
}

bool LogWriter::submit(int worker, std::string& buf) {
  std::string fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string>& spare = spare_[worker];
    if (!spare.empty()) {
      fresh = std::move(spare.back());
      spare.pop_back();
    } else if (allocated_[worker] < kMaxBuffers) {
      ++allocated_[worker];
    } else {
      return false;
    }
    queue_.push_back({worker, std::move(buf), 0});
  }
  wake_.notify_one();
  buf = std::move(fresh);
  // Only the first kMaxBuffers hand-overs of a worker allocate; afterwards
  // buffers come back from the writer with their capacity.
  if (buf.capacity() < kBufferSize) buf.reserve(kBufferSize);
  return true;
}

bool LogWriter::stop(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  wake_.notify_one();
  if (!finished_wake_.wait_until(lock, deadline, [this] { return finished_; })) {
    for (const Pending& p : queue_)
      lost_[p.worker] += static_cast<uint64_t>(std::count(p.buf.begin(), p.buf.end(), '\n'));
    return false;
  }
  lock.unlock();
  if (thread_.joinable()) thread_.join();
  return true;
}

uint64_t LogWriter::lines_lost(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_[worker];
}

size_t LogWriter::backlog(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_[worker] - spare_[worker].size();
}

void LogWriter::run() {
  std::vector<Pending> batch;
  batch.reserve(queue_.capacity());
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {  // stopping, and everything is written
      finished_ = true;
      finished_wake_.notify_all();
      return;
    }
    batch.swap(queue_);
    lock.unlock();
    for (Pending& p : batch) {
      const char* at = p.buf.data();
      size_t left = p.buf.size();
      while (left > 0) {
        ssize_t n = write(fd_, at, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the reader is gone; nothing sensible remains
        at += n;
        left -= static_cast<size_t>(n);
      }
      // Lines cut off by a failed write are lost, and counted.
      p.lost = static_cast<uint64_t>(std::count(at, at + left, '\n'));
      p.buf.clear();
    }
    lock.lock();
    for (Pending& p : batch) {
      lost_[p.worker] += p.lost;
      spare_[p.worker].push_back(std::move(p.buf));
    }
    batch.clear();
  }
}

AccessLog::AccessLog(LogWriter& writer, int worker, Counter& dropped)
    : writer_(writer), worker_(worker), format_(writer.format()), dropped_(dropped) {
  buf_.reserve(LogWriter::kBufferSize);
  set_time(time(nullptr));
}

void AccessLog::set_time(time_t now) {
  struct tm tm;
  gmtime_r(&now, &tm);
  time_length_ = strftime(time_, sizeof time_, "[%d/%b/%Y:%H:%M:%S +0000]", &tm);
  struct timespec wall, mono;
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  wall_offset_ns_ =
      (int64_t{wall.tv_sec} - mono.tv_sec) * 1'000'000'000 + (int64_t{wall.tv_nsec} - mono.tv_nsec);
}

namespace {

// The longest line append_clf() writes: address, time, method, the logged
// part of the target, version, status and size, with slack.
constexpr size_t kMaxLine = 1024;
static_assert(kMaxLine > 46 + 32 + 32 + kMaxLoggedTarget + 9 + 3 + 20 + 16);

// JSON's method is one of llhttp's and nghttp2's names, cut here for the
// line's bound (the longest, "VERSION-CONTROL", is 15).
constexpr size_t kMaxLoggedMethod = 32;
// The longest line append_json() writes: its names and punctuation, each
// value at its longest (escaped text kJsonEscapedByte per byte), with slack.
constexpr size_t kMaxJsonLine =
    sizeof R"({"time":"2026-11-29T21:42:08.123Z","peer":"[]:65535","worker":4294967295,)" + 46 +
    sizeof R"("method":"","target":"","protocol":"HTTP/1.1","status":65535,)" +
    kJsonEscapedByte * (kMaxLoggedMethod + kMaxLoggedTarget) +
    sizeof R"("bytes":18446744073709551615,"service_us":1844674407370955161.5,)" +
    sizeof R"("shape_decision":""})" + kJsonEscapedByte * kMaxLoggedDecision + 16;

// Copies `s` to `p` and returns the end of the copy.
char* put(char* p, std::string_view s) {
  memcpy(p, s.data(), s.size());
  return p + s.size();
}

// `value`'s decimal digits, zero-padded to `width`.
char* put_padded(char* p, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) p[i] = static_cast<char>('0' + value % 10);
  return p + width;
}

// `v` in decimal (20 digits at most).
char* put_number(char* p, uint64_t v) {
  return std::to_chars(p, p + 20, v).ptr;
}

// `s` as a JSON string, quoted, at most `max` bytes of it.
char* put_json_string(char* p, std::string_view s, size_t max) {
  *p++ = '"';
  p += json_escape(s.substr(0, max), p);
  *p++ = '"';
  return p;
}

}  // namespace

bool AccessLog::room_for(size_t max_line) {
  if (buf_.size() + max_line <= buf_.capacity()) return true;
  flush();
  if (buf_.size() + max_line <= buf_.capacity()) return true;
  dropped_.add();
  return false;
}

// The line is assembled on the stack and appended in one piece: one
// capacity check and one copy into the buffer instead of one per field.
void AccessLog::append_clf(const LogRecord& r) {
  if (!room_for(kMaxLine)) return;
  char line[kMaxLine];
  char* const end = line + sizeof line - 1;  // room for the last '\n' whatever to_chars does
  char* p = line;
  p = put(p, r.peer.empty() ? "-" : r.peer);
  p = put(p, " - - ");
  p = put(p, {time_, time_length_});
  p = put(p, " \"");
  if (r.method.empty()) {
    *p++ = '-';
  } else {
    p = put(p, r.method.substr(0, kMaxLoggedMethod));
    *p++ = ' ';
    p = put(p, r.target.substr(0, kMaxLoggedTarget));
    p = put(p, r.version == 10 ? " HTTP/1.0" : r.version == 20 ? " HTTP/2.0" : " HTTP/1.1");
  }
  p = put(p, "\" ");
  p = std::to_chars(p, end, r.status).ptr;
  *p++ = ' ';
  if (r.body_bytes == 0)
    p = put(p, "-");
  else
    p = std::to_chars(p, end, r.body_bytes).ptr;
  *p++ = '\n';
  buf_.append(line, static_cast<size_t>(p - line));
}

char* AccessLog::put_json_time(uint64_t now_ns, char* p) {
  int64_t wall_ns = static_cast<int64_t>(now_ns) + wall_offset_ns_;
  int64_t second = wall_ns / 1'000'000'000;
  if (second != json_second_) {
    // Once a second: the date and time, from the days since 1970 (the
    // civil calendar of <chrono>, no time zone, no allocation).
    using namespace std::chrono;
    sys_seconds t{seconds{second}};
    sys_days day = floor<days>(t);
    year_month_day ymd{day};
    hh_mm_ss<seconds> hms{t - day};
    char* d = json_date_;
    d = put_padded(d, static_cast<unsigned>(static_cast<int>(ymd.year())), 4);
    *d++ = '-';
    d = put_padded(d, static_cast<unsigned>(ymd.month()), 2);
    *d++ = '-';
    d = put_padded(d, static_cast<unsigned>(ymd.day()), 2);
    *d++ = 'T';
    d = put_padded(d, static_cast<unsigned>(hms.hours().count()), 2);
    *d++ = ':';
    d = put_padded(d, static_cast<unsigned>(hms.minutes().count()), 2);
    *d++ = ':';
    d = put_padded(d, static_cast<unsigned>(hms.seconds().count()), 2);
    *d++ = '.';
    json_second_ = second;
  }
  p = put(p, {json_date_, 20});
  p = put_padded(p, static_cast<unsigned>(wall_ns % 1'000'000'000 / 1'000'000), 3);
  *p++ = 'Z';
  return p;
}

// As append_clf(): one line on the stack, one copy. Field order is fixed.
void AccessLog::append_json(const LogRecord& r) {
  if (!room_for(kMaxJsonLine)) return;
  char line[kMaxJsonLine];
  char* p = line;
  p = put(p, R"({"time":")");
  p = put_json_time(r.now_ns, p);
  p = put(p, R"(","peer":)");
  if (r.peer.empty()) {
    p = put(p, "null");
  } else {
    // The address is uv_ip4_name's or uv_ip6_name's numeric text: nothing
    // to escape. IPv6 in brackets, as in a URL.
    bool v6 = r.peer.find(':') != std::string_view::npos;
    p = put(p, v6 ? "\"[" : "\"");
    p = put(p, r.peer.substr(0, 46));
    p = put(p, v6 ? "]:" : ":");
    p = put_number(p, r.port);
    *p++ = '"';
  }
  p = put(p, R"(,"worker":)");
  p = put_number(p, static_cast<uint64_t>(worker_));
  if (r.method.empty()) {
    p = put(p, R"(,"method":null,"target":null,"protocol":null)");
  } else {
    p = put(p, R"(,"method":)");
    p = put_json_string(p, r.method, kMaxLoggedMethod);
    p = put(p, R"(,"target":)");
    p = put_json_string(p, r.target, kMaxLoggedTarget);
    p = put(p, r.version == 10   ? R"(,"protocol":"HTTP/1.0")"
               : r.version == 20 ? R"(,"protocol":"HTTP/2.0")"
                                 : R"(,"protocol":"HTTP/1.1")");
  }
  p = put(p, R"(,"status":)");
  p = put_number(p, static_cast<uint64_t>(r.status));
  p = put(p, R"(,"bytes":)");
  p = put_number(p, r.body_bytes);
  // Microseconds to 0.1, as /stats gives them.
  uint64_t tenths = (r.service_ns + 50) / 100;
  p = put(p, R"(,"service_us":)");
  p = put_number(p, tenths / 10);
  *p++ = '.';
  *p++ = static_cast<char>('0' + tenths % 10);
  if (!r.decision.empty()) {
    p = put(p, R"(,"shape_decision":)");
    p = put_json_string(p, r.decision, kMaxLoggedDecision);
  }
  p = put(p, "}\n");
  buf_.append(line, static_cast<size_t>(p - line));
}

void AccessLog::flush() {
  if (!buf_.empty()) writer_.submit(worker_, buf_);
}

void AccessLog::flush_final() {
  if (buf_.empty() || writer_.submit(worker_, buf_)) return;
  dropped_.add(static_cast<uint64_t>(std::count(buf_.begin(), buf_.end(), '\n')));
  buf_.clear();
}

}  // namespace hello
