// The control loop of the main thread: SIGINT and SIGTERM, the shutdown
// deadline, the --stats-interval line, and the async handle the workers
// signal when their loops end. Workers never wait on it.
#pragma once

#include <fmt/format.h>
#include <unistd.h>
#include <uv.h>

#include <array>
#include <chrono>
#include <csignal>
#include <memory>
#include <vector>

#include "observe/admin.h"
#include "observe/metrics.h"
#include "observe/stats_report.h"
#include "server/worker.h"

namespace hello {

inline uint64_t seconds_to_ms(double seconds) {
  return static_cast<uint64_t>(seconds * 1000);
}

class Control final : public AdminSource {
 public:
  // Reports every `stats_interval` seconds (0: never) and, after the
  // first signal, force-closes what remains after `shutdown_timeout`.
  Control(std::vector<std::unique_ptr<Worker>>& workers, double stats_interval,
          double shutdown_timeout)
      : workers_(workers), stats_interval_(stats_interval), shutdown_timeout_(shutdown_timeout) {}
  ~Control() override {
    if (ready_) uv_loop_close(&loop_);
  }

  // Creates the loop and its handles. Returns 0 or a libuv error.
  int init() {
    int rc = uv_loop_init(&loop_);
    if (rc != 0) return rc;
    ready_ = true;
    for (uv_handle_t* h : handles()) h->data = this;
    if ((rc = uv_signal_init(&loop_, &interrupt_)) != 0 ||
        (rc = uv_signal_init(&loop_, &terminate_)) != 0 ||
        (rc = uv_async_init(&loop_, &done_, on_done)) != 0 ||
        (rc = uv_timer_init(&loop_, &deadline_)) != 0 ||
        (rc = uv_timer_init(&loop_, &stats_timer_)) != 0 ||
        (rc = uv_signal_start(&interrupt_, on_signal, SIGINT)) != 0 ||
        (rc = uv_signal_start(&terminate_, on_signal, SIGTERM)) != 0)
      return rc;
    if (stats_interval_ > 0) {
      uint64_t ms = seconds_to_ms(stats_interval_);
      last_ = snapshots();
      if ((rc = uv_timer_start(&stats_timer_, on_stats, ms, ms)) != 0) return rc;
    }
    return 0;
  }

  // Serves the admin port (--admin) on this loop, for `persona` built as
  // `version`. Returns 0 or a libuv error.
  int start_admin(const struct sockaddr* addr, std::string_view persona, std::string_view version,
                  size_t max_header_bytes, uint64_t header_timeout_ms) {
    persona_ = persona;
    version_ = version;
    start_time_ = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) /
                  1000;
    baseline_ = std::vector<StatsSnapshot>(workers_.size());
    time_baseline_ = std::vector<LatencySnapshot>(workers_.size());
    admin_ = std::make_unique<AdminServer>(&loop_, *this, max_header_bytes, header_timeout_ms);
    return admin_->listen(addr);
  }
  int admin_port() const { return admin_ ? admin_->port() : -1; }

  // AdminSource: what the admin port's routes answer.
  std::string metrics() override {
    std::vector<StatsSnapshot> now = snapshots();
    std::vector<LoopFigures> loops;
    for (const auto& w : workers_) loops.push_back({static_cast<double>(w->idle_ns()) / 1e9});
    std::vector<LatencySnapshot> times = service_times();
    MetricsInput in;
    in.workers = &now;
    in.service_time = &times;
    in.loops = &loops;
    in.process = read_process_figures(start_time_);
    in.persona = persona_;
    in.version = version_;
    return metrics_text(in);
  }
  std::string stats() override {
    std::vector<StatsSnapshot> now = snapshots();
    std::vector<LatencySnapshot> times = service_times();
    for (size_t i = 0; i < now.size(); ++i) {
      now[i] = now[i].since(baseline_[i]);
      times[i] -= time_baseline_[i];
    }
    return summary_json(now, &times);
  }
  void reset_stats() override {
    baseline_ = snapshots();
    time_baseline_ = service_times();
  }
  bool ready() override { return !stopping_; }

  uv_async_t* done() { return &done_; }
  // When the process must be gone after the first signal.
  std::chrono::steady_clock::time_point deadline() const { return deadline_at_; }
  void run() { uv_run(&loop_, UV_RUN_DEFAULT); }

  std::vector<StatsSnapshot> snapshots() const {
    std::vector<StatsSnapshot> s;
    for (const auto& w : workers_) s.push_back(StatsSnapshot::of(w->stats()));
    return s;
  }
  std::vector<LatencySnapshot> service_times() const {
    std::vector<LatencySnapshot> s;
    for (const auto& w : workers_) s.push_back(w->service_time().snapshot());
    return s;
  }

 private:
  static Control* of(void* h) { return static_cast<Control*>(static_cast<uv_handle_t*>(h)->data); }

  static void on_signal(uv_signal_t* h, int signum) {
    Control* c = of(h);
    if (c->stopping_) {
      // A second signal: the user wants out now.
      fmt::print(stderr, "second signal: exiting without waiting\n");
      _exit(128 + signum);
    }
    c->stopping_ = true;
    c->deadline_at_ = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(seconds_to_ms(c->shutdown_timeout_));
    for (auto& w : c->workers_) w->stop(false);
    uint64_t ms = seconds_to_ms(c->shutdown_timeout_);
    if (uv_timer_start(&c->deadline_, on_deadline, ms, 0) != 0) on_deadline(&c->deadline_);
  }

  static void on_deadline(uv_timer_t* h) {
    for (auto& w : of(h)->workers_) w->stop(true);
  }

  static void on_stats(uv_timer_t* h) {
    Control* c = of(h);
    std::vector<StatsSnapshot> now = c->snapshots();
    fmt::print(stderr, "{}", interval_line(c->last_, now, c->stats_interval_));
    c->last_ = std::move(now);
  }

  static void on_done(uv_async_t* h) {
    Control* c = of(h);
    for (auto& w : c->workers_)
      if (!w->finished()) return;
    for (uv_handle_t* handle : c->handles()) uv_close(handle, nullptr);
    if (c->admin_) c->admin_->close();
  }

  std::array<uv_handle_t*, 5> handles() {
    return {reinterpret_cast<uv_handle_t*>(&interrupt_),
            reinterpret_cast<uv_handle_t*>(&terminate_), reinterpret_cast<uv_handle_t*>(&done_),
            reinterpret_cast<uv_handle_t*>(&deadline_),
            reinterpret_cast<uv_handle_t*>(&stats_timer_)};
  }

  std::vector<std::unique_ptr<Worker>>& workers_;
  double stats_interval_;
  double shutdown_timeout_;
  uv_loop_t loop_;
  uv_signal_t interrupt_;
  uv_signal_t terminate_;
  uv_async_t done_;
  uv_timer_t deadline_;
  uv_timer_t stats_timer_;
  std::vector<StatsSnapshot> last_;
  bool stopping_ = false;
  bool ready_ = false;
  std::unique_ptr<AdminServer> admin_;
  std::string_view persona_;
  std::string_view version_;
  double start_time_ = 0;                // seconds since the Unix epoch
  std::vector<StatsSnapshot> baseline_;  // /stats counts from here (POST /stats/reset)
  std::vector<LatencySnapshot> time_baseline_;
  std::chrono::steady_clock::time_point deadline_at_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace hello
