#include "server/startup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/cpu_quota.h"
#include "base/file.h"
#include "net/address.h"
#include "server/environment.h"
#include "server/run.h"

namespace hello {

namespace {

void set_port(struct sockaddr_storage* ss, int port) {
  if (ss->ss_family == AF_INET6)
    reinterpret_cast<struct sockaddr_in6*>(ss)->sin6_port = htons(static_cast<uint16_t>(port));
  else
    reinterpret_cast<struct sockaddr_in*>(ss)->sin_port = htons(static_cast<uint16_t>(port));
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

// --admin into `addr`, and the loop metrics its /metrics reports; false
// after the error line.
bool resolve_admin(Options& opt, struct sockaddr_storage* addr) {
  if (opt.admin.empty()) return true;
  std::string host;
  int port = 0;
  if (!split_host_port(opt.admin, host, port) || !resolve(host, port, addr)) {
    usage_error(opt, fmt::format("{}: bad address \"{}\": HOST:PORT expected, such as "
                                 "127.0.0.1:9100",
                                 given_as(opt, "--admin"), opt.admin));
    return false;
  }
  opt.worker.loop_metrics = true;
  return true;
}

// --access-log: the writer thread, to stdout or appending to the file.
int open_access_log(const Options& opt, Process& process) {
  if (!opt.access_log) return 0;
  int fd = 1;
  if (!opt.access_log_path.empty()) {
    fd = open(opt.access_log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      fmt::print(stderr, "{}: {} {}: cannot open it: {}\n", opt.name, given_as(opt, "--access-log"),
                 opt.access_log_path, strerror(errno));
      return kExitUsage;
    }
  }
  LogFormat format = opt.access_log_format == "json" ? LogFormat::json : LogFormat::clf;
  process.log_writer = std::make_unique<LogWriter>(fd, fd != 1, opt.workers, format);
  return 0;
}

// --stats-json: a path the exit summary can be written to, checked now
// rather than found wrong when the run is over. The file itself is written
// at exit.
int check_stats_json(const Options& opt) {
  if (opt.stats_json.empty()) return 0;
  std::string dir = opt.stats_json.substr(0, opt.stats_json.rfind('/') + 1);
  bool exists = access(opt.stats_json.c_str(), F_OK) == 0;
  if (exists ? access(opt.stats_json.c_str(), W_OK) == 0
             : access(dir.empty() ? "." : dir.c_str(), W_OK | X_OK) == 0)
    return 0;
  fmt::print(stderr, "{}: {} {}: cannot write it: {}\n", opt.name, given_as(opt, "--stats-json"),
             opt.stats_json, strerror(errno));
  return kExitUsage;
}

// --tls: a context per worker, their certificate given or made once for
// localhost, the loopback addresses and the host; written out if asked.
int make_tls(const Persona& persona, Options& opt, Process& process) {
  if (!opt.tls.enabled) return 0;
  std::string error;
  opt.tls.h2 = opt.worker.h2;
  process.tls =
      TlsContext::create(opt.tls, persona.alpn, {"localhost", "127.0.0.1", "::1", opt.host}, error,
                         static_cast<size_t>(opt.workers));
  if (process.tls && !opt.tls.write_cert.empty() &&
      !write_file(opt.tls.write_cert, process.tls->certificate_pem()))
    error = fmt::format("--tls-write-cert {}: {}", opt.tls.write_cert, strerror(errno));
  if (!error.empty()) {
    // The context's errors start with the flag they are about ("--tls-cert
    // PATH: ..."): said as the user gave it, the variable if it was one.
    if (error.rfind("--", 0) == 0) {
      size_t end = error.find(' ');
      error = given_as(opt, error.substr(0, end)) + error.substr(end);
    }
    fmt::print(stderr, "{}: {}\n", opt.name, error);
    return kExitUsage;
  }
  opt.worker.tls = process.tls.get();
  return 0;
}

// Makes the workers and binds each to `addr`; with port 0 the first one's
// port is everyone's, and `addr` takes it.
int listen_workers(const Persona& persona, Options& opt, Process& process,
                   struct sockaddr_storage* addr) {
  const struct sockaddr* sa = reinterpret_cast<const struct sockaddr*>(addr);
  std::vector<std::unique_ptr<Worker>>& pool = process.workers;
  // The one clock of every worker's stalls, read once, just before the
  // workers are made and start listening.
  opt.worker.stall_epoch_ns = uv_hrtime();
  int rc = opt.port != 0 ? probe_port(sa) : 0;
  for (int i = 0; rc == 0 && i < opt.workers; ++i) {
    pool.push_back(
        std::make_unique<Worker>(persona, opt.table, opt.worker, i, process.log_writer.get()));
    if ((rc = pool.back()->init()) != 0) {
      fmt::print(stderr, "cannot start worker {}: {}\n", i, uv_strerror(rc));
      return kExitStartup;
    }
    rc = pool.back()->listen(sa);
    if (rc == 0 && i == 0) set_port(addr, pool[0]->port());
  }
  if (rc != 0) {
    // The one failure a user meets every day: say how to get past it.
    fmt::print(stderr, "{}: cannot listen on {}: {}{}\n", opt.name, address_text(sa, opt.port),
               uv_strerror(rc),
               rc == UV_EADDRINUSE
                   ? fmt::format(" (choose another with {}, or -p 0 for any free port)",
                                 given_as(opt, "--port"))
                   : "");
    return kExitStartup;
  }
  return 0;
}

// The control loop, and the admin port on it with --admin.
int start_control(const Persona& persona, const Options& opt, Control& control,
                  const struct sockaddr* admin_addr) {
  int rc = control.init();
  if (rc != 0) {
    fmt::print(stderr, "cannot start: {}\n", uv_strerror(rc));
    return kExitStartup;
  }
  if (!opt.admin.empty() && (rc = control.start_admin(admin_addr, persona.name, kVersion,
                                                      opt.worker.limits.max_header_bytes,
                                                      opt.worker.header_timeout_ms)) != 0) {
    fmt::print(stderr, "{}: cannot listen on {} ({}): {}\n", opt.name, opt.admin,
               given_as(opt, "--admin"), uv_strerror(rc));
    return kExitStartup;
  }
  return 0;
}

// What the port speaks, for the listening line: "HTTP/1.1", "HTTP/1.1, h2c"
// or "HTTP/1.1, h2 by ALPN".
const char* protocols(const Options& opt) {
  if (!opt.worker.h2) return "HTTP/1.1";
  return opt.tls.enabled ? "HTTP/1.1, h2 by ALPN" : "HTTP/1.1, h2c";
}

}  // namespace

int start_up(const Persona& persona, Options& opt, Process& process) {
  struct sockaddr_storage admin_addr;
  if (!resolve_admin(opt, &admin_addr)) return kExitUsage;
  struct sockaddr_storage addr;
  if (!resolve(opt.host, opt.port, &addr)) {
    usage_error(opt, fmt::format("{}: cannot resolve '{}': an address such as 0.0.0.0 or ::1, "
                                 "or a host name, expected",
                                 given_as(opt, "--host"), opt.host));
    return kExitUsage;
  }
  std::vector<int> cpus = allowed_cpus();
  std::string fast;  // --fast: where the worker count came from, for the listening line
  if (opt.fast) {
    opt.workers = static_cast<int>(cpus.size());
    CpuQuota quota = cgroup_cpu_quota();
    if (quota.cpus > 0 && quota.cpus < opt.workers) {
      fast = fmt::format(", --fast: {} of the {} CPUs it may run on, by the {}", quota.cpus,
                         cpus.size(), quota.why);
      opt.workers = quota.cpus;
    } else {
      fast = fmt::format(", --fast: the {} CPU{} it may run on", cpus.size(),
                         cpus.size() == 1 ? "" : "s");
    }
  }
  if (int rc = make_tls(persona, opt, process); rc != 0) return rc;
  if (int rc = check_stats_json(opt); rc != 0) return rc;
  if (int rc = open_access_log(opt, process); rc != 0) return rc;
  // A client that resets mid-response must cost us a failed write, not the process.
  signal(SIGPIPE, SIG_IGN);
  if (int rc = listen_workers(persona, opt, process, &addr); rc != 0) return rc;
  const struct sockaddr* admin_sa = reinterpret_cast<const struct sockaddr*>(&admin_addr);
  if (int rc = start_control(persona, opt, process.control, admin_sa); rc != 0) return rc;
  std::vector<std::unique_ptr<Worker>>& pool = process.workers;
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i]->start(opt.pin ? cpus[i % cpus.size()] : -1, process.control.done());
  const struct sockaddr* sa = reinterpret_cast<const struct sockaddr*>(&addr);
  std::string tls;
  if (process.tls)
    tls = fmt::format("; TLS, certificate SHA-256 {}{}", process.tls->fingerprint(),
                      process.tls->made() ? " made at start" : "");
  fmt::print(stderr, "listening on {}://{} ({} worker{}{}; {}{})\n", process.tls ? "https" : "http",
             address_text(sa, pool[0]->port()), opt.workers, opt.workers == 1 ? "" : "s", fast,
             protocols(opt), tls);
  if (!opt.admin.empty())
    fmt::print(stderr, "admin on http://{}\n",
               address_text(admin_sa, process.control.admin_port()));
  fflush(stderr);
  return 0;
}

}  // namespace hello
