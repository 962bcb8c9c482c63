// The process around the workers: flags, the listening address, the worker
// threads, signals, live stats and the exit summary. The main thread runs a
// small control loop of its own; workers never wait on it.
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/duration.h"
#include "observe/access_log.h"
#include "observe/stats_report.h"
#include "persona/persona.h"
#include "server/control.h"
#include "server/run.h"
#include "server/worker.h"
#include "shaping/shape.h"
#include "shaping/stall.h"

#ifndef HELLO_VERSION
#define HELLO_VERSION "0.0.0"
#endif

namespace hello {

using namespace std::chrono_literals;

namespace {

struct Options {
  std::string host = "0.0.0.0";
  int port = 0;
  TableOptions table;
  int workers = 1;
  bool fast = false;
  bool pin = false;
  bool access_log = false;
  std::string access_log_path;  // empty: stdout
  std::string routes_path;      // --routes FILE.json, or empty
  std::vector<FileRoute> routes;
  double stats_interval = 0;
  std::string stats_json;
  double shutdown_timeout = 10;
  WorkerOptions worker;
  double header_timeout = 10;
  int keep_alive_timeout = -1;  // the persona's
  double send_timeout = 30;
  std::string max_delay = "60s";    // --max-delay, a duration
  uint64_t max_size = 16 << 20;     // --max-size
  std::vector<uint64_t> seed;       // --seed, if given
  std::vector<std::string> stalls;  // --stall SPEC, each as given
  std::string admin;                // --admin HOST:PORT, or empty
  bool no_defer_accept = false;     // --no-defer-accept
};

// Usage errors exit 2, like getopt-based tools; startup failures exit 1.
constexpr int kExitUsage = 2;
constexpr int kExitStartup = 1;

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
  std::string name = fmt::format("hello-{}", persona.name);
  Options opt;
  opt.port = persona.port;

  CLI::App app{fmt::format("{}: {}", name, persona.summary), name};
  app.add_option("-H,--host", opt.host, "Address to listen on")->capture_default_str();
  app.add_option("-p,--port", opt.port, "Port to listen on; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_flag("--json", opt.table.json,
               "Answer / with the persona's JSON body instead of its text");
  app.add_option("--routes", opt.routes_path,
                 "Also answer the routes of this JSON file (docs/routes.md); a route of the "
                 "file replaces the persona's with the same method and path")
      ->type_name("FILE.json");
  app.add_flag("--keep-alive", opt.table.keep_alive,
               "Keep connections alive per HTTP rules even where the framework closes them");
  auto* workers = app.add_option("-w,--workers", opt.workers,
                                 "Worker threads, one loop and one "
                                 "SO_REUSEPORT listener each")
                      ->capture_default_str()
                      ->check(CLI::Range(1, 1024));
  app.add_flag("--fast", opt.fast, "As many workers as CPUs this process may run on")
      ->excludes(workers);
  app.add_flag("--pin", opt.pin, "Pin worker i to the i-th CPU this process may run on");
  auto* log = app.add_option("--access-log", opt.access_log_path,
                             "Common Log Format, one line per response: to stdout, or with "
                             "=PATH appended to PATH (off by default)")
                  ->expected(0, 1);
  app.add_option("--stats-interval", opt.stats_interval,
                 "Print requests per second and open connections to stderr every SECONDS")
      ->check(CLI::PositiveNumber);
  app.add_option("--stats-json", opt.stats_json, "Write the exit summary as JSON to PATH");
  app.add_option("--shutdown-timeout", opt.shutdown_timeout,
                 "On SIGINT/SIGTERM, force-close what remains after SECONDS")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-header-bytes", opt.worker.limits.max_header_bytes,
                 "Request line plus headers; beyond it 431 (414 for the request line alone)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{256}, size_t{1} << 24));
  app.add_option("--max-body-bytes", opt.worker.limits.max_body_bytes,
                 "Request body (read and discarded); beyond it 413")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{1} << 40));
  app.add_option("--header-timeout", opt.header_timeout,
                 "Seconds from a request's first byte to its last; then 408 and close")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  opt.keep_alive_timeout = persona.keep_alive_timeout;
  app.add_option("--keepalive-timeout", opt.keep_alive_timeout,
                 "Seconds an idle keep-alive connection stays open (the framework's default)")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--max-delay", opt.max_delay,
                 "The longest a route's \"delay\" or a shaped delay or drip may be (us, ms or s)")
      ->capture_default_str()
      ->type_name("DURATION");
  app.add_flag("--shape", opt.table.shape,
               "Shape answers by the request: delay, status, size, header, close, reset and drip "
               "in the query string or an X-Hello-Shape header, in fortio's syntax "
               "(docs/shaping.md); off, a query changes nothing");
  app.add_option("--shape-default", opt.table.shape_default,
                 "The shape of every request that carries none, e.g. "
                 "'delay=1ms:50,10ms:5&status=503:1'; implies --shape")
      ->type_name("PARAMS");
  app.add_option("--seed", opt.seed,
                 "Seed the shaping decisions (worker i uses N + i): the same requests in the "
                 "same order get the same decisions; random by default")
      ->type_name("N")
      ->expected(1)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-size", opt.max_size, "The largest body a shaped 'size' may ask for")
      ->capture_default_str()
      ->type_name("BYTES")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  app.add_option("--stall", opt.stalls,
                 "Freeze every worker at once, like a stop-the-world GC pause: the loop does\n"
                 "nothing and requests queue up on every connection. DURATION/EVERY (e.g.\n"
                 "200ms/5s): for DURATION every EVERY, the first EVERY after start;\n"
                 "DURATION@AT (e.g. 500ms@3s): once, AT after start. DURATION up to 60s;\n"
                 "repeatable. Shows whether a load tester corrects for coordinated omission\n"
                 "(as pressing ^Z on the server would)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  app.add_option("--send-timeout", opt.send_timeout,
                 "Seconds a client may leave our output unread before it is closed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-connections", opt.worker.max_connections,
                 "Open connections per worker; beyond it new ones are closed at once")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 24));
  app.add_flag("--no-defer-accept", opt.no_defer_accept,
               "Accept a connection at its handshake, not at its first bytes (TCP_DEFER_ACCEPT, "
               "on by default: a silent client is accepted about a second late)");
  app.add_option("--admin", opt.admin,
                 "Serve /metrics (Prometheus), /healthz, /readyz and /stats on this address, "
                 "never the persona's port (docs/observability.md); keep it on loopback or a "
                 "private network")
      ->type_name("HOST:PORT");
  app.set_version_flag("-V,--version", fmt::format("{} {}", name, HELLO_VERSION));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "{}: {} (usage: {} [OPTIONS], see --help)\n", name, e.what(), name);
    return kExitUsage;
  }
  opt.access_log = log->count() > 0;
  if (!opt.routes_path.empty() && persona.no_parsing) {
    fmt::print(stderr, "{}: --routes: {} parses nothing and answers every request alike\n", name,
               name);
    return kExitUsage;
  }
  uint64_t max_delay_us = 0;
  std::string why;
  if (!parse_duration(opt.max_delay, max_delay_us, why)) {
    fmt::print(stderr,
               "{}: --max-delay: bad duration \"{}\": {} (usage: {} [OPTIONS], see --help)\n", name,
               opt.max_delay, why, name);
    return kExitUsage;
  }
  std::vector<std::string> reserved = reserved_headers(persona);
  opt.table.shape_limits = {max_delay_us, opt.max_size, &reserved};
  bool shaping = opt.table.shape || !opt.table.shape_default.empty();
  if (shaping && persona.no_parsing) {
    fmt::print(stderr, "{}: --shape: {} parses nothing and answers every request alike\n", name,
               name);
    return kExitUsage;
  }
  if (!opt.table.shape_default.empty()) {
    std::string text = opt.table.shape_default;  // parsing decodes in place
    Shape shape;
    ShapeError error;
    if (!parse_shape(text.data(), text.size(), opt.table.shape_limits, shape, error)) {
      fmt::print(stderr, "{}: --shape-default: {} (usage: {} [OPTIONS], see --help)\n", name,
                 error.view(), name);
      return kExitUsage;
    }
  }
  opt.worker.seed = opt.seed.empty() ? std::random_device{}() : opt.seed[0];
  for (const std::string& spec : opt.stalls) {
    Stall stall;
    if (!parse_stall(spec, stall, why)) {
      fmt::print(stderr, "{}: --stall: bad value \"{}\": {} (usage: {} [OPTIONS], see --help)\n",
                 name, spec, why, name);
      return kExitUsage;
    }
    opt.worker.stalls.push_back(stall);
  }
  if (!opt.routes_path.empty()) {
    // A "body" route without a Content-Type gets the persona's text type.
    std::string_view text_type =
        persona.routes.empty() ? "text/plain; charset=utf-8" : persona.routes[0].body.content_type;
    std::string error;
    if (!load_routes(opt.routes_path, text_type, persona.head, opt.routes, error,
                     opt.table.shape_limits)) {
      fmt::print(stderr, "{}: {}\n", name, error);
      return kExitUsage;
    }
    opt.table.routes = &opt.routes;
  }
  opt.table.keep_alive_timeout = opt.keep_alive_timeout;
  opt.worker.defer_accept = !opt.no_defer_accept;
  opt.worker.header_timeout_ms = seconds_to_ms(opt.header_timeout);
  opt.worker.keep_alive_timeout_ms = seconds_to_ms(opt.keep_alive_timeout);
  opt.worker.send_timeout_ms = seconds_to_ms(opt.send_timeout);

  struct sockaddr_storage admin_addr;
  if (!opt.admin.empty()) {
    std::string admin_host;
    int admin_port = 0;
    if (!split_host_port(opt.admin, admin_host, admin_port) ||
        !resolve(admin_host, admin_port, &admin_addr)) {
      fmt::print(stderr,
                 "{}: --admin: bad address \"{}\": HOST:PORT expected, such as 127.0.0.1:9100 "
                 "(usage: {} [OPTIONS], see --help)\n",
                 name, opt.admin, name);
      return kExitUsage;
    }
    opt.worker.loop_metrics = true;
  }

  struct sockaddr_storage addr;
  if (!resolve(opt.host, opt.port, &addr)) {
    fmt::print(stderr, "{}: cannot resolve host '{}' (usage: {} [OPTIONS], see --help)\n", name,
               opt.host, name);
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
    if ((rc = control.start_admin(admin_sa, persona.name, HELLO_VERSION,
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
