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

#include "delay_probe_probe.h"
#include "delay_probe_report.h"

namespace delay_probe {
namespace {

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

// The options of `argv` in `opt`; an exit status if the run must not go on
// (--help, or a usage error said on stderr).
std::optional<int> read_options(int argc, char** argv, Options& opt) {
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
  return std::nullopt;
}

// The loopback address of --host and --port in `addr`; an exit status if
// it is none.
std::optional<int> resolve(const Options& opt, sockaddr_storage& addr, socklen_t& addr_len) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(opt.host.c_str(), nullptr, &hints, &found); rc != 0)
    return usage_error(fmt::format("--host: {}: {}", opt.host, gai_strerror(rc)));
  addr_len = found->ai_addrlen;
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
  return std::nullopt;
}

// Raises the descriptor limit to what --connections needs; an exit status
// if it cannot.
std::optional<int> raise_descriptor_limit(const Options& opt) {
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
  return std::nullopt;
}

}  // namespace
}  // namespace delay_probe

int main(int argc, char** argv) {
  using namespace delay_probe;
  Options opt;
  if (std::optional<int> exit = read_options(argc, argv, opt)) return *exit;
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  if (std::optional<int> exit = resolve(opt, addr, addr_len)) return *exit;
  if (std::optional<int> exit = raise_descriptor_limit(opt)) return *exit;

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
