// The process around the workers: the listening address, the worker
// threads, signals, live stats and the exit summary; the flags are in
// options.cc. The main thread runs a small control loop of its own; workers
// never wait on it.
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/check.h"
#include "observe/access_log.h"
#include "observe/stats_report.h"
#include "persona/persona.h"
#include "server/control.h"
#include "server/options.h"
#include "server/run.h"
#include "server/worker.h"

namespace hello {

using namespace std::chrono_literals;

namespace {

std::string address_text(const struct sockaddr* sa, int port) {
  char ip[INET6_ADDRSTRLEN] = "";
  if (sa->sa_family == AF_INET6) {
    HELLO_CHECK_UV(uv_ip6_name(reinterpret_cast<const struct sockaddr_in6*>(sa), ip, sizeof ip));
    return fmt::format("[{}]:{}", ip, port);
  }
  HELLO_CHECK_UV(uv_ip4_name(reinterpret_cast<const struct sockaddr_in*>(sa), ip, sizeof ip));
  return fmt::format("{}:{}", ip, port);
}

void set_port(struct sockaddr_storage* ss, int port) {
  if (ss->ss_family == AF_INET6)
    reinterpret_cast<struct sockaddr_in6*>(ss)->sin6_port = htons(static_cast<uint16_t>(port));
  else
    reinterpret_cast<struct sockaddr_in*>(ss)->sin_port = htons(static_cast<uint16_t>(port));
}

// Resolves a numeric address or a host name such as "localhost".
bool resolve(const std::string& host, int port, struct sockaddr_storage* out) {
  struct addrinfo hints {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  struct addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) return false;
  memcpy(out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

// With SO_REUSEPORT a second server of ours would silently share the port
// with the first. A plain bind first makes "address already in use" an
// error again, as it is for the real frameworks.
int probe_port(const struct sockaddr* addr) {
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return uv_translate_sys_error(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len =
      addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  int rc = bind(fd, addr, len) == 0 ? 0 : uv_translate_sys_error(errno);
  ::close(fd);
  return rc;
}

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// "HOST:PORT" or "[IPv6]:PORT" into a host and a port; false if malformed.
bool split_host_port(const std::string& text, std::string& host, int& port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']') return false;
    host = host.substr(1, host.size() - 2);
  }
  std::string digits = text.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  port = std::stoi(digits);
  return port <= 65535;
}

bool write_file(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  return fclose(f) == 0 && ok;
}

}  // namespace

int run(const Persona& persona, int argc, char** argv) {
  Options opt;
  if (std::optional<int> exit = parse_options(persona, argc, argv, opt)) return *exit;

  struct sockaddr_storage admin_addr;
  if (!opt.admin.empty()) {
    std::string admin_host;
    int admin_port = 0;
    if (!split_host_port(opt.admin, admin_host, admin_port) ||
        !resolve(admin_host, admin_port, &admin_addr)) {
      usage_error(opt, fmt::format("--admin: bad address \"{}\": HOST:PORT expected, such as "
                                   "127.0.0.1:9100",
                                   opt.admin));
      return kExitUsage;
    }
    opt.worker.loop_metrics = true;
  }

  struct sockaddr_storage addr;
  if (!resolve(opt.host, opt.port, &addr)) {
    usage_error(opt, fmt::format("cannot resolve host '{}'", opt.host));
    return kExitUsage;
  }
  const struct sockaddr* sa = reinterpret_cast<const struct sockaddr*>(&addr);

  std::vector<int> cpus = allowed_cpus();
  if (opt.fast) opt.workers = static_cast<int>(cpus.size());

  std::unique_ptr<LogWriter> log_writer;
  if (opt.access_log) {
    int fd = 1;
    if (!opt.access_log_path.empty()) {
      fd = open(opt.access_log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        fmt::print(stderr, "cannot open access log {}: {}\n", opt.access_log_path, strerror(errno));
        return kExitStartup;
      }
    }
    log_writer = std::make_unique<LogWriter>(fd, fd != 1, opt.workers);
  }

  // A client that resets mid-response must cost us a failed write, not the process.
  signal(SIGPIPE, SIG_IGN);

  // The one clock of every worker's stalls, read once, just before the
  // workers are made and start listening.
  opt.worker.stall_epoch_ns = uv_hrtime();
  std::vector<std::unique_ptr<Worker>> pool;
  int rc = opt.port != 0 ? probe_port(sa) : 0;
  for (int i = 0; rc == 0 && i < opt.workers; ++i) {
    pool.push_back(std::make_unique<Worker>(persona, opt.table, opt.worker, i, log_writer.get()));
    if ((rc = pool.back()->init()) != 0) {
      fmt::print(stderr, "cannot start worker {}: {}\n", i, uv_strerror(rc));
      return kExitStartup;
    }
    rc = pool.back()->listen(sa);
    // With -p 0 the first worker's port is everyone's.
    if (rc == 0 && i == 0) set_port(&addr, pool[0]->port());
  }
  if (rc != 0) {
    fmt::print(stderr, "cannot listen on {}: {}\n", address_text(sa, opt.port), uv_strerror(rc));
    return kExitStartup;
  }

  Control control(pool, opt.stats_interval, opt.shutdown_timeout);
  if ((rc = control.init()) != 0) {
    fmt::print(stderr, "cannot start: {}\n", uv_strerror(rc));
    return kExitStartup;
  }
  if (!opt.admin.empty()) {
    const struct sockaddr* admin_sa = reinterpret_cast<const struct sockaddr*>(&admin_addr);
    if ((rc = control.start_admin(admin_sa, persona.name, kVersion,
                                  opt.worker.limits.max_header_bytes,
                                  opt.worker.header_timeout_ms)) != 0) {
      fmt::print(stderr, "cannot listen on {} (--admin): {}\n", opt.admin, uv_strerror(rc));
      return kExitStartup;
    }
  }
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i]->start(opt.pin ? cpus[i % cpus.size()] : -1, control.done());
  fmt::print(stderr, "listening on http://{} ({} worker{})\n", address_text(sa, pool[0]->port()),
             opt.workers, opt.workers == 1 ? "" : "s");
  if (!opt.admin.empty()) {
    const struct sockaddr* admin_sa = reinterpret_cast<const struct sockaddr*>(&admin_addr);
    fmt::print(stderr, "admin on http://{}\n", address_text(admin_sa, control.admin_port()));
  }
  fflush(stderr);
  control.run();

  for (auto& w : pool) w->join();
  std::vector<StatsSnapshot> totals = control.snapshots();
  std::vector<LatencySnapshot> service_times = control.service_times();
  if (LogWriter* writer = log_writer.get()) {
    // A consumer that stopped reading must not hold the exit past the
    // deadline: the writer is then left behind, blocked, and the process
    // ends without it.
    auto until = std::max(control.deadline(), std::chrono::steady_clock::now() + 500ms);
    bool finished = writer->stop(until);
    for (size_t i = 0; i < totals.size(); ++i)
      totals[i].log_lines_dropped += writer->lines_lost(static_cast<int>(i));
    if (!finished) {
      fmt::print(stderr, "access log: its reader stopped reading; exiting without waiting\n");
      (void)log_writer.release();  // still in use by the blocked thread
    }
  }
  fmt::print(stderr, "{}", summary_text(totals, &service_times));
  if (!opt.stats_json.empty() &&
      !write_file(opt.stats_json, summary_json(totals, &service_times))) {
    fmt::print(stderr, "cannot write {}: {}\n", opt.stats_json, strerror(errno));
    return kExitStartup;
  }
  return 0;
}

}  // namespace hello
