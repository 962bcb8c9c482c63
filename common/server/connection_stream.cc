// The streaming phase of a Connection: a body sent by reference to bytes
// the heart or the table owns (a shaped `size`), all at once or piece by
// piece on the timer (a `drip`), after the answers before it.
#include <algorithm>
#include <string>

#include "base/check.h"
#include "server/connection.h"

namespace hello {

namespace {

// One write hands the kernel at most this many pieces of a body.
constexpr int kStreamBufs = 16;

}  // namespace

void Connection::start_stream(const Fed& fed, const char* data, size_t len, bool held) {
  ctx_.timers().stop(&timer_);
  if (fed.next == Fed::Next::close) {
    release_held();
  } else if (held) {
    if (held_ != nullptr) held_->offset += fed.consumed;  // after resume(), nothing was fed
  } else if (fed.consumed < len) {
    hold(data + fed.consumed, len - fed.consumed);
  }
  enter(Phase::streaming);
  HELLO_CHECK(stream_ == nullptr);
  stream_ = ctx_.acquire_stream();
  BodyStream& s = *stream_;
  s.source = fed.body;
  s.closes = fed.next == Fed::Next::close;
  s.clean_end = fed.clean_end;
  if (fed.drip_us == 0) {
    s.due = fed.body.length;
  } else {
    s.drip.start(uv_hrtime(), fed.drip_us, fed.body.length);
  }
  // The requests answered so far are timed as their output is handed over
  // (a streamed body's head with them; the body follows).
  note_service(fed.answered, false);
  pump_stream(&ctx_.output());
}

void Connection::pump_stream(std::string* head) {
  if (phase_ != Phase::streaming) return;
  if (head != nullptr && !head->empty()) {
    if (writing()) {
      // The body follows once the write in flight and this are out.
      write(*head);
      head->clear();
      return;
    }
  } else {
    head = nullptr;
  }
  BodyStream& s = *stream_;
  const BodySource& src = s.source;
  while (!writing()) {
    uv_buf_t bufs[kStreamBufs + 1];
    int n = 0;
    size_t head_size = 0;
    if (head != nullptr) {
      head_size = head->size();
      bufs[n++] = uv_buf_init(const_cast<char*>(head->data()), static_cast<unsigned>(head_size));
    }
    uint64_t at = s.sent;
    while (n < kStreamBufs && at < s.due) {
      size_t offset = static_cast<size_t>(at % src.period);
      size_t piece = static_cast<size_t>(std::min<uint64_t>(src.period - offset, s.due - at));
      bufs[n++] = uv_buf_init(const_cast<char*>(src.base + offset), static_cast<unsigned>(piece));
      at += piece;
    }
    if (n == 0) break;
    int rc = transport_->try_write(bufs, static_cast<unsigned>(n), false);
    if (rc < 0 && rc != UV_EAGAIN) {
      close(failed_write(rc));
      return;
    }
    size_t written = rc < 0 ? 0 : static_cast<size_t>(rc);
    if (head != nullptr) {
      // Handed over now: what follows (the stream's end, parsing the
      // input behind it) must not send it again.
      ctx_.accounting().bytes_written(head_size);
      bool partial = written < head_size;
      if (partial) {
        // The rest of the head as an ordinary write; the body follows it.
        pending_ = ctx_.acquire_write();
        pending_->queued.assign(head->data() + written, head_size - written);
      }
      head->clear();
      if (partial) {
        write_queued();
        return;
      }
      written -= head_size;
      head = nullptr;
    }
    s.sent += written;
    ctx_.accounting().bytes_written(written);
    if (s.sent < at) {
      // The kernel is full: the rest of this piece by reference, and the
      // next ones once it is written.
      size_t offset = static_cast<size_t>(s.sent % src.period);
      size_t piece = static_cast<size_t>(std::min<uint64_t>(src.period - offset, at - s.sent));
      pending_ = ctx_.acquire_write();
      pending_->ref = {src.base + offset, piece};
      s.sent += piece;
      ctx_.accounting().bytes_written(piece);
      write_queued();
      return;
    }
  }
  if (writing()) return;
  if (s.sent == src.length) {
    finish_stream();
    return;
  }
  // A drip between pieces: the next one on the timer.
  if (s.sent == s.due && !timer_.active()) ctx_.timers().start_at(&timer_, s.drip.next_due_ns());
}

void Connection::drip() {
  BodyStream& s = *stream_;
  s.due = s.drip.advance(uv_hrtime(), s.source.length);
  pump_stream(nullptr);
}

void Connection::finish_stream() {
  ctx_.timers().stop(&timer_);
  BodyStream s = *stream_;
  release_stream();
  if (s.closes) {
    decide(CloseReason::answered);
    end(s.clean_end);
    finish_if_done();
    return;
  }
  // What arrived behind the body is parsed now, as after a waiting answer.
  enter(Phase::reading);
  read_ns_ = uv_hrtime();
  if (held_ != nullptr && held_->size() > 0) {
    consume(held_->bytes.data() + held_->offset, held_->size(), true);
    return;
  }
  after_feed(Fed{}, nullptr, 0, true, false);
}

}  // namespace hello
