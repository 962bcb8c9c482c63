// The session's bytes out and its times: answers' DATA within the windows
// and kMaxOutput a call, drips' pieces, the timeouts, and when it wants
// resume() next.
#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "http2/h2_session.h"

namespace hello {

// A call's frames go to `out`; the first call's start with our SETTINGS.
void H2Session::begin_output(std::string& out) {
  out_ = &out;
  out_start_ = out.size();
  more_ = false;
  if (!started_) {
    started_ = true;
    connection_.start(out);
  }
}

// What a read calls for once its frames are done: Tomcat's PING once its
// ACK of the client's SETTINGS is out (and an upgraded request's answer),
// the requests that ended in it answered, and the bodies the windows now
// let through. A read that ended the connection answers nothing more.
void H2Session::after_read() {
  if (connection_.failed()) {
    while (queue_ != nullptr) {
      queue_->queued = false;
      queue_ = queue_->queue_next;
    }
    queue_last_ = nullptr;
    return;
  }
  if (setup_.tomcat && connection_.acked_theirs() && !pinged_) {
    pinged_ = true;
    connection_.ping(*out_);
    if (upgraded_ != nullptr) request_ended(*std::exchange(upgraded_, nullptr));
  }
  answer_queued();
  deliver_all();
}

// The body of `s` as far as the windows, its due bytes and kMaxOutput go:
// DATA of at most a frame each, the last with END_STREAM (Tomcat's: an
// empty DATA after it).
void H2Session::deliver(H2Stream& s) {
  std::string& out = *out_;
  const BodySource& src = s.source;
  while (s.state == H2Stream::State::sending) {
    if (out.size() - out_start_ >= kMaxOutput) {
      more_ = true;
      return;
    }
    if (s.sent == src.length) {  // Tomcat's empty DATA that ends it
      connection_.data_head(s, 0, true, out);
      finish(s);
      return;
    }
    size_t n = std::min<uint64_t>(connection_.sendable(s), s.due - s.sent);
    if (n == 0) return;  // the windows hold it back, or a drip's next piece
    bool last = s.sent + n == src.length && !setup_.tomcat;
    connection_.data_head(s, n, last, out);
    for (size_t at = 0; at < n;) {
      size_t offset = static_cast<size_t>((s.sent + at) % src.period);
      size_t piece = std::min(n - at, src.period - offset);
      out.append(src.base + offset, piece);
      at += piece;
    }
    s.sent += n;
    progress_ns_ = 0;  // stamped once the call is over (step())
    if (last) {
      finish(s);
      return;
    }
  }
}

// The body's END_STREAM is out: the stream closes (the client's ended
// too), or, a refused request's, is reset so the client stops sending.
void H2Session::finish(H2Stream& s) {
  s.state = H2Stream::State::done;
  if (s.refused)
    connection_.reset(s, h2::kNoError, *out_);
  else
    connection_.sent_end(s);
}

void H2Session::deliver_all() {
  for (H2Stream* s = live_; s != nullptr;) {
    H2Stream* next = s->next;  // delivering may close the stream
    if (s->state == H2Stream::State::sending) deliver(*s);
    s = next;
  }
}

// What the connection does next, and when the session wants resume().
Fed H2Session::step(bool open) {
  Fed fed;
  if (!open) {
    fed.next = Fed::Next::close;
    // Never a clean end: a GOAWAY for an error (a flood, a bad frame) is
    // read by the client only if the close waits for its FIN, since a
    // client that floods is still writing (a close with its bytes unread
    // is a reset).
    fed.clean_end = false;
    fed.timeout = timed_out_;
    return fed;
  }
  fed.partial = live_count_ > 0;
  if (more_) {
    fed.wake_us = 0;
    return fed;
  }
  if (live_count_ == 0) {
    progress_ns_ = 0;  // a stream held back later is timed from then
    return fed;        // and no clock is read for the common case
  }
  uint64_t now = setup_.clock();
  if (progress_ns_ == 0) progress_ns_ = now;
  uint64_t wake = UINT64_MAX;
  for (H2Stream* s = live_; s != nullptr; s = s->next) {
    switch (s->state) {
      case H2Stream::State::receiving:
        if (s->begun_ns == 0) s->begun_ns = now;
        wake = std::min(wake, s->begun_ns + setup_.header_timeout_ns);
        break;
      case H2Stream::State::waiting:
        if (s != upgraded_) wake = std::min(wake, s->due_ns);
        break;
      case H2Stream::State::sending:
        if (s->sent < s->due)  // the peer's window holds it back
          wake = std::min(wake, progress_ns_ + setup_.send_timeout_ns);
        else if (s->sent < s->source.length)  // a drip between pieces
          wake = std::min(wake, s->due_ns);
        break;
      case H2Stream::State::done:
        break;
    }
  }
  if (wake != UINT64_MAX) fed.wake_us = wake > now ? (wake - now + 999) / 1000 : 0;
  return fed;
}

// Whatever has come due by `now`: answers, drips' pieces; a deadline
// passed ends the session with GOAWAY.
void H2Session::wake_due(uint64_t now) {
  for (H2Stream* s = live_; s != nullptr;) {
    H2Stream* next = s->next;  // answering may close the stream
    switch (s->state) {
      case H2Stream::State::receiving:
        if (s->begun_ns != 0 && now >= s->begun_ns + setup_.header_timeout_ns)
          timed_out_ = Fed::Timeout::header;
        break;
      case H2Stream::State::waiting:
        if (s != upgraded_ && !s->queued && now >= s->due_ns) answer(*s);
        break;
      case H2Stream::State::sending:
        if (s->sent < s->due) {
          if (progress_ns_ != 0 && now >= progress_ns_ + setup_.send_timeout_ns)
            timed_out_ = Fed::Timeout::send;
        } else if (s->sent < s->source.length && now >= s->due_ns) {
          // Due at due_ns: at least one more piece is due now.
          s->due = s->drip.advance(now, s->source.length);
          s->due_ns = s->drip.next_due_ns();
        }
        break;
      case H2Stream::State::done:
        break;
    }
    s = next;
  }
  if (timed_out_ != Fed::Timeout::none) connection_.go_away(h2::kNoError, *out_);
}

}  // namespace hello
