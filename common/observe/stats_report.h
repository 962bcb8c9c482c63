// The numbers a run leaves behind: the live line of --stats-interval, the
// exit summary on stderr and the --stats-json file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "observe/counter.h"
#include "observe/latency_histogram.h"

namespace hello {

// A plain copy of WorkerStats at one moment: a number per line of
// HELLO_STATS_FIELDS.
struct StatsSnapshot {
#define HELLO_STATS_VALUE(member, ...) uint64_t member = 0;
  HELLO_STATS_FIELDS(HELLO_STATS_VALUE)
#undef HELLO_STATS_VALUE

  static StatsSnapshot of(const WorkerStats& s);
  StatsSnapshot& operator+=(const StatsSnapshot& o);
  // The counts since `earlier` (gauges, such as open, as they are now).
  StatsSnapshot since(const StatsSnapshot& earlier) const;
};

// One line of HELLO_STATS_FIELDS: where the counter lives and how it is
// reported.
struct StatsField {
  Counter WorkerStats::*counter;
  uint64_t StatsSnapshot::*value;
  std::string_view json_object;  // the object it is nested in, "" for none
  std::string_view json_key;
  std::string_view text;  // its part of a summary line, {} standing for the number
  StatsShown shown;
  std::string_view metric;  // its Prometheus family, "" for none
  std::string_view labels;  // its labels besides worker, "" for none
};

// Every counter, in the order the summary and the JSON print them.
inline constexpr StatsField kStatsFields[] = {
#define HELLO_STATS_FIELD(member, object, key, text, shown, metric, labels) \
  {&WorkerStats::member,                                                    \
   &StatsSnapshot::member,                                                  \
   object,                                                                  \
   key,                                                                     \
   text,                                                                    \
   StatsShown::shown,                                                       \
   metric,                                                                  \
   labels},
    HELLO_STATS_FIELDS(HELLO_STATS_FIELD)
#undef HELLO_STATS_FIELD
};

// "stats: 12000 req/s (w0 6100, w1 5900), 64 open connections", from two
// snapshots per worker taken `seconds` apart.
std::string interval_line(const std::vector<StatsSnapshot>& before,
                          const std::vector<StatsSnapshot>& now, double seconds);
// One line per worker and one for the total; with `service_time` (one per
// worker), then the service-time percentiles the same way, and where the
// answers timed are not the requests counted, a line saying why.
std::string summary_text(const std::vector<StatsSnapshot>& workers,
                         const std::vector<LatencySnapshot>* service_time = nullptr);
// The percentiles the summary, the JSON and /stats report.
struct ServiceTimeFigures {
  uint64_t count;
  double p50_us, p90_us, p99_us, p999_us, max_us;
};
ServiceTimeFigures service_time_figures(const LatencySnapshot& s);

// What /stats adds to the --stats-json shape for the live page
// (docs/observability.md): a clock to turn counter deltas into rates, each
// worker's open connections and loop idle time, and the service time of the
// last second.
struct LiveFigures {
  std::string_view persona;
  std::string_view version;
  double uptime_s = 0;              // since the admin port started (monotonic)
  double window_s = 0;              // since the last POST /stats/reset (or the start)
  std::vector<double> loop_idle_s;  // per worker, in the window
  double recent_s = 0;              // the last second's length, 0 before it ended
  ServiceTimeFigures recent{};      // the service time of the last second
};

// {"workers": [{"id": 0, ...}, ...], "total": {...}}; with `service_time`,
// each object ends with "service_time_us": {"count", "p50", "p90", "p99",
// "p99_9", "max"}; with `live`, the object starts with "persona",
// "version", "uptime_s" and "window_s", each worker and the total end with
// "open" and "loop_idle_s", and "recent": {"seconds", "service_time_us"}
// follows the total.
std::string summary_json(const std::vector<StatsSnapshot>& workers,
                         const std::vector<LatencySnapshot>* service_time = nullptr,
                         const LiveFigures* live = nullptr);

}  // namespace hello
