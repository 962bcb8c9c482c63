// The command line of every binary: the flags, their --help text and the
// checks that turn a bad value into one line on stderr and exit status 2.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "persona/persona.h"
#include "persona/response_table.h"
#include "persona/routes_file.h"
#include "server/worker.h"
#include "tls/tls_context.h"

namespace CLI {
class App;
}

namespace hello {

// The version --version prints and the admin port reports (CMake's
// PROJECT_VERSION).
extern const std::string_view kVersion;

// What the flags say, checked, with what the tables and workers take from them.
struct Options {
  Options() = default;
  // Not copied: table.routes and table.shape_limits.reserved point into it.
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;

  std::string name;  // the binary, "hello-NAME", which starts every error line
  std::string host = "0.0.0.0";
  int port = 0;
  TableOptions table;
  int workers = 1;
  bool fast = false;
  bool pin = false;
  bool access_log = false;
  std::string access_log_path;            // empty: stdout
  std::string access_log_format = "clf";  // or "json"
  std::string routes_path;                // --routes FILE.json, or empty
  std::vector<FileRoute> routes;
  double stats_interval = 0;
  std::string stats_json;
  double shutdown_timeout = 10;
  WorkerOptions worker;
  double header_timeout = 10;
  int keep_alive_timeout = -1;  // the persona's
  double send_timeout = 30;
  std::string max_delay = "60s";      // --max-delay, a duration
  uint64_t max_size = 16 << 20;       // --max-size
  std::optional<uint64_t> seed;       // --seed, if given
  std::vector<std::string> stalls;    // --stall SPEC, each as given
  std::string admin;                  // --admin HOST:PORT, or empty
  bool no_defer_accept = false;       // --no-defer-accept
  std::vector<std::string> reserved;  // the persona's own headers, for table.shape_limits
  TlsOptions tls;                     // --tls and its flags (docs/tls.md)
  bool tls_no_resume = false;         // --tls-no-resume: --tls-tickets 0
  std::string probe;                  // --probe URL: ask it and exit
  double probe_timeout = 1;           // --probe-timeout SECONDS
  // The flags the environment set, each with its variable
  // (server/environment.h), for the errors of the later checks.
  std::vector<std::pair<std::string, std::string>> from_environment;
};

// The flags of `persona`'s binary, each storing into `opt`, with their
// variables in --help; nothing parsed yet.
std::unique_ptr<CLI::App> make_app(const Persona& persona, Options& opt);

// Parses and checks the command line of `persona`'s binary into `opt`.
// Returns nothing if the server is to start, else the status to exit with
// at once: 0 after --help or --version, kExitUsage after the error line,
// --probe's 0 or 1.
std::optional<int> parse_options(const Persona& persona, int argc, char** argv, Options& opt);

// Prints "NAME: TEXT (usage: NAME [OPTIONS], see --help)" on stderr, the
// line of a bad command line.
void usage_error(const Options& opt, std::string_view text);

}  // namespace hello
