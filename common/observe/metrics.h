// What the admin port's /metrics says: Prometheus text exposition format
// 0.0.4 (docs/observability.md), made from the workers' snapshots, the
// process's own figures and the build's identity. Served by the main
// thread's control loop, never by a worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "observe/stats_report.h"

namespace hello {

// The process figures of the standard process_* metrics, read from /proc.
struct ProcessFigures {
  double cpu_seconds = 0;
  uint64_t resident_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;
  double start_time_seconds = 0;  // since the Unix epoch
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

// The whole exposition: every family once, with # HELP and # TYPE.
std::string metrics_text(const MetricsInput& in);

}  // namespace hello
