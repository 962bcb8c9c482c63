// The control loop of the main thread: SIGINT and SIGTERM, the shutdown
// deadline, the --stats-interval line, and the async handle the workers
// signal when their loops end. Workers never wait on it.
#pragma once

#include <uv.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "observe/admin.h"
#include "observe/latency_histogram.h"
#include "observe/recent_window.h"
#include "observe/stats_report.h"
#include "server/worker.h"

namespace hello {

class Control final : public AdminSource {
 public:
  // Reports every `stats_interval` seconds (0: never) and, after the
  // first signal, force-closes what remains after `shutdown_timeout`.
  Control(std::vector<std::unique_ptr<Worker>>& workers, double stats_interval,
          double shutdown_timeout)
      : workers_(workers), stats_interval_(stats_interval), shutdown_timeout_(shutdown_timeout) {}
  ~Control() override;

  // Creates the loop and its handles. Returns 0 or a libuv error.
  int init();
  // Serves the admin port (--admin) on this loop, for `persona` built as
  // `version`. Returns 0 or a libuv error.
  int start_admin(const struct sockaddr* addr, std::string_view persona, std::string_view version,
                  size_t max_header_bytes, uint64_t header_timeout_ms);
  // The admin port's bound port (useful after binding port 0), or -1 without one.
  int admin_port() const { return admin_ ? admin_->port() : -1; }

  // AdminSource: what the admin port's routes answer.
  std::string metrics(MetricsFormat format) override;
  std::string stats() override;
  void reset_stats() override;
  bool ready() override { return !stopping_; }

  // The handle each worker signals once its loop has ended.
  uv_async_t* done() { return &done_; }
  // When the process must be gone after the first signal.
  std::chrono::steady_clock::time_point deadline() const { return deadline_at_; }
  // Runs the loop until every worker has finished.
  void run() { uv_run(&loop_, UV_RUN_DEFAULT); }

  // Each worker's counters, read now.
  std::vector<StatsSnapshot> snapshots() const;
  // Each worker's service-time histogram, read now.
  std::vector<LatencySnapshot> service_times() const;

 private:
  friend struct ControlCallbacks;

  void on_signal(int signum);
  void on_deadline();
  void on_stats();
  void on_recent();
  void on_done();
  std::array<uv_handle_t*, 6> handles();
  // Each worker's loop idle time, in seconds, read now.
  std::vector<double> idle_seconds() const;

  std::vector<std::unique_ptr<Worker>>& workers_;
  double stats_interval_;
  double shutdown_timeout_;
  uv_loop_t loop_;
  uv_signal_t interrupt_{};
  uv_signal_t terminate_{};
  uv_async_t done_{};
  uv_timer_t deadline_{};
  uv_timer_t stats_timer_{};
  uv_timer_t recent_timer_{};  // with --admin: the last second's service time, once a second
  std::vector<StatsSnapshot> last_;
  bool stopping_ = false;
  bool ready_ = false;
  std::unique_ptr<AdminServer> admin_;
  std::string_view persona_;
  std::string_view version_;
  double start_time_ = 0;                // seconds since the Unix epoch
  std::vector<StatsSnapshot> baseline_;  // /stats counts from here (POST /stats/reset)
  std::vector<LatencySnapshot> time_baseline_;
  std::vector<double> idle_baseline_;
  uint64_t admin_start_ns_ = 0;   // uv_hrtime() when the admin port started
  uint64_t window_start_ns_ = 0;  // uv_hrtime() at the last POST /stats/reset
  RecentWindow recent_;
  std::chrono::steady_clock::time_point deadline_at_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace hello
