// The service time of the last second, for /stats and the live page
// (docs/observability.md). /stats otherwise counts since its last reset, so
// its percentiles barely move under a steady load; a page that draws them
// second by second needs each second's own. The control loop's timer calls
// tick() once a second with the workers' histograms added up, and the
// figures are those of the values recorded between the last two ticks:
// every client of /stats sees the same second, and no client's polling
// changes what another sees.
#pragma once

#include <cstdint>

#include "observe/latency_histogram.h"
#include "observe/stats_report.h"

namespace hello {

class RecentWindow {
 public:
  // Takes `total` (every worker's histogram, added up) at `now_ns`
  // (uv_hrtime): the second that ends here replaces the last.
  void tick(const LatencySnapshot& total, uint64_t now_ns);
  // The figures of the values recorded between the last two ticks.
  const ServiceTimeFigures& figures() const { return figures_; }
  // The seconds between the last two ticks; 0 before the second tick.
  double seconds() const { return seconds_; }

 private:
  LatencySnapshot last_;
  uint64_t last_ns_ = 0;
  bool started_ = false;
  ServiceTimeFigures figures_{};
  double seconds_ = 0;
};

}  // namespace hello
