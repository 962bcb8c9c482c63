#include "observe/accounting.h"

#include <time.h>

#include <iterator>
#include <utility>

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

void Accounting::tls_handshake(const TlsHandshake& h) {
  using End = TlsHandshake::End;
  static constexpr Counter WorkerStats::*kByEnd[] = {
      &WorkerStats::tls_full,
      &WorkerStats::tls_resumed,
      &WorkerStats::tls_failed_version,
      &WorkerStats::tls_failed_cipher,
      &WorkerStats::tls_failed_plain_http,
      &WorkerStats::tls_failed_other,
      &WorkerStats::tls_failed_client_left,
  };
  static_assert(std::size(kByEnd) == static_cast<size_t>(End::client_left) + 1);
  (stats_.*kByEnd[static_cast<size_t>(h.end)]).add();
  if (h.end != End::full && h.end != End::resumed) return;
  (h.tls13 ? stats_.tls_v1_3 : stats_.tls_v1_2).add();
  static constexpr Counter WorkerStats::*kByCipher[] = {
      &WorkerStats::tls_aes_128_gcm, &WorkerStats::tls_aes_256_gcm, &WorkerStats::tls_chacha20,
      &WorkerStats::tls_cipher_other};
  (stats_.*kByCipher[static_cast<size_t>(h.cipher)]).add();
}

void Accounting::h2_over_limit(H2Limit limit) {
  static constexpr Counter WorkerStats::*kByLimit[] = {
      &WorkerStats::h2_over_streams, &WorkerStats::h2_over_header_list, &WorkerStats::h2_over_body};
  static_assert(std::size(kByLimit) == static_cast<size_t>(H2Limit::body) + 1);
  (stats_.*kByLimit[static_cast<size_t>(limit)]).add();
}

void Accounting::ws_close_sent(uint16_t code) {
  switch (code) {
    case 1000:
      stats_.ws_close_sent_1000.add();
      break;
    case 1001:
      stats_.ws_close_sent_1001.add();
      break;
    case 1002:
      stats_.ws_close_sent_1002.add();
      break;
    case 1007:
      stats_.ws_close_sent_1007.add();
      break;
    case 1008:
      stats_.ws_close_sent_1008.add();
      break;
    case 1009:
      stats_.ws_close_sent_1009.add();
      break;
    default:
      stats_.ws_close_sent_other.add();
      break;
  }
}

void Accounting::h2_flood(H2Flood flood) {
  static constexpr Counter WorkerStats::*kByFlood[] = {
      &WorkerStats::h2_flood_rapid_reset, &WorkerStats::h2_flood_continuation,
      &WorkerStats::h2_flood_ack,         &WorkerStats::h2_flood_ping,
      &WorkerStats::h2_flood_settings,    &WorkerStats::h2_flood_priority,
      &WorkerStats::h2_flood_empty_data,  &WorkerStats::h2_flood_refused_headers,
  };
  static_assert(std::size(kByFlood) == static_cast<size_t>(H2Flood::refused_headers) + 1);
  (stats_.*kByFlood[static_cast<size_t>(flood)]).add();
}

[[gnu::noinline]] void Accounting::count_shaping(Answered::Shaping s, uint16_t status) {
  switch (s) {
    case Answered::Shaping::none:
      break;
    case Answered::Shaping::shaped:
      stats_.shaped.add();
      if (status >= 500) stats_.shaped_5xx.add();
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
  LogRecord r;
  r.peer = peer_;
  r.port = port_;
  r.method = a.method;
  r.target = a.target;
  r.version = a.http2 ? 20 : 10 + a.http_minor;
  r.status = a.status;
  r.body_bytes = a.body_bytes;
  if (log_->json()) {
    // One clock read per line: the service time and the line's time.
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    r.now_ns = static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
    uint64_t began = a.began_ns != 0 ? a.began_ns : std::exchange(began_ns_, rest_began_ns_);
    r.service_ns = began != 0 && began < r.now_ns ? r.now_ns - began : 0;
    r.decision = a.decision;
  }
  log_->append(r);
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
