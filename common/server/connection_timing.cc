// A Connection's deadlines: the header timer, the worker's sweep (the
// keep-alive and send timeouts, the linger after our FIN), the graceful
// stop, and an HTTP/2 session's wake-ups.
#include <cstdint>

#include "base/check.h"
#include "server/connection.h"

namespace hello {

void Connection::drain() {
  if (phase_ == Phase::closing || draining_) return;
  draining_ = true;
  read_since_check_ = false;
  // HTTP/2 says so at once: GOAWAY with the last stream it will answer, so
  // the client opens no more (RFC 9113 section 6.8).
  if (protocol_ == Protocol::http2 && heart_ != nullptr && phase_ == Phase::reading) {
    heart_->time_out(ctx_.output());
    send_output();
  }
  // Already waiting for the client's FIN: wait the shorter time.
  uint64_t end = ctx_.now_ms() + kDrainLingerMs;
  if (phase_ == Phase::lingering && deadline_ > end) deadline_ = end;
}

void Connection::on_timer() {
  HELLO_CHECK(heart_ != nullptr);
  if (phase_ == Phase::waiting) {
    answer_waiting();
    return;
  }
  if (phase_ == Phase::streaming) {
    drip();
    return;
  }
  if (protocol_ == Protocol::http2) {
    wake_heart();
    return;
  }
  // The header deadline of the request in progress has passed: 408.
  HELLO_CHECK(phase_ == Phase::reading);
  decide(CloseReason::header_timeout);
  answering().time_out(ctx_.output());
  Fed fed;
  fed.next = Fed::Next::close;
  fed.answered = 1;  // the 408, timed like any answer
  after_feed(fed, nullptr, 0, false, true);
}

// HTTP/2: the session's next wake-up (Fed::wake_us). Output still being
// written wakes it once written instead (on_written()).
void Connection::wake_at(uint64_t wake_us) {
  if (wake_us == Fed::kNever || (wake_us == 0 && writing()))
    ctx_.timers().stop(&timer_);
  else
    ctx_.timers().start(&timer_, wake_us * 1000);
}

// HTTP/2: what the session waited for has come (a delayed answer, a drip's
// piece, room for more output, a deadline).
void Connection::wake_heart() {
  read_ns_ = uv_hrtime();
  Fed fed = answering().resume(ctx_.output());
  after_feed(fed, nullptr, 0, false, true);
}

void Connection::start_header_timer() {
  ctx_.timers().start(&timer_, ctx_.deadlines().header_ms * kNsPerMs);
}

void Connection::check_deadlines(uint64_t now_ms) {
  switch (phase_) {
    case Phase::closing:
      return;
    case Phase::lingering:
      if (now_ms >= deadline_) close();
      return;
    default:
      break;
  }
  if (writing()) {
    if (now_ms >= pending_->deadline) close(CloseReason::send_timeout);  // the client does not read
    return;
  }
  // Idle too long between requests (or before the first): FIN.
  if (phase_ == Phase::reading && between_requests() && now_ms >= deadline_) {
    decide(CloseReason::keepalive_timeout);
    say_goodbye();
    if (phase_ == Phase::closing) return;  // the GOAWAY's write failed: closed
    end(false);
    finish_if_done();
  }
}

void Connection::check_drain(uint64_t now_ms) {
  if (phase_ == Phase::closing) return;
  if (phase_ == Phase::lingering) {
    if (now_ms >= deadline_) close();
    return;
  }
  if (!read_since_check_ && !writing() && phase_ == Phase::reading && between_requests()) {
    decide(CloseReason::shutdown);
    say_goodbye();
    if (phase_ == Phase::closing) return;  // as above
    end(false);
    finish_if_done();
  }
  read_since_check_ = false;
}

// An HTTP/2 connection closed between requests says so first: GOAWAY with
// the last stream it saw (RFC 9113 section 6.8). HTTP/1 has nothing to say.
void Connection::say_goodbye() {
  if (protocol_ != Protocol::http2 || heart_ == nullptr) return;
  heart_->time_out(ctx_.output());
  send_output();
}

}  // namespace hello
