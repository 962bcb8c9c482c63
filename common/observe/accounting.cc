#include "observe/accounting.h"

#include <iterator>

namespace hello {

void Accounting::closed(CloseReason why) {
  // The counter of each CloseReason, in the enum's order; an undecided
  // reason counts as an error.
  static constexpr Counter WorkerStats::*kClosedBy[] = {
      &WorkerStats::closed_error,
      &WorkerStats::connections_rejected,
      &WorkerStats::closed_client,
      &WorkerStats::closed_answered,
      &WorkerStats::closed_keepalive_timeout,
      &WorkerStats::closed_header_timeout,
      &WorkerStats::closed_send_timeout,
      &WorkerStats::closed_reset,
      &WorkerStats::closed_shutdown,
      &WorkerStats::closed_error,
  };
  static_assert(std::size(kClosedBy) == static_cast<size_t>(CloseReason::error) + 1);
  (stats_.*kClosedBy[static_cast<size_t>(why)]).add();
  stats_.open.sub();
}

[[gnu::noinline]] void Accounting::count_shaping(Answered::Shaping s) {
  switch (s) {
    case Answered::Shaping::none:
      break;
    case Answered::Shaping::shaped:
      stats_.shaped.add();
      break;
    case Answered::Shaping::reset:
      stats_.shaped.add();
      stats_.resets.add();
      break;
    case Answered::Shaping::bad_parameters:
      stats_.shape_errors.add();
      break;
  }
}

[[gnu::noinline]] void Accounting::log(const Answered& a) {
  log_->append(peer_, a.method, a.target, a.http_minor, a.status, a.body_bytes);
}

void Accounting::tick(time_t now) {
  if (log_ == nullptr) return;
  log_->set_time(now);
  log_->flush();  // at least once a second
}

void Accounting::flush_final() {
  if (log_ != nullptr) log_->flush_final();
}

}  // namespace hello
