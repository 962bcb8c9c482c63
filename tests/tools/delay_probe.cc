// delay_probe: opens N loopback connections, sends one request on each and
// times every answer, to check what a deferred route promises (every answer
// arrives, none before its delay, most by a bound, all by another) and what
// the server's memory grows by per waiting connection. Plain POSIX sockets
// and one epoll set, so the client shares no code with the server it
// measures. How to run and read it: tests/tools/README.md.
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSecond = 1'000'000'000;
// Connects in flight at once. A SYN dropped by a full accept queue is sent
// again only after 1 s, which would pass for a slow server; the servers'
// listen backlog is 4096, so 256 keeps well clear of it.
constexpr size_t kMaxConnecting = 256;
// A head larger than this is not what a hello server sends.
constexpr size_t kMaxHead = 16 * 1024;
// Descriptors beyond the connections: stdio, the epoll set, /proc files, --json.
constexpr rlim_t kSpareFds = 32;
// Sending as fast as possible, the answers are looked at every this many
// sends, so that the first answers are read while the last requests go out.
constexpr size_t kSendsPerPoll = 64;
// How long the server may take to accept every connection before its idle RSS is read.
constexpr int64_t kAcceptWaitNs = 2 * kNsPerSecond;
constexpr int kMaxEvents = 512;

[[noreturn]] void internal_error(const char* what) {
  fmt::print(stderr, "delay_probe: internal error: {}\n", what);
  std::abort();
}

// Unlike assert(), stays in every build.
void expect(bool ok, const char* what) {
  if (!ok) internal_error(what);
}

int64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * kNsPerSecond + ts.tv_nsec;
}

// CLOCK_REALTIME minus CLOCK_MONOTONIC: the kernel stamps received packets
// with the former. Read between two monotonic reads, the closest of a few
// tries, so the error is half a clock read (well under a microsecond).
int64_t realtime_offset_ns() {
  int64_t best = 0, best_gap = INT64_MAX;
  for (int i = 0; i < 8; ++i) {
    int64_t a = now_ns(), r = now_ns(CLOCK_REALTIME), b = now_ns();
    if (b - a < best_gap) best_gap = b - a, best = r - (a + (b - a) / 2);
  }
  return best;
}

double ms(int64_t ns) {
  return static_cast<double>(ns) / kNsPerMs;
}

// The end of one HTTP/1.x response among a connection's bytes: the status
// line, Content-Length among the headers, then that many body bytes (or all
// bytes up to the close when there is no length).
class ResponseReader {
 public:
  enum class State : uint8_t { kHead, kBody, kUntilClose, kDone, kBad };

  // Takes the next bytes read; returns the state after them.
  State feed(std::string_view bytes) {
    if (state_ == State::kHead) {
      size_t old = head_.size();
      head_.append(bytes);
      // The blank line may straddle two reads.
      size_t end = head_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
      if (end == std::string::npos)
        return head_.size() > kMaxHead ? fail("response head over 16 KiB") : state_;
      size_t body_bytes = head_.size() - end - 4;
      if (parse_head(std::string_view(head_).substr(0, end)) == State::kBad) return state_;
      std::string().swap(head_);
      return body(body_bytes);
    }
    if (state_ == State::kDone) return fail("bytes after the end of the answer");
    return body(bytes.size());
  }

  // The peer closed; returns the final state.
  State eof() {
    if (state_ == State::kUntilClose) return state_ = State::kDone;
    if (state_ == State::kDone || state_ == State::kBad) return state_;
    if (state_ == State::kHead && head_.empty()) return fail("closed by the server, no answer");
    return fail("closed before the end of the answer");
  }

  int status() const { return status_; }
  const char* error() const { return error_; }

 private:
  State fail(const char* why) {
    error_ = why;
    return state_ = State::kBad;
  }

  State body(size_t n) {
    if (state_ != State::kBody) return state_;
    if (n > body_left_) return fail("bytes after the end of the answer");
    body_left_ -= n;
    return body_left_ == 0 ? state_ = State::kDone : state_;
  }

  State parse_head(std::string_view head) {
    // "HTTP/1.x SSS reason"
    if (head.size() < 12 || head.substr(0, 7) != "HTTP/1." || head[8] != ' ' ||
        (head.size() > 12 && head[12] != ' ' && head[12] != '\r'))
      return fail("not an HTTP/1.x status line");
    for (int i = 9; i < 12; ++i) {
      if (head[i] < '0' || head[i] > '9') return fail("not an HTTP/1.x status line");
      status_ = status_ * 10 + (head[i] - '0');
    }
    if (status_ < 200) return fail("an interim 1xx answer");
    std::optional<uint64_t> length;
    for (size_t at = head.find("\r\n"); at != std::string_view::npos;) {
      size_t next = head.find("\r\n", at + 2);
      std::string_view line = head.substr(at + 2, next == head.npos ? head.npos : next - at - 2);
      at = next;
      size_t colon = line.find(':');
      if (colon == line.npos) return fail("a header line without a colon");
      std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
      auto is = [&](std::string_view want) {
        return name.size() == want.size() &&
               strncasecmp(name.data(), want.data(), want.size()) == 0;
      };
      if (is("transfer-encoding")) return fail("a chunked answer (not read by this probe)");
      if (!is("content-length")) continue;
      uint64_t n = 0;
      if (value.empty() || value.size() > 12) return fail("a bad Content-Length");
      for (char c : value) {
        if (c < '0' || c > '9') return fail("a bad Content-Length");
        n = n * 10 + static_cast<uint64_t>(c - '0');
      }
      if (length && *length != n) return fail("two different Content-Lengths");
      length = n;
    }
    // The answer to a GET has no body with these two, whatever the headers say.
    if (status_ == 204 || status_ == 304) length = 0;
    if (!length) return state_ = State::kUntilClose;
    body_left_ = *length;
    return state_ = State::kBody;
  }

  State state_ = State::kHead;
  std::string head_;  // until the blank line, then freed
  uint64_t body_left_ = 0;
  int status_ = 0;
  const char* error_ = nullptr;
};

// A connection's life; each moves forward only, asserted by set_phase().
enum class Phase : uint8_t {
  kNew,         // not yet opened
  kConnecting,  // connect() under way
  kIdle,        // connected, request not sent
  kWaiting,     // request sent, answer not complete
  kAnswered,    // a complete answer arrived, whatever its status
  kFailed,      // see Conn::error
};

struct Conn {
  int fd = -1;
  Phase phase = Phase::kNew;
  int64_t sent_ns = 0;     // CLOCK_MONOTONIC just before send()
  int64_t arrived_ns = 0;  // the last bytes' arrival, from the kernel's stamp when there is one
  int64_t read_ns = 0;     // when this process read them
  bool kernel_stamp = false;
  ResponseReader reader;
  std::string error;
};

constexpr int kPhases = 6;

// Which moves a connection may make; anything else is a bug in this file.
constexpr bool kAllowed[kPhases][kPhases] = {
    // to: New   Connecting Idle   Waiting Answered Failed
    {false, true, false, false, false, true},    // from New
    {false, false, true, false, false, true},    // from Connecting
    {false, false, false, true, false, true},    // from Idle
    {false, false, false, false, true, true},    // from Waiting
    {false, false, false, false, false, false},  // from Answered
    {false, false, false, false, false, false},  // from Failed
};

// VmRSS of a process in bytes, or nullopt if it cannot be read.
std::optional<int64_t> rss_bytes(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  return std::nullopt;
}

// Open descriptors of a process, or -1.
int open_fds(int pid) {
  DIR* dir = opendir(fmt::format("/proc/{}/fd", pid).c_str());
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  size_t connections = 10000;
  std::string path = "/slow";
  double spread = 0;
  double timeout = 10;
  int expect_status = 200;
  std::optional<double> min_ms;
  std::vector<double> within;
  std::vector<std::string> check_texts;
  std::vector<std::pair<double, double>> checks;  // (percent, ms)
  int rss_pid = 0;
  double rss_wait_ms = 250;
  std::optional<double> max_rss_per_waiting;
  std::string json_path;
  std::string csv_path;
};

// RSS of --rss-pid at the three moments, in bytes; -1 when not read.
struct Rss {
  int64_t before = -1, idle = -1, waiting = -1;
  int fds_before = -1, fds_idle = -1;
};

// The N connections and the one epoll set they share.
class Probe {
 public:
  Probe(const Options& opt, const sockaddr_storage& addr, socklen_t addr_len)
      : opt_(opt), addr_(addr), addr_len_(addr_len), conns_(opt.connections) {
    count_[static_cast<int>(Phase::kNew)] = conns_.size();
    request_ = fmt::format("GET {} HTTP/1.1\r\nHost: x\r\n\r\n", opt.path);
  }
  ~Probe() {
    for (Conn& c : conns_)
      if (c.fd >= 0) close(c.fd);
    if (epoll_ >= 0) close(epoll_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  // Returns 0 or an errno.
  int init() {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    return epoll_ < 0 ? errno : 0;
  }

  // Opens every connection, kMaxConnecting at a time.
  void connect_all(int64_t deadline) {
    start_ns_ = now_ns();
    size_t next = 0;
    while ((next < conns_.size() || count(Phase::kConnecting) > 0) && now_ns() < deadline) {
      while (next < conns_.size() && count(Phase::kConnecting) < kMaxConnecting)
        start_connect(conns_[next++]);
      poll(1);
    }
    for (Conn& c : conns_)
      if (c.phase == Phase::kNew || c.phase == Phase::kConnecting)
        fail(c, "not connected before --timeout");
    connected_ns_ = now_ns();
  }

  // Waits until the server holds `fds` descriptors, bounded; keeps reading meanwhile.
  void wait_fds(int pid, int fds, int64_t deadline) {
    deadline = std::min(deadline, now_ns() + kAcceptWaitNs);
    while (open_fds(pid) < fds && now_ns() < deadline) poll(10);
  }

  // Sends the request on every connected connection, over opt.spread seconds.
  void send_all(int64_t deadline) {
    first_send_ns_ = now_ns();
    int64_t spread_ns = std::llround(opt_.spread * kNsPerSecond);
    size_t sent = 0;
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      if (c.phase != Phase::kIdle) continue;
      int64_t due =
          first_send_ns_ + std::llround(static_cast<double>(spread_ns) * static_cast<double>(i) /
                                        static_cast<double>(conns_.size()));
      for (int64_t now = now_ns(); now < due && now < deadline; now = now_ns())
        poll(static_cast<int>((due - now + kNsPerMs - 1) / kNsPerMs));
      if (now_ns() >= deadline) break;
      send_request(c);
      if (spread_ns == 0 && ++sent % kSendsPerPoll == 0) poll(0);
    }
    last_send_ns_ = now_ns();
    for (Conn& c : conns_)
      if (c.phase == Phase::kIdle) fail(c, "request not sent before --timeout");
  }

  // Reads answers until all are in and the waiting RSS (if asked) is read, or the deadline.
  void wait_answers(int64_t deadline, Rss* rss) {
    int64_t rss_due = last_send_ns_ + std::llround(opt_.rss_wait_ms * kNsPerMs);
    bool rss_pending = opt_.rss_pid > 0;
    for (int64_t now = now_ns(); now < deadline; now = now_ns()) {
      if (rss_pending && now >= rss_due) {
        rss->waiting = rss_bytes(opt_.rss_pid).value_or(-1);
        rss_pending = false;
      }
      if (count(Phase::kWaiting) == 0 && !rss_pending) break;
      int64_t until = rss_pending ? std::min(deadline, rss_due) : deadline;
      poll(static_cast<int>(std::clamp<int64_t>((until - now + kNsPerMs - 1) / kNsPerMs, 0, 100)));
    }
    for (Conn& c : conns_)
      if (c.phase == Phase::kWaiting) fail(c, "no answer before --timeout");
  }

  const std::vector<Conn>& conns() const { return conns_; }
  int64_t connect_ns() const { return connected_ns_ - start_ns_; }
  int64_t send_ns() const { return last_send_ns_ - first_send_ns_; }
  int64_t first_send() const { return first_send_ns_; }
  // The realtime-to-monotonic offset moved by this much during the run (a clock step).
  int64_t clock_drift_ns() const { return std::abs(realtime_offset_ns() - offset_ns_); }
  size_t connected() const { return connected_; }

 private:
  // Moves a connection on, keeping the count of each phase.
  void set_phase(Conn& c, Phase to) {
    int from = static_cast<int>(c.phase);
    expect(kAllowed[from][static_cast<int>(to)], "bad phase transition");
    --count_[from];
    ++count_[static_cast<int>(to)];
    c.phase = to;
  }
  size_t count(Phase p) const { return count_[static_cast<int>(p)]; }

  void start_connect(Conn& c) {
    set_phase(c, Phase::kConnecting);
    c.fd = socket(addr_.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) return fail(c, fmt::format("socket: {}", strerror(errno)));
    // Ask the kernel to stamp each received packet with its arrival time.
    int on = 1;
    if (setsockopt(c.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0)
      return fail(c, fmt::format("SO_TIMESTAMPNS: {}", strerror(errno)));
    if (connect(c.fd, reinterpret_cast<const sockaddr*>(&addr_), addr_len_) != 0 &&
        errno != EINPROGRESS)
      return fail(c, fmt::format("connect: {}", strerror(errno)));
    watch(c, EPOLL_CTL_ADD, EPOLLOUT);
  }

  bool watch(Conn& c, int op, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = static_cast<uint64_t>(&c - conns_.data());
    if (epoll_ctl(epoll_, op, c.fd, &ev) == 0) return true;
    fail(c, fmt::format("epoll_ctl: {}", strerror(errno)));
    return false;
  }

  void send_request(Conn& c) {
    // Stamped before the call: the server cannot have the request earlier,
    // and on loopback its answer may be in before send() returns.
    c.sent_ns = now_ns();
    ssize_t n = send(c.fd, request_.data(), request_.size(), MSG_NOSIGNAL);
    set_phase(c, Phase::kWaiting);
    if (n < 0) return fail(c, fmt::format("send: {}", strerror(errno)));
    if (static_cast<size_t>(n) != request_.size()) return fail(c, "send: request cut short");
  }

  // One epoll_wait and its events.
  void poll(int timeout_ms) {
    epoll_event events[kMaxEvents];
    int n = epoll_wait(epoll_, events, kMaxEvents, timeout_ms);
    for (int i = 0; i < n; ++i) on_event(conns_[events[i].data.u64], events[i].events);
  }

  void on_event(Conn& c, uint32_t events) {
    if (c.phase == Phase::kConnecting) {
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) return fail(c, fmt::format("connect: {}", strerror(err)));
      set_phase(c, Phase::kIdle);
      ++connected_;
      watch(c, EPOLL_CTL_MOD, EPOLLIN);
    } else if (c.phase == Phase::kIdle || c.phase == Phase::kWaiting) {
      if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
    }
  }

  void on_readable(Conn& c) {
    char cmsg[CMSG_SPACE(sizeof(timespec))];
    iovec iov{buffer_, sizeof buffer_};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg;
    msg.msg_controllen = sizeof cmsg;
    ssize_t n = recvmsg(c.fd, &msg, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n < 0) return fail(c, fmt::format("recv: {}", strerror(errno)));
    if (c.phase == Phase::kIdle)
      return fail(c, n == 0 ? "closed by the server before the request"
                            : "bytes from the server before the request");
    if (n > 0) {
      c.read_ns = now_ns();
      c.arrived_ns = c.read_ns;
      c.kernel_stamp = false;
      for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_TIMESTAMPNS) continue;
        timespec ts;
        std::memcpy(&ts, CMSG_DATA(h), sizeof ts);
        c.arrived_ns = ts.tv_sec * kNsPerSecond + ts.tv_nsec - offset_ns_;
        c.kernel_stamp = true;
      }
    }
    auto state = n > 0 ? c.reader.feed({buffer_, static_cast<size_t>(n)}) : c.reader.eof();
    if (state == ResponseReader::State::kBad) return fail(c, c.reader.error());
    if (state != ResponseReader::State::kDone) return;
    set_phase(c, Phase::kAnswered);
    // Later bytes or the close are no longer of interest; the socket stays
    // open until the end so that closes do not load the server mid-run.
    if (epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr) != 0)
      internal_error("epoll_ctl DEL on a watched socket");
  }

  void fail(Conn& c, std::string why) {
    set_phase(c, Phase::kFailed);
    c.error = std::move(why);
    if (c.fd >= 0) close(c.fd);  // also leaves the epoll set
    c.fd = -1;
  }

  const Options& opt_;
  sockaddr_storage addr_;
  socklen_t addr_len_;
  std::vector<Conn> conns_;
  std::string request_;
  int epoll_ = -1;
  size_t count_[kPhases] = {};  // connections in each phase
  size_t connected_ = 0;        // ever reached kIdle
  int64_t start_ns_ = 0, connected_ns_ = 0, first_send_ns_ = 0, last_send_ns_ = 0;
  const int64_t offset_ns_ = realtime_offset_ns();
  char buffer_[64 * 1024];
};

// Nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

constexpr double kPercentiles[] = {50, 90, 99, 99.9};

// What the run showed, and whether it passed.
struct Summary {
  size_t total = 0, answered = 0, errors = 0, kernel_stamps = 0;
  std::map<std::string, size_t> reasons;          // error text -> connections
  std::vector<int64_t> latencies;                 // answers with the expected status, sorted
  std::vector<int64_t> read_lags;                 // this process's delay in reading them, sorted
  size_t early = 0;                               // answers earlier than --min-ms
  std::vector<std::pair<double, double>> within;  // (ms, percent of all connections)
  Rss rss;
  double idle_per_conn = NAN, waiting_per_conn = NAN;  // bytes
  std::vector<std::pair<std::string, bool>> checks;    // (what, held)
  bool pass = true;
};

Summary summarize(const Options& opt, const Probe& probe, const Rss& rss) {
  Summary s;
  s.total = probe.conns().size();
  for (const Conn& c : probe.conns()) {
    if (c.phase == Phase::kFailed) {
      ++s.reasons[c.error];
    } else if (c.phase != Phase::kAnswered) {
      internal_error("a connection neither answered nor failed at the end");
    } else if (c.reader.status() != opt.expect_status) {
      ++s.reasons[fmt::format("status {} instead of {}", c.reader.status(), opt.expect_status)];
    } else {
      s.latencies.push_back(c.arrived_ns - c.sent_ns);
      if (c.kernel_stamp) s.read_lags.push_back(c.read_ns - c.arrived_ns);
    }
  }
  std::sort(s.latencies.begin(), s.latencies.end());
  std::sort(s.read_lags.begin(), s.read_lags.end());
  s.answered = s.latencies.size();
  s.errors = s.total - s.answered;
  s.kernel_stamps = s.read_lags.size();
  s.checks.emplace_back(fmt::format("every answer arrived with status {}", opt.expect_status),
                        s.errors == 0);
  if (opt.min_ms) {
    auto first_ok = std::lower_bound(s.latencies.begin(), s.latencies.end(),
                                     std::llround(*opt.min_ms * kNsPerMs));
    s.early = static_cast<size_t>(first_ok - s.latencies.begin());
    s.checks.emplace_back(fmt::format("none earlier than {} ms", *opt.min_ms), s.early == 0);
  }
  std::vector<double> bounds = opt.within;
  for (auto [percent, bound] : opt.checks) bounds.push_back(bound);
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  auto share = [&](double bound) {
    auto end =
        std::upper_bound(s.latencies.begin(), s.latencies.end(), std::llround(bound * kNsPerMs));
    return 100.0 * static_cast<double>(end - s.latencies.begin()) / static_cast<double>(s.total);
  };
  for (double bound : bounds) s.within.emplace_back(bound, share(bound));
  for (auto [percent, bound] : opt.checks)
    s.checks.emplace_back(fmt::format("{}% within {} ms", percent, bound), share(bound) >= percent);
  s.rss = rss;
  if (rss.before >= 0 && rss.idle >= 0)
    s.idle_per_conn = static_cast<double>(rss.idle - rss.before) / static_cast<double>(s.total);
  if (rss.before >= 0 && rss.waiting >= 0)
    s.waiting_per_conn =
        static_cast<double>(rss.waiting - rss.before) / static_cast<double>(s.total);
  if (opt.rss_pid > 0)
    s.checks.emplace_back(fmt::format("VmRSS of pid {} read three times", opt.rss_pid),
                          !std::isnan(s.idle_per_conn) && !std::isnan(s.waiting_per_conn));
  if (opt.max_rss_per_waiting)
    s.checks.emplace_back(
        fmt::format("at most {} bytes of RSS per waiting connection", *opt.max_rss_per_waiting),
        s.waiting_per_conn <= *opt.max_rss_per_waiting);
  for (const auto& check : s.checks) s.pass = s.pass && check.second;
  return s;
}

void print(const Options& opt, const Probe& probe, const Summary& s) {
  fmt::print("delay_probe: GET {} on {}:{}, {} connections, spread {} s, timeout {} s\n", opt.path,
             opt.host, opt.port, s.total, opt.spread, opt.timeout);
  fmt::print("connected   {}/{} in {:.3f} ms; requests sent in {:.3f} ms\n", probe.connected(),
             s.total, ms(probe.connect_ns()), ms(probe.send_ns()));
  fmt::print("answered    {}/{} with status {}; errors {}\n", s.answered, s.total,
             opt.expect_status, s.errors);
  for (const auto& [why, n] : s.reasons) fmt::print("  error     {} x {}\n", n, why);
  if (!s.latencies.empty()) {
    fmt::print("latency ms  min {:.3f}", ms(s.latencies.front()));
    for (double p : kPercentiles) fmt::print("  p{} {:.3f}", p, ms(percentile(s.latencies, p)));
    fmt::print("  max {:.3f}\n", ms(s.latencies.back()));
  }
  if (!s.read_lags.empty())
    fmt::print("read lag ms p50 {:.3f}  p99 {:.3f}  max {:.3f} (arrival to this process's read)\n",
               ms(percentile(s.read_lags, 50)), ms(percentile(s.read_lags, 99)),
               ms(s.read_lags.back()));
  if (s.kernel_stamps < s.answered)
    fmt::print("  {} of {} answers timed at their read: no kernel arrival stamp\n",
               s.answered - s.kernel_stamps, s.answered);
  if (int64_t drift = probe.clock_drift_ns(); drift > 100'000)
    fmt::print(
        "  warning: the wall clock moved {:.3f} ms against the monotonic one during the run;"
        " arrival stamps are off by up to that\n",
        ms(drift));
  if (opt.min_ms) fmt::print("early       {} answers earlier than {} ms\n", s.early, *opt.min_ms);
  for (auto [bound, percent] : s.within)
    fmt::print("within      {} ms: {:.2f}% of all connections\n", bound, percent);
  if (opt.rss_pid > 0) {
    auto kib = [](int64_t b) {
      return b < 0 ? std::string("unread") : fmt::format("{} KiB", b / 1024);
    };
    fmt::print("RSS pid {}  before {}, idle {}, waiting {} (server fds {} -> {})\n", opt.rss_pid,
               kib(s.rss.before), kib(s.rss.idle), kib(s.rss.waiting), s.rss.fds_before,
               s.rss.fds_idle);
    fmt::print(
        "RSS added   {:.0f} bytes per idle connection, {:.0f} bytes per waiting connection\n",
        s.idle_per_conn, s.waiting_per_conn);
  }
  for (const auto& [what, held] : s.checks)
    fmt::print("check       {}: {}\n", what, held ? "ok" : "FAILED");
  fmt::print("{}\n", s.pass ? "PASS" : "FAIL");
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

// A number, or null for what was not measured.
std::string json_number(double x) {
  return std::isnan(x) ? "null" : fmt::format("{}", x);
}

std::string json(const Options& opt, const Probe& probe, const Summary& s) {
  std::string out = "{\n";
  out += fmt::format("  \"host\": {},\n  \"port\": {},\n  \"path\": {},\n", json_string(opt.host),
                     opt.port, json_string(opt.path));
  out += fmt::format("  \"connections\": {},\n  \"connected\": {},\n  \"answered\": {},\n", s.total,
                     probe.connected(), s.answered);
  out += fmt::format("  \"errors\": {},\n  \"error_reasons\": {{", s.errors);
  const char* sep = "";
  for (const auto& [why, n] : s.reasons) {
    out += fmt::format("{}{}: {}", sep, json_string(why), n);
    sep = ", ";
  }
  out += "},\n";
  out += fmt::format("  \"connect_ms\": {:.3f},\n  \"send_ms\": {:.3f},\n", ms(probe.connect_ns()),
                     ms(probe.send_ns()));
  out += "  \"latency_ms\": ";
  if (s.latencies.empty()) {
    out += "null,\n";
  } else {
    out += fmt::format("{{\"min\": {:.3f}", ms(s.latencies.front()));
    for (double p : kPercentiles)
      out += fmt::format(", \"p{}\": {:.3f}", p, ms(percentile(s.latencies, p)));
    out += fmt::format(", \"max\": {:.3f}}},\n", ms(s.latencies.back()));
  }
  out += fmt::format("  \"read_lag_ms\": {{\"p50\": {:.3f}, \"p99\": {:.3f}, \"max\": {:.3f}}},\n",
                     ms(percentile(s.read_lags, 50)), ms(percentile(s.read_lags, 99)),
                     ms(s.read_lags.empty() ? 0 : s.read_lags.back()));
  out += fmt::format("  \"kernel_stamps\": {},\n", s.kernel_stamps);
  out += fmt::format("  \"min_ms\": {},\n  \"early\": {},\n",
                     opt.min_ms ? json_number(*opt.min_ms) : "null", s.early);
  out += "  \"within_percent\": {";
  sep = "";
  for (auto [bound, percent] : s.within) {
    out += fmt::format("{}\"{}\": {:.4f}", sep, bound, percent);
    sep = ", ";
  }
  out += "},\n";
  auto bytes = [](int64_t b) { return b < 0 ? std::string("null") : fmt::format("{}", b); };
  out += fmt::format(
      "  \"rss_pid\": {},\n  \"rss_bytes\": {{\"before\": {}, \"idle\": {}, \"waiting\": {}}},\n",
      opt.rss_pid > 0 ? fmt::format("{}", opt.rss_pid) : "null", bytes(s.rss.before),
      bytes(s.rss.idle), bytes(s.rss.waiting));
  out += fmt::format(
      "  \"rss_bytes_per_idle_connection\": {},\n  \"rss_bytes_per_waiting_connection\": {},\n",
      json_number(s.idle_per_conn), json_number(s.waiting_per_conn));
  out += "  \"checks\": [";
  sep = "";
  for (const auto& [what, held] : s.checks) {
    out += fmt::format("{}{{\"check\": {}, \"ok\": {}}}", sep, json_string(what), held);
    sep = ", ";
  }
  out += fmt::format("],\n  \"pass\": {}\n}}\n", s.pass);
  return out;
}

// One line per connection, to see when the slow answers came.
std::string csv(const Options& opt, const Probe& probe) {
  std::string out = "connection,sent_ms,latency_ms,read_lag_ms,status,error\n";
  const auto& conns = probe.conns();
  for (size_t i = 0; i < conns.size(); ++i) {
    const Conn& c = conns[i];
    out += fmt::format("{},", i);
    if (c.sent_ns != 0) out += fmt::format("{:.3f}", ms(c.sent_ns - probe.first_send()));
    out += ",";
    if (c.phase == Phase::kAnswered)
      out += fmt::format("{:.3f},{:.3f},{}", ms(c.arrived_ns - c.sent_ns),
                         ms(c.read_ns - c.arrived_ns), c.reader.status());
    else
      out += ",,";
    bool wrong = c.phase == Phase::kAnswered && c.reader.status() != opt.expect_status;
    out += fmt::format(",{}\n", wrong ? "unexpected status" : c.error);
  }
  return out;
}

bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok) fmt::print(stderr, "delay_probe: cannot write {}: {}\n", path, strerror(errno));
  return ok;
}

bool is_loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family != AF_INET6) return false;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
}

// CLI11's PositiveNumber states its range with 300 digits; these say it in words.
CLI::Validator number(bool zero_allowed) {
  const char* words = zero_allowed ? "a number of 0 or more" : "a number above 0";
  return CLI::Validator(
      [zero_allowed, words](std::string& text) {
        char* end = nullptr;
        double x = std::strtod(text.c_str(), &end);
        bool ok = !text.empty() && *end == '\0' && std::isfinite(x) &&
                  (x > 0 || (zero_allowed && x == 0));
        return ok ? std::string() : fmt::format("'{}' is not {}", text, words);
      },
      "");
}

int usage_error(const std::string& what) {
  fmt::print(stderr, "delay_probe: {} (see --help)\n", what);
  return kExitUsage;
}

// The run cannot start as asked, though the flags are well formed.
int startup_error(const std::string& what) {
  fmt::print(stderr, "delay_probe: {}\n", what);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"delay_probe: N loopback connections, one request each, every answer timed",
               "delay_probe"};
  app.add_option("--host", opt.host, "Server address; loopback only")
      ->type_name("ADDRESS")
      ->capture_default_str();
  app.add_option("--port", opt.port, "Server port")
      ->type_name("PORT")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("-n,--connections", opt.connections, "Connections, one request each")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--path", opt.path, "Request path")->type_name("PATH")->capture_default_str();
  app.add_option("--spread", opt.spread, "Send the requests evenly over SECONDS (0: at once)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(number(true));
  app.add_option("--timeout", opt.timeout,
                 "Bound on the whole run, connecting included; what is missing then fails")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(number(false));
  app.add_option("--expect-status", opt.expect_status, "Status every answer must have")
      ->type_name("STATUS")
      ->capture_default_str()
      ->check(CLI::Range(200, 599));
  app.add_option("--min-ms", opt.min_ms, "No answer may arrive earlier than MS after its request")
      ->type_name("MS")
      ->check(number(true));
  app.add_option("--within", opt.within, "Print the share of answers within each MS")
      ->type_name("MS,...")
      ->delimiter(',')
      ->check(number(false));
  app.add_option("--check", opt.check_texts,
                 "At least PERCENT of all connections answered within MS, for each pair")
      ->type_name("PERCENT:MS,...")
      ->delimiter(',');
  app.add_option("--rss-pid", opt.rss_pid, "Measure this server process's VmRSS")
      ->type_name("PID")
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("--rss-wait-ms", opt.rss_wait_ms,
                 "Read the waiting RSS this long after the last request")
      ->type_name("MS")
      ->capture_default_str()
      ->check(number(true));
  app.add_option("--max-rss-per-waiting", opt.max_rss_per_waiting,
                 "Fail if RSS grew by more than BYTES per waiting connection (needs --rss-pid)")
      ->type_name("BYTES")
      ->check(number(true));
  app.add_option("--json", opt.json_path, "Also write the summary as JSON to PATH")
      ->type_name("PATH");
  app.add_option("--csv", opt.csv_path, "Also write one line per connection to PATH")
      ->type_name("PATH");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return usage_error(e.what());
  }

  for (const std::string& text : opt.check_texts) {
    double percent = 0, bound = 0;
    int used = 0;
    if (std::sscanf(text.c_str(), "%lf:%lf%n", &percent, &bound, &used) != 2 ||
        used != static_cast<int>(text.size()) || !(percent > 0 && percent <= 100) || !(bound > 0))
      return usage_error(fmt::format("--check: '{}' is not PERCENT:MS (0 < PERCENT <= 100)", text));
    opt.checks.emplace_back(percent, bound);
  }
  if (opt.path.empty() || opt.path[0] != '/' ||
      !std::all_of(opt.path.begin(), opt.path.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return usage_error("--path: must start with / and hold no spaces or control characters");
  if (opt.spread >= opt.timeout) return usage_error("--spread: must be shorter than --timeout");
  if (opt.max_rss_per_waiting && opt.rss_pid == 0)
    return usage_error("--max-rss-per-waiting: needs --rss-pid");
  if (opt.rss_pid > 0 && !rss_bytes(opt.rss_pid))
    return startup_error(fmt::format("--rss-pid: cannot read VmRSS of process {}", opt.rss_pid));

  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(opt.host.c_str(), nullptr, &hints, &found); rc != 0)
    return usage_error(fmt::format("--host: {}: {}", opt.host, gai_strerror(rc)));
  sockaddr_storage addr{};
  socklen_t addr_len = found->ai_addrlen;
  std::memcpy(&addr, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  // Load goes to this machine only.
  if (!is_loopback(reinterpret_cast<sockaddr*>(&addr)))
    return usage_error(fmt::format("--host: {} is not a loopback address", opt.host));
  auto port = htons(static_cast<uint16_t>(opt.port));
  if (addr.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = port;
  else
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = port;

  rlimit limit;
  rlim_t need = opt.connections + kSpareFds;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < need) {
    if (limit.rlim_max < need)
      return startup_error(fmt::format(
          "--connections {} needs {} descriptors; the hard limit is {} (raise it: ulimit -Hn)",
          opt.connections, need, limit.rlim_max));
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
      return startup_error(fmt::format("cannot raise the descriptor limit: {}", strerror(errno)));
  }

  Probe probe(opt, addr, addr_len);
  if (int err = probe.init(); err != 0) {
    fmt::print(stderr, "delay_probe: epoll_create1: {}\n", strerror(err));
    return kExitFail;
  }
  int64_t deadline = now_ns() + std::llround(opt.timeout * kNsPerSecond);
  Rss rss;
  if (opt.rss_pid > 0) {
    rss.fds_before = open_fds(opt.rss_pid);
    rss.before = rss_bytes(opt.rss_pid).value_or(-1);
  }
  probe.connect_all(deadline);
  if (opt.rss_pid > 0) {
    // Connected here is not yet accepted there: wait for the server's descriptors.
    probe.wait_fds(opt.rss_pid, rss.fds_before + static_cast<int>(probe.connected()), deadline);
    rss.fds_idle = open_fds(opt.rss_pid);
    rss.idle = rss_bytes(opt.rss_pid).value_or(-1);
  }
  probe.send_all(deadline);
  probe.wait_answers(deadline, &rss);

  Summary summary = summarize(opt, probe, rss);
  print(opt, probe, summary);
  std::fflush(stdout);
  if (!opt.json_path.empty() && !write_file(opt.json_path, json(opt, probe, summary)))
    return kExitFail;
  if (!opt.csv_path.empty() && !write_file(opt.csv_path, csv(opt, probe))) return kExitFail;
  return summary.pass ? kExitPass : kExitFail;
}
