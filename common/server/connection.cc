#include "server/connection.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/check.h"

namespace hello {

namespace {

// Stop reading from a client while this much output waits for it, so a
// client that sends but never reads cannot make us buffer without bound.
constexpr size_t kMaxQueuedBytes = 1 << 20;

// Stop reading while this much input waits behind an answer: the size of
// one read, which holds hundreds of pipelined requests.
constexpr size_t kMaxHeldBytes = 64 * 1024;

// After our last response and FIN, wait this long for the client's FIN so
// it reads the answer instead of a reset, then close anyway. Checked by the
// worker's once-a-second sweep, so the wait is 2 to 3 s.
constexpr uint64_t kLingerMs = 2000;

// During shutdown the wait for the client's FIN is shorter: everything owed
// has been sent, and the process should not outlive its clients' manners.
constexpr uint64_t kDrainLingerMs = 200;

// A drip sends a piece about this often (docs/shaping.md).
constexpr uint64_t kDripPieceNs = 10 * 1000000;

// One write hands the kernel at most this many pieces of a body.
constexpr int kStreamBufs = 16;

// The longest numeric IPv6 address, with its terminating NUL.
constexpr size_t kPeerSize = 46;

constexpr uint64_t kNsPerMs = 1000000;

using Phase = Connection::Phase;

constexpr uint8_t bit(Phase p) {
  return static_cast<uint8_t>(1u << static_cast<int>(p));
}

// Which phases each phase may move to (bit i: Phase i); closing is always allowed.
constexpr uint8_t kNextPhases[] = {
    // reading
    static_cast<uint8_t>(bit(Phase::waiting) | bit(Phase::streaming) | bit(Phase::writing) |
                         bit(Phase::ending)),
    // waiting
    static_cast<uint8_t>(bit(Phase::reading) | bit(Phase::streaming) | bit(Phase::ending)),
    // streaming
    static_cast<uint8_t>(bit(Phase::reading) | bit(Phase::ending)),
    // writing
    bit(Phase::reading),
    // ending
    bit(Phase::lingering),
    // lingering
    0,
    // closing
    0,
};

}  // namespace

struct ConnectionCallbacks {
  static void timer(Timer* t) { static_cast<Connection*>(t->data)->on_timer(); }
};

Connection::Connection(ConnectionContext& ctx)
    : ctx_(ctx), peer_(ctx.accounting().logs() ? new char[kPeerSize] : nullptr) {
  timer_.on_fire = ConnectionCallbacks::timer;
  timer_.data = this;
}

void Connection::enter(Phase to) {
  HELLO_CHECK(to == Phase::closing ? phase_ != Phase::closing
                                   : (kNextPhases[static_cast<int>(phase_)] & bit(to)) != 0);
  phase_ = to;
}

void Connection::accept(uv_stream_t* server, Protocol protocol) {
  int rc = tcp_.accept(ctx_.loop(), server);
  attach(tcp_, protocol);
  if (rc != 0) {
    close();
    return;
  }
  begin();
}

void Connection::adopt(uv_os_sock_t fd, Protocol protocol) {
  int rc = tcp_.adopt(ctx_.loop(), fd);
  attach(tcp_, protocol);
  if (rc != 0) {
    close();
    return;
  }
  begin();
}

void Connection::start(Transport& transport, Protocol protocol) {
  attach(transport, protocol);
  begin();
}

void Connection::attach(Transport& transport, Protocol protocol) {
  HELLO_CHECK(phase_ == Phase::closing);  // new, or back from the pool
  transport_ = &transport;
  transport.attach(this, ctx_.read_buffer());
  protocol_ = protocol;
  phase_ = Phase::reading;
}

// The socket inherits TCP_NODELAY from the listener (see Worker).
void Connection::begin() {
  HELLO_CHECK(heart_ == nullptr && pending_ == nullptr && held_ == nullptr && stream_ == nullptr &&
              !timer_.active());
  peer_done_ = draining_ = read_since_check_ = clean_end_ = false;
  close_reason_ = CloseReason::none;
  pending_since_ns_ = 0;
  carried_answers_ = 0;
  if (peer_) {
    transport_->peer_name(peer_.get(), kPeerSize);
    peer_length_ = static_cast<uint8_t>(strlen(peer_.get()));
  }
  start_reading();
  if (phase_ == Phase::closing) return;
  // A new connection has the header timeout to send its first request.
  deadline_ = ctx_.now_ms() + ctx_.deadlines().header_ms;
}

void Connection::start_reading() {
  if (transport_->start_reading() != 0) close();
}

// Accepted once its first bytes arrived (TCP_DEFER_ACCEPT): the request is
// read now instead of a loop turn later.
void Connection::read_now() {
  if (phase_ == Phase::reading) transport_->read_now();
}

void Connection::stop_reading() {
  transport_->stop_reading();
}

void Connection::close(CloseReason why) {
  if (phase_ == Phase::closing) return;
  decide(why);
  enter(Phase::closing);
  // Nothing fires on a closed connection.
  ctx_.timers().stop(&timer_);
  transport_->close(false);
}

void Connection::drain() {
  if (phase_ == Phase::closing || draining_) return;
  draining_ = true;
  read_since_check_ = false;
  // Already waiting for the client's FIN: wait the shorter time.
  uint64_t end = ctx_.now_ms() + kDrainLingerMs;
  if (phase_ == Phase::lingering && deadline_ > end) deadline_ = end;
}

// The transport has reported a cancelled write, if any, before this.
void Connection::on_closed() {
  HELLO_CHECK(pending_ == nullptr && !timer_.active());
  ctx_.accounting().closed(close_reason_);
  release_held();
  release_stream();
  release_heart();
  ctx_.owner().release(this);
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (phase_ == Phase::closing) return;
  if (nread > 0) {
    read_since_check_ = true;
    ctx_.accounting().read(static_cast<uint64_t>(nread));
    if (phase_ == Phase::reading) {
      read_ns_ = uv_hrtime();
      consume(buf->base, static_cast<size_t>(nread), false);
    } else if (phase_ == Phase::waiting || phase_ == Phase::streaming)
      hold(buf->base, static_cast<size_t>(nread));
    // ending, lingering: the client's remaining bytes are drained and
    // ignored while our last response goes out.
    return;
  }
  if (nread == 0) return;  // EAGAIN: nothing this time
  if (nread != UV_EOF) {
    // Reset or another hard error: nobody is left to answer.
    close(nread == UV_ECONNRESET ? CloseReason::client : CloseReason::error);
    return;
  }
  peer_done_ = true;
  decide(CloseReason::client);
  stop_reading();
  // A client that leaves while its answer waits does not get it, as nginx
  // treats a client that closes before its upstream answers: the wait is
  // cancelled and everything is given back at once.
  if (phase_ == Phase::waiting) {
    close();
    return;
  }
  finish_if_done();
}

void Connection::consume(const char* data, size_t len, bool held) {
  bool was_partial = heart_ != nullptr;
  if (pending_since_ns_ == 0) pending_since_ns_ = read_ns_;
  if (heart_ == nullptr) {
    heart_ = ctx_.acquire_heart(protocol_);
    heart_->reset();
  }
  ctx_.accounting().serving({peer_.get(), peer_length_});
  Fed fed = heart_->feed(data, len, ctx_.output());
  after_feed(fed, data, len, held, was_partial);
}

void Connection::after_feed(const Fed& fed, const char* data, size_t len, bool held,
                            bool was_partial) {
  if (fed.streams()) [[unlikely]] {
    start_stream(fed, data, len, held);
    return;
  }
  switch (fed.next) {
    case Fed::Next::read:
      if (fed.partial) {
        // A request began: it has the header timeout from now to complete.
        if (!was_partial || fed.answered > 0) start_header_timer();
      } else {
        // Between requests the heart holds nothing worth keeping.
        ctx_.timers().stop(&timer_);
        release_heart();
        deadline_ = ctx_.now_ms() + ctx_.deadlines().keep_alive_ms;
      }
      release_held();  // all of it was parsed
      break;
    case Fed::Next::later:
      enter(Phase::waiting);
      ctx_.timers().start(&timer_, fed.delay_us * 1000);
      if (held)
        held_->offset += fed.consumed;
      else if (fed.consumed < len)
        hold(data + fed.consumed, len - fed.consumed);
      break;
    case Fed::Next::close:
      release_held();  // nothing after the last answer is parsed
      if (fed.reset) [[unlikely]] {
        send_output();  // the answers before it, as far as the kernel takes them at once
        decide(CloseReason::reset);
        reset();
        return;
      }
      decide(CloseReason::answered);
      end(fed.clean_end);
      break;
  }
  send_output();
  note_service(fed.answered, fed.next == Fed::Next::later || fed.partial);
  if (phase_ == Phase::closing) return;
  if (phase_ == Phase::reading) {
    if (writing() && pending_->queued.size() + pending_->backlog.size() > kMaxQueuedBytes) {
      ctx_.timers().stop(&timer_);
      stop_reading();
      enter(Phase::writing);
    } else if (held_ == nullptr && !peer_done_) {
      start_reading();
      if (phase_ == Phase::closing) return;
    }
  }
  finish_if_done();
}

void Connection::note_service(uint32_t answered, bool pending) {
  answered += std::exchange(carried_answers_, 0);
  if (answered > 0) {
    // The first answer's request began when the oldest pending one did;
    // the others began in the read being consumed.
    uint64_t now = uv_hrtime();
    ctx_.accounting().served(now - pending_since_ns_, now - read_ns_, answered);
  }
  pending_since_ns_ = !pending ? 0 : answered > 0 ? read_ns_ : pending_since_ns_;
}

void Connection::start_header_timer() {
  ctx_.timers().start(&timer_, ctx_.deadlines().header_ms * kNsPerMs);
}

void Connection::hold(const char* data, size_t len) {
  if (held_ == nullptr) held_ = ctx_.acquire_held();
  HeldInput& h = *held_;
  if (h.offset == h.bytes.size()) {
    h.bytes.clear();
    h.offset = 0;
  }
  h.bytes.append(data, len);
  // A client pipelining far ahead waits in its socket buffer instead.
  if (h.size() >= kMaxHeldBytes) stop_reading();
}

void Connection::release_held() {
  if (held_ == nullptr) return;
  ctx_.release_held(std::exchange(held_, nullptr));
}

void Connection::release_stream() {
  if (stream_ == nullptr) return;
  ctx_.release_stream(std::exchange(stream_, nullptr));
}

void Connection::release_heart() {
  if (heart_ == nullptr) return;
  ctx_.release_heart(protocol_, std::exchange(heart_, nullptr));
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
  // The header deadline of the request in progress has passed: 408.
  HELLO_CHECK(phase_ == Phase::reading);
  decide(CloseReason::header_timeout);
  ctx_.accounting().serving({peer_.get(), peer_length_});
  heart_->time_out(ctx_.output());
  Fed fed;
  fed.next = Fed::Next::close;
  fed.answered = 1;  // the 408, timed like any answer
  after_feed(fed, nullptr, 0, false, true);
}

// The waiting answer is due. What arrived behind it is parsed now, and its
// answers leave in the same write as the waiting one.
void Connection::answer_waiting() {
  // Requests held behind the waiting one are timed from now, when the
  // connection turns to them.
  read_ns_ = uv_hrtime();
  ctx_.accounting().serving({peer_.get(), peer_length_});
  Fed fed = heart_->resume(ctx_.output());
  bool input_held = held_ != nullptr && held_->size() > 0;
  if (fed.next == Fed::Next::close) {
    fed.clean_end = fed.clean_end && !input_held;
  } else if (!fed.streams()) {
    enter(Phase::reading);
    if (input_held) {
      // Its answer leaves with the held input's: counted with theirs.
      carried_answers_ = fed.answered;
      consume(held_->bytes.data() + held_->offset, held_->size(), true);
      return;
    }
  }
  after_feed(fed, nullptr, 0, true, false);
}

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
    s.start_ns = uv_hrtime();
    s.drip_ns = fed.drip_us * 1000;
    s.pieces = static_cast<uint32_t>(
        std::min<uint64_t>(fed.body.length, std::max<uint64_t>(1, s.drip_ns / kDripPieceNs)));
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
      send(*head);
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
      close();
      return;
    }
    size_t written = rc < 0 ? 0 : static_cast<size_t>(rc);
    if (head != nullptr) {
      // Handed over now: what follows (the stream's end, parsing the
      // input behind it) must not send it again.
      ctx_.accounting().wrote(head_size);
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
    ctx_.accounting().wrote(written);
    if (s.sent < at) {
      // The kernel is full: the rest of this piece by reference, and the
      // next ones once it is written.
      size_t offset = static_cast<size_t>(s.sent % src.period);
      size_t piece = static_cast<size_t>(std::min<uint64_t>(src.period - offset, at - s.sent));
      pending_ = ctx_.acquire_write();
      pending_->ref = {src.base + offset, piece};
      s.sent += piece;
      ctx_.accounting().wrote(piece);
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
  if (s.sent == s.due && !timer_.active()) {
    uint64_t next = s.pieces_due + 1;
    uint64_t due_ns = s.start_ns + (s.drip_ns * next + s.pieces - 1) / s.pieces;
    ctx_.timers().start_at(&timer_, due_ns);
  }
}

void Connection::drip() {
  BodyStream& s = *stream_;
  uint64_t elapsed = uv_hrtime() - s.start_ns;
  uint64_t due = std::min<uint64_t>(s.pieces, elapsed * s.pieces / s.drip_ns);
  if (due > s.pieces_due) {
    s.pieces_due = static_cast<uint32_t>(due);
    s.due = s.source.length * due / s.pieces;
  }
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

void Connection::reset() {
  if (phase_ == Phase::closing) return;  // sending the answers before it failed
  enter(Phase::closing);
  ctx_.timers().stop(&timer_);
  transport_->close(true);
}

void Connection::end(bool clean) {
  ctx_.timers().stop(&timer_);
  clean_end_ = clean;
  enter(Phase::ending);
}

// Sends what the heart appended to the worker's output buffer, which is
// empty again afterwards.
void Connection::send_output() {
  std::string& out = ctx_.output();
  if (!out.empty()) send(out);
  out.clear();
}

void Connection::send(const std::string& out) {
  ctx_.accounting().wrote(out.size());
  if (writing()) {
    pending_->backlog.append(out);
    return;
  }
  int n = try_send(out);
  if (n == static_cast<int>(out.size())) return;
  if (n < 0 && n != UV_EAGAIN) {
    close();
    return;
  }
  if (n < 0) n = 0;
  pending_ = ctx_.acquire_write();
  pending_->queued.assign(out, static_cast<size_t>(n));
  write_queued();
}

// Writes what the kernel takes now. The answer a connection ends with is
// its last bytes: the transport may hold them for the FIN that
// finish_if_done() sends next, so both leave in one segment.
int Connection::try_send(const std::string& out) {
  uv_buf_t buf = uv_buf_init(const_cast<char*>(out.data()), static_cast<unsigned>(out.size()));
  return transport_->try_write(&buf, 1, phase_ == Phase::ending);
}

void Connection::write_queued() {
  pending_->deadline = ctx_.now_ms() + ctx_.deadlines().send_ms;
  uv_buf_t bufs[2];
  unsigned n = 0;
  if (!pending_->queued.empty())
    bufs[n++] =
        uv_buf_init(pending_->queued.data(), static_cast<unsigned>(pending_->queued.size()));
  if (!pending_->ref.empty())
    bufs[n++] = uv_buf_init(const_cast<char*>(pending_->ref.data()),
                            static_cast<unsigned>(pending_->ref.size()));
  HELLO_CHECK(n > 0);
  if (transport_->write(&pending_->req, bufs, n) != 0) {
    ctx_.release_write(std::exchange(pending_, nullptr));
    close();
  }
}

void Connection::on_written(int status) {
  if (phase_ == Phase::closing || status < 0) {
    // Cancelled by close(), or the write failed.
    ctx_.release_write(std::exchange(pending_, nullptr));
    close();
    return;
  }
  pending_->ref = {};
  if (!pending_->backlog.empty()) {
    std::swap(pending_->queued, pending_->backlog);
    pending_->backlog.clear();
    write_queued();
    return;
  }
  ctx_.release_write(std::exchange(pending_, nullptr));
  if (phase_ == Phase::streaming) {
    pump_stream(nullptr);
    return;
  }
  if (phase_ == Phase::writing) {
    enter(Phase::reading);
    start_reading();
    if (phase_ == Phase::closing) return;
    // The client's bytes waited in the socket while we did not read: its
    // deadlines and the drain check start over from now.
    read_since_check_ = true;
    if (heart_ != nullptr) start_header_timer();
  }
  // Idle from the moment the last answer was out, not from the last read.
  if (phase_ == Phase::reading && heart_ == nullptr)
    deadline_ = ctx_.now_ms() + ctx_.deadlines().keep_alive_ms;
  finish_if_done();
}

// True if the client has sent bytes that nobody will read. Closing a
// socket with unread input sends a reset, which can destroy our last answer
// before the client reads it.
bool Connection::unread_input() {
  return !clean_end_ || transport_->unread_input();
}

// Ends the connection once nothing more will be sent: straight away if the
// client is gone or sent nothing we did not read (as nginx does), else with
// a FIN and a bounded wait for the client's own.
void Connection::finish_if_done() {
  // A body being streamed is finished first, even for a client that sent EOF.
  if (phase_ == Phase::closing || phase_ == Phase::streaming || writing()) return;
  if (peer_done_) {
    close();
    return;
  }
  if (phase_ != Phase::ending) return;
  if (!unread_input()) {
    close();
    return;
  }
  if (transport_->shutdown() != 0) {
    close();
    return;
  }
  enter(Phase::lingering);
  deadline_ = ctx_.now_ms() + (draining_ ? kDrainLingerMs : kLingerMs);
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
  if (phase_ == Phase::reading && heart_ == nullptr && now_ms >= deadline_) {
    decide(CloseReason::keepalive_timeout);
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
  if (!read_since_check_ && !writing() && phase_ == Phase::reading && heart_ == nullptr) {
    decide(CloseReason::shutdown);
    end(false);
    finish_if_done();
  }
  read_since_check_ = false;
}

}  // namespace hello
