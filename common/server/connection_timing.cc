// A Connection's deadlines: the header timer, the worker's sweep (the
// keep-alive and send timeouts, the linger after our FIN), the graceful
// stop, and the wake-ups of a heart that keeps its own time (HTTP/2).
#include <cstdint>

#include "base/check.h"
#include "server/connection.h"

namespace hello {

void Connection::drain() {
  if (phase_ == Phase::closing || draining_) return;
  draining_ = true;
  read_since_check_ = false;
  // A heart that has something to say says it at once (HTTP/2: GOAWAY
  // with the last stream it will answer, so the client opens no more).
  if (heart_ != nullptr && phase_ == Phase::reading) {
    heart_->goodbye(ctx_.output());
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
  if (heart_->keeps_time()) {
    wake_heart();
    return;
  }
  // The header deadline of the request in progress has passed: 408.
  HELLO_CHECK(phase_ == Phase::reading);
  decide(CloseReason::header_timeout);
  answering().time_out(ctx_.output());
  Fed fed;
  fed.next = Fed::Next::close;
  // The 408, timed like any answer; a heart with nothing to say (a floor,
  // or a request already answered) sends nothing to time.
  fed.answered = ctx_.output().empty() ? 0 : 1;
  after_feed(fed, nullptr, 0, false, true);
}

// A heart that keeps its own time: its next wake-up (Fed::wake_us). Output
// still being written wakes it once written instead (on_written()).
void Connection::wake_at(uint64_t wake_us) {
  if (wake_us == Fed::kNever || (wake_us == 0 && writing()))
    ctx_.timers().stop(&timer_);
  else
    ctx_.timers().start(&timer_, wake_us * 1000);
}

// What a heart that keeps its own time waited for has come (HTTP/2: a
// delayed answer, a drip's piece, room for more output, a deadline).
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

// A connection closed between requests says so first if its heart has
// something to say (HTTP/2: GOAWAY with the last stream it saw, RFC 9113
// section 6.8). A heart lent per request is gone by then: HTTP/1 has
// nothing to say.
void Connection::say_goodbye() {
  if (heart_ == nullptr) return;
  heart_->goodbye(ctx_.output());
  send_output();
}

}  // namespace hello
