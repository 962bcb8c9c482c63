// delay_probe's client (delay_probe.cc): the N connections, their one epoll
// set, the reader of each answer and the phases of a connection's life.
#pragma once

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

namespace delay_probe {

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

[[noreturn]] inline void internal_error(const char* what) {
  fmt::print(stderr, "delay_probe: internal error: {}\n", what);
  std::abort();
}

// Unlike assert(), stays in every build.
inline void expect(bool ok, const char* what) {
  if (!ok) internal_error(what);
}

inline int64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * kNsPerSecond + ts.tv_nsec;
}

// CLOCK_REALTIME minus CLOCK_MONOTONIC: the kernel stamps received packets
// with the former. Read between two monotonic reads, the closest of a few
// tries, so the error is half a clock read (well under a microsecond).
inline int64_t realtime_offset_ns() {
  int64_t best = 0, best_gap = INT64_MAX;
  for (int i = 0; i < 8; ++i) {
    int64_t a = now_ns(), r = now_ns(CLOCK_REALTIME), b = now_ns();
    if (b - a < best_gap) best_gap = b - a, best = r - (a + (b - a) / 2);
  }
  return best;
}

inline double ms(int64_t ns) {
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
inline std::optional<int64_t> rss_bytes(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  return std::nullopt;
}

// Open descriptors of a process, or -1.
inline int open_fds(int pid) {
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

}  // namespace delay_probe
