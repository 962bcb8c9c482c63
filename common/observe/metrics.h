// What the admin port's /metrics says: Prometheus text exposition format
// 0.0.4, or OpenMetrics 1.0.0 to a scraper that asks for it
// (docs/observability.md), made from the workers' snapshots, the process's
// own figures and the build's identity. Served by the main thread's control
// loop, never by a worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "observe/metrics_format.h"
#include "observe/stats_report.h"

namespace hello {

// The process figures of the standard process_* metrics, read from /proc.
struct ProcessFigures {
  double cpu_seconds = 0;
  uint64_t resident_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;
  // Since the Unix epoch; also when every counter began at 0, the
  // OpenMetrics _created of each (POST /stats/reset resets only /stats).
  double start_time_seconds = 0;
};

// This process's figures now; `start_time_seconds` as given.
ProcessFigures read_process_figures(double start_time_seconds);

// One worker's loop: seconds it spent waiting for events (libuv's
// uv_metrics_idle_time), so saturation shows as idle time that stops growing.
struct LoopFigures {
  double idle_seconds = 0;
};

struct MetricsInput {
  const std::vector<StatsSnapshot>* workers = nullptr;
  const std::vector<LatencySnapshot>* service_time = nullptr;  // one per worker
  const std::vector<LoopFigures>* loops = nullptr;             // one per worker
  ProcessFigures process;
  std::string_view persona;  // "sanic"
  std::string_view version;
  bool ready = true;  // /readyz's answer: false once a graceful stop has begun
};

// The whole exposition in `format`: every family once, with # HELP and
// # TYPE; in OpenMetrics also # UNIT where the name ends in one, each
// counter's and histogram's _created, and the closing # EOF.
std::string metrics_text(const MetricsInput& in,
                         MetricsFormat format = MetricsFormat::prometheus_text);

}  // namespace hello
