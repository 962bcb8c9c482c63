// The numbers a run leaves behind: the live line of --stats-interval, the
// exit summary on stderr and the --stats-json file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "counter.h"

namespace hello {

// A plain copy of WorkerStats at one moment.
struct StatsSnapshot {
  uint64_t connections = 0;
  uint64_t connections_rejected = 0;
  uint64_t accept_errors = 0;
  uint64_t open = 0;
  uint64_t requests = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t responses_2xx = 0;
  uint64_t responses_4xx = 0;
  uint64_t responses_5xx = 0;
  uint64_t parse_errors = 0;
  uint64_t log_lines_dropped = 0;

  static StatsSnapshot of(const WorkerStats& s);
  StatsSnapshot& operator+=(const StatsSnapshot& o);
};

// "stats: 12000 req/s (w0 6100, w1 5900), 64 open connections", from two
// snapshots per worker taken `seconds` apart.
std::string interval_line(const std::vector<StatsSnapshot>& before,
                          const std::vector<StatsSnapshot>& now, double seconds);
// One line per worker and one for the total.
std::string summary_text(const std::vector<StatsSnapshot>& workers);
// {"workers": [{"id": 0, ...}, ...], "total": {...}}
std::string summary_json(const std::vector<StatsSnapshot>& workers);

}  // namespace hello
