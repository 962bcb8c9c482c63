// run(): the process around the workers, in three steps. The flags come
// first (options.cc), then start-up: the addresses, the workers, the access
// log and the control loop (startup.cc). The main thread then runs that
// loop, which workers never wait on, until they have all finished, and the
// exit report here ends the process.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "observe/stats_report.h"
#include "server/options.h"
#include "server/run.h"
#include "server/startup.h"
#include "tls/tls_memory.h"

namespace hello {

using namespace std::chrono_literals;

namespace {

// Lets the access log writer finish, and adds the lines it lost to each
// worker's `totals`.
void stop_access_log(Process& process, std::vector<StatsSnapshot>& totals) {
  LogWriter* writer = process.log_writer.get();
  if (writer == nullptr) return;
  // A consumer that stopped reading must not hold the exit past the
  // deadline: the writer is then left behind, blocked, and the process
  // ends without it.
  auto until = std::max(process.control.deadline(), std::chrono::steady_clock::now() + 500ms);
  bool finished = writer->stop(until);
  for (size_t i = 0; i < totals.size(); ++i)
    totals[i].log_lines_dropped += writer->lines_lost(static_cast<int>(i));
  if (!finished) {
    fmt::print(stderr, "access log: its reader stopped reading; exiting without waiting\n");
    (void)process.log_writer.release();  // still in use by the blocked thread
  }
}

// Once the control loop has ended: joins the workers, prints the exit
// summary and writes it to --stats-json. Returns the exit status.
int report(const Options& opt, Process& process) {
  for (auto& w : process.workers) w->join();
  std::vector<StatsSnapshot> totals = process.control.snapshots();
  std::vector<LatencySnapshot> service_times = process.control.service_times();
  stop_access_log(process, totals);
  fmt::print(stderr, "{}", summary_text(totals, &service_times));
  if (!opt.stats_json.empty() &&
      !write_file(opt.stats_json, summary_json(totals, &service_times))) {
    fmt::print(stderr, "cannot write {}: {}\n", opt.stats_json, strerror(errno));
    return kExitStartup;
  }
  return 0;
}

}  // namespace

int run(const Persona& persona, int argc, char** argv) {
  // Before OpenSSL allocates anything (docs/tls.md).
  recycle_tls_memory();
  Options opt;
  if (std::optional<int> exit = parse_options(persona, argc, argv, opt)) return *exit;
  Process process(opt);
  if (int rc = start_up(persona, opt, process); rc != 0) return rc;
  process.control.run();
  return report(opt, process);
}

}  // namespace hello
