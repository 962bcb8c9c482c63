#include "server/control.h"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <utility>

#include "observe/metrics.h"

namespace hello {

struct ControlCallbacks {
  static Control* of(void* h) { return static_cast<Control*>(static_cast<uv_handle_t*>(h)->data); }
  static void signalled(uv_signal_t* s, int signum) { of(s)->on_signal(signum); }
  static void deadline(uv_timer_t* t) { of(t)->on_deadline(); }
  static void stats(uv_timer_t* t) { of(t)->on_stats(); }
  static void recent(uv_timer_t* t) { of(t)->on_recent(); }
  static void done(uv_async_t* a) { of(a)->on_done(); }
};

Control::~Control() {
  if (!ready_) return;
  // A run closes every handle before it ends; a start that failed after
  // init() (the admin port taken) leaves them open, and the loop cannot
  // close over open handles: close them, let their callbacks run, so that
  // uv_loop_close() frees what the loop holds. A handle init() never
  // reached is still zero (no loop).
  for (uv_handle_t* h : handles())
    if (h->loop == &loop_ && !uv_is_closing(h)) uv_close(h, nullptr);
  if (admin_) admin_->close();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

int Control::init() {
  int rc = uv_loop_init(&loop_);
  if (rc != 0) return rc;
  ready_ = true;
  for (uv_handle_t* h : handles()) h->data = this;
  if ((rc = uv_signal_init(&loop_, &interrupt_)) != 0 ||
      (rc = uv_signal_init(&loop_, &terminate_)) != 0 ||
      (rc = uv_async_init(&loop_, &done_, ControlCallbacks::done)) != 0 ||
      (rc = uv_timer_init(&loop_, &deadline_)) != 0 ||
      (rc = uv_timer_init(&loop_, &stats_timer_)) != 0 ||
      (rc = uv_timer_init(&loop_, &recent_timer_)) != 0 ||
      (rc = uv_signal_start(&interrupt_, ControlCallbacks::signalled, SIGINT)) != 0 ||
      (rc = uv_signal_start(&terminate_, ControlCallbacks::signalled, SIGTERM)) != 0)
    return rc;
  if (stats_interval_ > 0) {
    uint64_t ms = seconds_to_ms(stats_interval_);
    last_ = snapshots();
    if ((rc = uv_timer_start(&stats_timer_, ControlCallbacks::stats, ms, ms)) != 0) return rc;
  }
  return 0;
}

int Control::start_admin(const struct sockaddr* addr, std::string_view persona,
                         std::string_view version, size_t max_header_bytes,
                         uint64_t header_timeout_ms) {
  persona_ = persona;
  version_ = version;
  start_time_ = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count()) /
                1000;
  baseline_ = std::vector<StatsSnapshot>(workers_.size());
  time_baseline_ = std::vector<LatencySnapshot>(workers_.size());
  idle_baseline_ = std::vector<double>(workers_.size());
  admin_start_ns_ = window_start_ns_ = uv_hrtime();
  on_recent();
  // A second: the live page polls once a second and draws each second's
  // percentiles; the tick reads the workers' histograms, never waits on them.
  int rc = uv_timer_start(&recent_timer_, ControlCallbacks::recent, 1000, 1000);
  if (rc != 0) return rc;
  admin_ = std::make_unique<AdminServer>(&loop_, *this, max_header_bytes, header_timeout_ms);
  return admin_->listen(addr);
}

std::string Control::metrics(MetricsFormat format) {
  std::vector<StatsSnapshot> now = snapshots();
  std::vector<LoopFigures> loops;
  for (double idle : idle_seconds()) loops.push_back({idle});
  std::vector<LatencySnapshot> times = service_times();
  MetricsInput in;
  in.workers = &now;
  in.service_time = &times;
  in.loops = &loops;
  in.process = read_process_figures(start_time_);
  in.persona = persona_;
  in.version = version_;
  in.ready = ready();
  return metrics_text(in, format);
}

std::string Control::stats() {
  uint64_t at = uv_hrtime();
  std::vector<StatsSnapshot> now = snapshots();
  std::vector<LatencySnapshot> times = service_times();
  LiveFigures live{persona_,
                   version_,
                   static_cast<double>(at - admin_start_ns_) / 1e9,
                   static_cast<double>(at - window_start_ns_) / 1e9,
                   idle_seconds(),
                   recent_.seconds(),
                   recent_.figures()};
  for (size_t i = 0; i < now.size(); ++i) {
    now[i] = now[i].since(baseline_[i]);
    times[i] -= time_baseline_[i];
    live.loop_idle_s[i] -= idle_baseline_[i];
  }
  return summary_json(now, &times, &live);
}

void Control::reset_stats() {
  window_start_ns_ = uv_hrtime();
  baseline_ = snapshots();
  time_baseline_ = service_times();
  idle_baseline_ = idle_seconds();
}

std::vector<double> Control::idle_seconds() const {
  std::vector<double> s;
  for (const auto& w : workers_) s.push_back(static_cast<double>(w->idle_ns()) / 1e9);
  return s;
}

std::vector<StatsSnapshot> Control::snapshots() const {
  std::vector<StatsSnapshot> s;
  for (const auto& w : workers_) s.push_back(StatsSnapshot::of(w->stats()));
  return s;
}

std::vector<LatencySnapshot> Control::service_times() const {
  std::vector<LatencySnapshot> s;
  for (const auto& w : workers_) s.push_back(w->service_time().snapshot());
  return s;
}

void Control::on_signal(int signum) {
  if (stopping_) {
    // A second signal: the user wants out now.
    fmt::print(stderr, "second signal: exiting without waiting\n");
    _exit(128 + signum);
  }
  stopping_ = true;
  deadline_at_ = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(seconds_to_ms(shutdown_timeout_));
  for (auto& w : workers_) w->stop(false);
  uint64_t ms = seconds_to_ms(shutdown_timeout_);
  if (uv_timer_start(&deadline_, ControlCallbacks::deadline, ms, 0) != 0) on_deadline();
}

void Control::on_deadline() {
  for (auto& w : workers_) w->stop(true);
}

void Control::on_stats() {
  std::vector<StatsSnapshot> now = snapshots();
  fmt::print(stderr, "{}", interval_line(last_, now, stats_interval_));
  last_ = std::move(now);
}

void Control::on_recent() {
  LatencySnapshot total;
  for (const LatencySnapshot& w : service_times()) total += w;
  recent_.tick(total, uv_hrtime());
}

void Control::on_done() {
  for (auto& w : workers_)
    if (!w->finished()) return;
  for (uv_handle_t* handle : handles()) uv_close(handle, nullptr);
  if (admin_) admin_->close();
}

std::array<uv_handle_t*, 6> Control::handles() {
  return {reinterpret_cast<uv_handle_t*>(&interrupt_),
          reinterpret_cast<uv_handle_t*>(&terminate_),
          reinterpret_cast<uv_handle_t*>(&done_),
          reinterpret_cast<uv_handle_t*>(&deadline_),
          reinterpret_cast<uv_handle_t*>(&stats_timer_),
          reinterpret_cast<uv_handle_t*>(&recent_timer_)};
}

}  // namespace hello
