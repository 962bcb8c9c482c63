// The flags in the order --help lists them, then the checks CLI11 cannot
// make, in the order their errors are reported.
#include "server/options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <random>

#include "base/duration.h"
#include "net/probe.h"
#include "server/environment.h"
#include "server/flag_value.h"
#include "server/help.h"
#include "server/run.h"
#include "shaping/shape.h"
#include "shaping/stall.h"

#ifndef HELLO_VERSION
#define HELLO_VERSION "0.0.0"
#endif

namespace hello {

const std::string_view kVersion = HELLO_VERSION;

namespace {

// The sections of --help, in its order (server/help.h).
constexpr const char* kListening = "Listening and workers";
constexpr const char* kLogs = "Logs, stats and admin";
constexpr const char* kLimits = "Limits and timeouts";
constexpr const char* kRoutes = "Routes and shaping";
constexpr const char* kTls = "TLS";
constexpr const char* kHttp2 = "HTTP/2";
constexpr const char* kProbe = "Probe";

// Seconds a deadline may be: more than 0, at most a day.
constexpr NumberRule kSeconds = seconds(0, 86400, true);

// Where to listen, and the worker threads.
void add_listening_flags(CLI::App& app, Options& opt) {
  app.add_option("-H,--host", opt.host, "Address to listen on")
      ->capture_default_str()
      ->type_name("ADDRESS")
      ->group(kListening);
  add_number(app, kListening, "-p,--port", opt.port, whole(0, 65535),
             "Port to listen on; 0 picks a free one")
      ->type_name("PORT");
  auto* workers = add_number(app, kListening, "-w,--workers", opt.workers, whole(1, 1024),
                             "Worker threads, one loop and one SO_REUSEPORT listener each");
  app.add_flag("--fast", opt.fast,
               "As many workers as CPUs this process may run on: its affinity mask, or fewer "
               "where a cgroup's CPU quota allows fewer (a container's limit); not with "
               "--workers")
      ->excludes(workers)
      ->group(kListening);
  app.add_flag("--pin", opt.pin, "Pin worker i to the i-th CPU this process may run on")
      ->group(kListening);
  app.add_flag("--no-defer-accept", opt.no_defer_accept,
               "Accept a connection at its handshake, not at its first bytes (TCP_DEFER_ACCEPT, "
               "on by default: a silent client is accepted about a second late)")
      ->group(kListening);
}

// The access log, the statistics and the admin port.
void add_log_flags(CLI::App& app, Options& opt) {
  app.add_option("--access-log", opt.access_log_path,
                 "Common Log Format, one line per response: to stdout, or with "
                 "=PATH appended to PATH")
      ->expected(0, 1)
      ->type_name("[=PATH]")
      ->group(kLogs);
  add_choice(app, "--access-log-format", opt.access_log_format, {"clf", "json"},
             "The access log's lines: clf (Common Log Format) or json (one JSON object a "
             "line, with the peer's port, the service time and the shaping decision); "
             "needs --access-log")
      ->type_name("FORMAT")
      ->group(kLogs);
  add_number(app, kLogs, "--stats-interval", opt.stats_interval, kSeconds,
             "Print requests per second and open connections to stderr every SECONDS")
      ->default_str("");
  app.add_option("--stats-json", opt.stats_json, "Write the exit summary as JSON to PATH")
      ->type_name("PATH")
      ->group(kLogs);
  app.add_option("--admin", opt.admin,
                 "Serve a live page (/), /metrics (Prometheus), /healthz, /readyz and /stats on "
                 "this address, never the persona's port (docs/observability.md); keep it on "
                 "loopback or a private network")
      ->type_name("HOST:PORT")
      ->group(kLogs);
}

// The limits and deadlines of a request and a connection
// (docs/hardening.md), and of the shutdown.
void add_limit_flags(CLI::App& app, Options& opt) {
  auto& limits = opt.worker.limits;
  add_number(app, kLimits, "--max-header-bytes", limits.max_header_bytes,
             whole(256, 1 << 24, "bytes"),
             "Request line plus headers; beyond it 431 (414 for the request line alone)");
  add_number(app, kLimits, "--max-body-bytes", limits.max_body_bytes,
             whole(0, 1ull << 40, "bytes", "1 TiB"),
             "Request body (read and discarded); beyond it 413");
  add_number(app, kLimits, "--header-timeout", opt.header_timeout, kSeconds,
             "Seconds from a request's first byte to its last; then 408 and close");
  add_number(app, kLimits, "--keepalive-timeout", opt.keep_alive_timeout,
             whole(1, 86400, "seconds"),
             "Seconds an idle keep-alive connection stays open (the framework's default)");
  add_number(app, kLimits, "--send-timeout", opt.send_timeout, kSeconds,
             "Seconds a client may leave our output unread before it is closed");
  add_number(app, kLimits, "--max-connections", opt.worker.max_connections, whole(1, 1 << 24),
             "Open connections per worker; beyond it new ones are closed at once");
  add_number(app, kLimits, "--shutdown-timeout", opt.shutdown_timeout, seconds(0, 86400, false),
             "On SIGINT/SIGTERM, force-close what remains after SECONDS");
}

// The routes, delays, shaped answers (docs/shaping.md) and stalls.
void add_route_flags(CLI::App& app, Options& opt) {
  app.add_flag("--json", opt.table.json,
               "Answer / with the persona's JSON body instead of its text")
      ->group(kRoutes);
  app.add_option("--routes", opt.routes_path,
                 "Also answer the routes of this JSON file (docs/routes.md); a route of the "
                 "file replaces the persona's with the same method and path")
      ->type_name("FILE.json")
      ->group(kRoutes);
  app.add_flag("--keep-alive", opt.table.keep_alive,
               "Keep connections alive per HTTP rules even where the framework closes them")
      ->group(kRoutes);
  app.add_option("--max-delay", opt.max_delay,
                 "The longest a route's \"delay\" or a shaped delay or drip may be (us, ms or s)")
      ->capture_default_str()
      ->type_name("DURATION")
      ->group(kRoutes);
  app.add_flag("--shape", opt.table.shape,
               "Shape answers by the request: delay, status, size, header, close, reset and drip "
               "in the query string or an X-Hello-Shape header, in fortio's syntax "
               "(docs/shaping.md); off, a query changes nothing")
      ->group(kRoutes);
  app.add_option("--shape-default", opt.table.shape_default,
                 "The shape of every request that carries none, e.g. "
                 "'delay=1ms:50,10ms:5&status=503:1'; implies --shape")
      ->type_name("PARAMS")
      ->group(kRoutes);
  auto seed = [&opt](const CLI::results_t& results) {
    constexpr NumberRule kSeed = whole(0, 18446744073709551615.0L, "", "2^64 - 1");
    opt.seed = static_cast<uint64_t>(parse_number("--seed", results.back(), kSeed));
    return true;
  };
  app.add_option("--seed", CLI::callback_t(seed),
                 "Seed the shaping decisions (worker i uses N + i): the same requests in the "
                 "same order get the same decisions")
      ->expected(1)
      ->type_name("N")
      ->group(kRoutes);
  add_number(app, kRoutes, "--max-size", opt.max_size, whole(0, 1ull << 40, "bytes", "1 TiB"),
             "The largest body a shaped 'size' may ask for");
  app.add_option("--stall", opt.stalls,
                 "Freeze every worker at once, like a stop-the-world GC pause (as pressing ^Z "
                 "on the server would), to show whether a load tester corrects for coordinated "
                 "omission: the loop does nothing and requests queue up on every connection. "
                 "DURATION/EVERY (e.g. 200ms/5s): for DURATION every EVERY, the first EVERY after "
                 "start; DURATION@AT (e.g. 500ms@3s): once, AT after start. DURATION up to 60s; "
                 "repeatable")
      ->type_name("SPEC")
      ->allow_extra_args(false)
      ->group(kRoutes);
}

// HTTP/2 beside HTTP/1.1 (docs/http2.md).
void add_http2_flags(CLI::App& app, Options& opt) {
  app.add_flag("--h2", opt.worker.h2,
               "HTTP/2 beside HTTP/1.1 on the port: by ALPN h2 with --tls; in clear by the "
               "preface (h2c, prior knowledge) or by Upgrade: h2c (docs/http2.md)")
      ->group(kHttp2);
  add_number(app, kHttp2, "--h2-max-streams", opt.worker.h2_max_streams, whole(1, 0x7fffffff),
             "With --h2: SETTINGS_MAX_CONCURRENT_STREAMS, the streams one HTTP/2 connection "
             "may have open at once; beyond it a stream is refused");
}

// A health check for an image without curl (docs/containers.md).
void add_probe_flags(CLI::App& app, Options& opt) {
  app.add_option("--probe", opt.probe,
                 "Do not serve: GET URL once, print one line, exit 0 on a 2xx answer, else 1. "
                 "URL is http://HOST:PORT/PATH, or /PATH on --admin's address (a container's "
                 "HEALTHCHECK or a Kubernetes exec probe: --probe /readyz)")
      ->type_name("URL")
      ->group(kProbe);
  add_number(app, kProbe, "--probe-timeout", opt.probe_timeout, seconds(0.001, 3600, false),
             "The longest --probe waits for the connection and the status line");
}

// HTTPS on the persona's port (docs/tls.md).
void add_tls_flags(CLI::App& app, Options& opt) {
  TlsOptions& t = opt.tls;
  auto text = [&app](const char* names, std::string& target, const char* help, const char* type) {
    app.add_option(names, target, help)->type_name(type)->group(kTls);
  };
  app.add_flag("--tls", t.enabled,
               "Speak TLS (1.2 and 1.3, OpenSSL) on the port; without --tls-cert a certificate "
               "for localhost, 127.0.0.1, ::1 and --host is made at start, its SHA-256 "
               "fingerprint on the listening line")
      ->group(kTls);
  text("--tls-cert", t.cert_path, "PEM certificate, the chain after it; implies --tls", "FILE");
  text("--tls-key", t.key_path, "PEM private key of --tls-cert, not passphrase-protected", "FILE");
  add_choice(app, "--tls-key-type", t.key_type, {"ecdsa-p256", "rsa2048"},
             "The key of a certificate made at start: ecdsa-p256, or rsa2048 (what "
             "Werkzeug's adhoc certificate has)")
      ->type_name("TYPE")
      ->group(kTls);
  text("--tls-write-cert", t.write_cert,
       "Write the certificate (PEM) to PATH, for curl --cacert PATH", "PATH");
  add_choice(app, "--tls-min", t.min_version, {"1.2", "1.3"}, "The lowest TLS version: 1.2 or 1.3")
      ->type_name("VERSION")
      ->group(kTls);
  text("--tls-ciphers", t.ciphers, "TLS 1.2 cipher list, in OpenSSL's syntax", "LIST");
  text("--tls-ciphersuites", t.ciphersuites, "TLS 1.3 cipher suites, in OpenSSL's syntax", "LIST");
  text("--tls-groups", t.groups, "Key exchange groups", "LIST");
  auto* tickets =
      add_number(app, kTls, "--tls-tickets", t.tickets, whole(0, kMaxTickets),
                 "TLS 1.3 session tickets sent after a full handshake (one after a resumed one); "
                 "0: no tickets in TLS 1.2 or 1.3, every connection a full handshake")
          ->type_name("N");
  app.add_flag("--tls-no-resume", opt.tls_no_resume, "The same as --tls-tickets 0")
      ->group(kTls)
      ->excludes(tickets);
}

// What --help says for a default that is no value of the option's own.
void describe_defaults(HelpFormatter& help) {
  help.default_text("--access-log", "off");
  help.default_text("--stats-interval", "off");
  help.default_text("--admin", "off");
  help.default_text("--seed", "random");
  help.default_text("--tls-cert", "a certificate made at start");
  help.default_text("--tls-ciphers", "ECDHE with AES-GCM or ChaCha20-Poly1305 only");
  help.default_text("--tls-ciphersuites", "AES-128-GCM, then AES-256-GCM, then ChaCha20");
  help.default_text("--tls-groups", "X25519:P-256:P-384");
}

// The --tls flags together: a certificate with its key, and no TLS flag
// without TLS.
bool check_tls(const CLI::App& app, Options& opt) {
  TlsOptions& t = opt.tls;
  if (t.cert_path.empty() != t.key_path.empty()) {
    usage_error(opt, t.cert_path.empty()
                         ? fmt::format("{} needs --tls-cert", given_as(opt, "--tls-key"))
                         : fmt::format("{} needs --tls-key", given_as(opt, "--tls-cert")));
    return false;
  }
  if (!t.cert_path.empty()) {
    t.enabled = true;
    if (app.get_option("--tls-key-type")->count() > 0) {
      usage_error(opt, fmt::format("{} is for a certificate made at start, not with --tls-cert",
                                   given_as(opt, "--tls-key-type")));
      return false;
    }
  }
  if (opt.tls_no_resume) t.tickets = 0;
  if (t.enabled) return true;
  for (const char* flag :
       {"--tls-key-type", "--tls-write-cert", "--tls-min", "--tls-ciphers", "--tls-ciphersuites",
        "--tls-groups", "--tls-tickets", "--tls-no-resume"})
    if (app.get_option(flag)->count() > 0) {
      usage_error(opt, fmt::format("{} needs --tls", given_as(opt, flag)));
      return false;
    }
  return true;
}

// --max-delay, --shape, --shape-default and --seed: the limits every shape
// is held to, and the decisions' seed.
bool check_shaping(const Persona& persona, Options& opt) {
  uint64_t max_delay_us = 0;
  std::string why;
  if (!parse_duration(opt.max_delay, max_delay_us, why)) {
    usage_error(opt, fmt::format("{}: bad duration \"{}\": {}", given_as(opt, "--max-delay"),
                                 opt.max_delay, why));
    return false;
  }
  opt.reserved = reserved_headers(persona);
  opt.table.shape_limits = {max_delay_us, opt.max_size, &opt.reserved};
  bool shaping = opt.table.shape || !opt.table.shape_default.empty();
  if (shaping && persona.no_parsing) {
    fmt::print(stderr, "{}: {}: {} parses nothing and answers every request alike\n", opt.name,
               given_as(opt, opt.table.shape ? "--shape" : "--shape-default"), opt.name);
    return false;
  }
  if (!opt.table.shape_default.empty()) {
    std::string text = opt.table.shape_default;  // parsing decodes in place
    Shape shape;
    ShapeError error;
    if (!parse_shape(text.data(), text.size(), opt.table.shape_limits, shape, error)) {
      usage_error(opt, fmt::format("{}: {}", given_as(opt, "--shape-default"), error.view()));
      return false;
    }
  }
  opt.worker.seed = opt.seed ? *opt.seed : std::random_device{}();
  return true;
}

// --stall, each spec into the workers' options.
bool check_stalls(Options& opt) {
  std::string why;
  for (const std::string& spec : opt.stalls) {
    Stall stall;
    if (!parse_stall(spec, stall, why)) {
      usage_error(opt,
                  fmt::format("{}: bad value \"{}\": {}", given_as(opt, "--stall"), spec, why));
      return false;
    }
    opt.worker.stalls.push_back(stall);
  }
  return true;
}

// --routes: reads the file into opt.routes, for the table.
bool load_file_routes(const Persona& persona, Options& opt) {
  if (opt.routes_path.empty()) return true;
  // A "body" route without a Content-Type gets the persona's text type.
  std::string_view text_type =
      persona.routes.empty() ? "text/plain; charset=utf-8" : persona.routes[0].body.content_type;
  std::string error;
  if (!load_routes(opt.routes_path, text_type, persona.head, opt.routes, error,
                   opt.table.shape_limits)) {
    fmt::print(stderr, "{}: {}: {}\n", opt.name, given_as(opt, "--routes"), error);
    return false;
  }
  // A WebSocket echo answers as the persona's framework does: only one that speaks it.
  for (size_t i = 0; i < opt.routes.size(); ++i) {
    if (opt.routes[i].kind == FileRoute::Kind::websocket && persona.websocket.path.empty()) {
      fmt::print(stderr, "{}: {}: {}: routes[{}]: this persona's framework speaks no WebSocket\n",
                 opt.name, given_as(opt, "--routes"), opt.routes_path, i);
      return false;
    }
  }
  opt.table.routes = &opt.routes;
  return true;
}

// The checks of the parsed values, then what the table and the workers
// take from them.
bool check_values(const Persona& persona, Options& opt) {
  if (!opt.routes_path.empty() && persona.no_parsing) {
    fmt::print(stderr, "{}: {}: {} parses nothing and answers every request alike\n", opt.name,
               given_as(opt, "--routes"), opt.name);
    return false;
  }
  if (!check_shaping(persona, opt) || !check_stalls(opt) || !load_file_routes(persona, opt))
    return false;
  opt.table.keep_alive_timeout = opt.keep_alive_timeout;
  opt.worker.defer_accept = !opt.no_defer_accept;
  opt.worker.header_timeout_ms = seconds_to_ms(opt.header_timeout);
  opt.worker.keep_alive_timeout_ms = seconds_to_ms(opt.keep_alive_timeout);
  opt.worker.send_timeout_ms = seconds_to_ms(opt.send_timeout);
  return true;
}

// What CLI11 would say in its own words about the shape of the command
// line, said plainly: a flag that takes a value but is the last word or is
// followed by another flag ("--port needs a value (PORT)", for "1 required
// PORT missing"), or a one-value flag given twice ("--port is given twice",
// for "At Most 1 required but received 2"). Empty if neither.
std::string misshapen(const CLI::App& app, int argc, char** argv) {
  auto option = [&app](std::string arg) -> const CLI::Option* {
    if (arg.size() < 2 || arg[0] != '-') return nullptr;
    if (size_t eq = arg.find('='); eq != std::string::npos) arg.resize(eq);
    for (const CLI::Option* o : app.get_options())
      if (o->check_name(arg)) return o;
    return nullptr;
  };
  std::vector<const CLI::Option*> seen;
  for (int i = 1; i < argc; ++i) {
    const CLI::Option* o = option(argv[i]);
    if (o == nullptr) continue;
    std::string flag = "--" + o->get_lnames()[0];
    if (o->get_expected_max() == 1 && std::find(seen.begin(), seen.end(), o) != seen.end())
      return flag + " is given twice";
    seen.push_back(o);
    if (o->get_expected_min() == 0 || std::strchr(argv[i], '=') != nullptr) continue;
    if (i + 1 == argc || option(argv[i + 1]) != nullptr)
      return fmt::format("{} needs a value ({})", flag, o->get_type_name());
    ++i;  // its value, which may look like a flag ("-1")
  }
  return "";
}

}  // namespace

std::unique_ptr<CLI::App> make_app(const Persona& persona, Options& opt) {
  opt.name = fmt::format("hello-{}", persona.name);
  opt.port = persona.port;
  opt.keep_alive_timeout = persona.keep_alive_timeout;
  std::string about = fmt::format("{}: {}", opt.name, persona.summary);
  if (!persona.websocket.path.empty())
    about += fmt::format("\nWebSocket: an echo at {} (docs/websocket.md).", persona.websocket.path);
  auto app = std::make_unique<CLI::App>(about, opt.name);
  auto help = std::make_shared<HelpFormatter>();
  describe_defaults(*help);
  app->formatter(help);
  add_listening_flags(*app, opt);
  add_log_flags(*app, opt);
  add_limit_flags(*app, opt);
  add_route_flags(*app, opt);
  add_tls_flags(*app, opt);
  add_http2_flags(*app, opt);
  add_probe_flags(*app, opt);
  app->set_version_flag("-V,--version", fmt::format("{} {}", opt.name, kVersion))->group("Help");
  app->get_help_ptr()->description("Print this help and exit")->group("Help");
  describe_environment(*app);
  return app;
}

std::optional<int> parse_options(const Persona& persona, int argc, char** argv, Options& opt) {
  std::unique_ptr<CLI::App> app = make_app(persona, opt);
  if (std::string wrong = misshapen(*app, argc, argv); !wrong.empty()) {
    usage_error(opt, wrong);
    return kExitUsage;
  }
  try {
    app->parse(argc, argv);
  } catch (const FlagValueError& e) {
    usage_error(opt, e.for_flag());
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app->exit(e);
    usage_error(opt, e.what());
    return kExitUsage;
  }
  if (!apply_environment(*app, opt)) return kExitUsage;
  if (!opt.probe.empty()) {
    ProbeResult result = probe(opt.probe, opt.admin, opt.probe_timeout);
    fmt::print(result.healthy ? stdout : stderr, "{}: probe {}\n", opt.name, result.line);
    return result.healthy ? 0 : 1;
  }
  // --access-log with or without a path; its value alone cannot tell.
  opt.access_log = app->get_option("--access-log")->count() > 0;
  if (app->get_option("--access-log-format")->count() > 0 && !opt.access_log) {
    usage_error(opt, fmt::format("{} needs --access-log", given_as(opt, "--access-log-format")));
    return kExitUsage;
  }
  if (app->get_option("--h2-max-streams")->count() > 0 && !opt.worker.h2) {
    usage_error(opt, fmt::format("{} needs --h2", given_as(opt, "--h2-max-streams")));
    return kExitUsage;
  }
  if (!check_tls(*app, opt) || !check_values(persona, opt)) return kExitUsage;
  return std::nullopt;
}

void usage_error(const Options& opt, std::string_view text) {
  fmt::print(stderr, "{}: {} (usage: {} [OPTIONS], see --help)\n", opt.name, text, opt.name);
}

}  // namespace hello
