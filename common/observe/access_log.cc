#include "observe/access_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace hello {

LogWriter::LogWriter(int fd, bool owns_fd, int workers)
    : fd_(fd), owns_fd_(owns_fd), spare_(workers), allocated_(workers, 0), lost_(workers, 0) {
  queue_.reserve(static_cast<size_t>(workers) * kMaxBuffers);
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
    : writer_(writer), worker_(worker), dropped_(dropped) {
  buf_.reserve(LogWriter::kBufferSize);
  set_time(time(nullptr));
}

void AccessLog::set_time(time_t now) {
  struct tm tm;
  gmtime_r(&now, &tm);
  time_length_ = strftime(time_, sizeof time_, "[%d/%b/%Y:%H:%M:%S +0000]", &tm);
}

namespace {

// The longest line append() writes: address, time, method, the logged part
// of the target (Session caps it), version, status and size, with slack.
constexpr size_t kMaxLine = 1024;

// Copies `s` to `p` and returns the end of the copy.
char* put(char* p, std::string_view s) {
  memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

// The line is assembled on the stack and appended in one piece: one
// capacity check and one copy into the buffer instead of one per field.
void AccessLog::append(std::string_view peer, std::string_view method, std::string_view target,
                       int version, int status, size_t body_bytes) {
  if (buf_.size() + kMaxLine > buf_.capacity()) {
    flush();
    if (buf_.size() + kMaxLine > buf_.capacity()) {
      dropped_.add();
      return;
    }
  }
  char line[kMaxLine];
  char* const end = line + sizeof line - 1;  // room for the last '\n' whatever to_chars does
  char* p = line;
  p = put(p, peer.empty() ? "-" : peer);
  p = put(p, " - - ");
  p = put(p, {time_, time_length_});
  p = put(p, " \"");
  if (method.empty()) {
    *p++ = '-';
  } else {
    p = put(p, method);
    *p++ = ' ';
    p = put(p, target);  // Session keeps at most 256 bytes of it
    p = put(p, version == 10 ? " HTTP/1.0" : version == 20 ? " HTTP/2.0" : " HTTP/1.1");
  }
  p = put(p, "\" ");
  p = std::to_chars(p, end, status).ptr;
  *p++ = ' ';
  if (body_bytes == 0)
    *p++ = '-';
  else
    p = std::to_chars(p, end, body_bytes).ptr;
  *p++ = '\n';
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
