// ws_load: a WebSocket load generator for one server on loopback, the load
// of scripts/bench --ws. N connections each keep K messages in flight,
// sending the next on each echo and checking every echo byte for byte; it
// counts the echoes of a measured window and its own CPU time, so that a
// run the tool itself held back can be told apart. One thread, one libuv
// loop, no allocation per message, one write per connection per loop turn:
// it must keep a one-CPU C++ server busy. It shares no code with the
// server under common/. How to run and read it: tests/tools/README.md.
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "ws_load.h"
#include "ws_load_report.h"
#include "ws_load_run.h"

namespace ws_load {
namespace {

// Bounds on what one run may ask for: far above what a bench uses, low
// enough that a typo does not exhaust the machine.
constexpr size_t kMaxConnections = 100'000;
constexpr size_t kMaxInFlight = 4096;
// Payload bytes outstanding at once, over all connections; each is held
// twice at worst, framed and being written.
constexpr double kMaxOutstanding = 1024.0 * 1024 * 1024;

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
                  (x > 0 || (zero_allowed && x == 0)) && x < 1e6;
        return ok ? std::string() : fmt::format("'{}' is not {}, below a million", text, words);
      },
      "");
}

int usage_error(const std::string& what) {
  fmt::print(stderr, "ws_load: {} (see --help)\n", what);
  return kExitUsage;
}

// The run cannot start as asked, though the flags are well formed.
int startup_error(const std::string& what) {
  fmt::print(stderr, "ws_load: {}\n", what);
  return kExitUsage;
}

void add_options(CLI::App& app, Options& opt) {
  app.add_option("--host", opt.host, "Server address; loopback only")
      ->type_name("ADDRESS")
      ->capture_default_str();
  app.add_option("--port", opt.port, "Server port")
      ->type_name("PORT")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--path", opt.path, "Request path of the upgrade")
      ->type_name("PATH")
      ->capture_default_str();
  app.add_option("-n,--connections", opt.connections, "WebSocket connections")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxConnections));
  app.add_option("--in-flight", opt.in_flight, "Messages outstanding on each connection")
      ->type_name("K")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxInFlight));
  app.add_option("--size", opt.size, "Payload bytes of each message")
      ->type_name("BYTES")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, kMaxSize));
  app.add_flag("--binary", opt.binary, "Binary messages (default: text, ASCII)");
  app.add_option("--seconds", opt.seconds, "The measured window")
      ->type_name("S")
      ->capture_default_str()
      ->check(number(false));
  app.add_option("--warmup", opt.warmup, "Load before the window, not counted")
      ->type_name("S")
      ->capture_default_str()
      ->check(number(true));
  app.add_flag("--tls", opt.tls, "wss: TLS 1.2 or 1.3, nothing verified, ALPN http/1.1");
  app.add_flag("--deflate", opt.deflate,
               "Offer permessage-deflate; compress and inflate if the server accepts");
  app.add_option("--json", opt.json_path, "Also write the result as JSON to FILE")
      ->type_name("FILE");
  app.add_flag("--verify,!--no-verify", opt.verify,
               "Check every echo byte for byte against what was sent (default: on)");
  app.add_option("--timeout", opt.timeout, "Bound on connecting and every handshake, together")
      ->type_name("S")
      ->capture_default_str()
      ->check(number(false));
}

// The options of `argv` in `opt`; an exit status if the run must not go on
// (--help, or a usage error said on stderr).
std::optional<int> read_options(int argc, char** argv, Options& opt) {
  CLI::App app{"ws_load: N WebSocket connections on loopback, K echoes in flight on each",
               "ws_load"};
  add_options(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return usage_error(e.what());
  }
  if (opt.path.empty() || opt.path[0] != '/' ||
      !std::all_of(opt.path.begin(), opt.path.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return usage_error("--path: must start with / and hold no spaces or control characters");
  double outstanding = static_cast<double>(opt.connections) * static_cast<double>(opt.in_flight) *
                       static_cast<double>(opt.size);
  if (outstanding > kMaxOutstanding)
    return usage_error("--connections x --in-flight x --size: over 1 GiB in flight");
  return std::nullopt;
}

// The loopback address of --host and --port in `addr`, and the Host header
// that names it; an exit status if there is none.
std::optional<int> resolve(Options& opt, sockaddr_storage& addr) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(opt.host.c_str(), nullptr, &hints, &found); rc != 0)
    return usage_error(fmt::format("--host: {}: {}", opt.host, gai_strerror(rc)));
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
  bool ipv6_literal = opt.host.find(':') != std::string::npos;
  opt.host_header = ipv6_literal ? fmt::format("[{}]:{}", opt.host, opt.port)
                                 : fmt::format("{}:{}", opt.host, opt.port);
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
}  // namespace ws_load

int main(int argc, char** argv) {
  using namespace ws_load;
  Options opt;
  if (std::optional<int> exit = read_options(argc, argv, opt)) return *exit;
  sockaddr_storage addr{};
  if (std::optional<int> exit = resolve(opt, addr)) return *exit;
  if (std::optional<int> exit = raise_descriptor_limit(opt)) return *exit;
  // Opened now, so that an unwritable path stops the run before it starts.
  std::FILE* json_file = nullptr;
  if (!opt.json_path.empty() && (json_file = std::fopen(opt.json_path.c_str(), "w")) == nullptr)
    return startup_error(fmt::format("--json: cannot open {}: {}", opt.json_path, strerror(errno)));

  Result result;
  {
    Run run(opt, reinterpret_cast<const sockaddr*>(&addr));
    if (std::string why = run.init(); !why.empty()) {
      if (json_file != nullptr) std::fclose(json_file);
      return startup_error(why);
    }
    result = run.run();
  }
  print_summary(opt, result);
  std::fflush(stdout);
  print_failures(result);
  bool ok = result.errors == 0 && result.handshake_failures == 0;
  if (json_file != nullptr && !write_json(json_file, opt.json_path, json(opt, result))) ok = false;
  return ok ? kExitPass : kExitFail;
}
