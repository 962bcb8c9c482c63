#include "observe/recent_window.h"

namespace hello {

void RecentWindow::tick(const LatencySnapshot& total, uint64_t now_ns) {
  if (started_) {
    LatencySnapshot window = total;
    window -= last_;
    figures_ = service_time_figures(window);
    seconds_ = static_cast<double>(now_ns - last_ns_) / 1e9;
  }
  last_ = total;
  last_ns_ = now_ns;
  started_ = true;
}

}  // namespace hello
