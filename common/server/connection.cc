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

// The longest numeric IPv6 address, with its terminating NUL.
constexpr size_t kPeerSize = 46;

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
  static Connection* of(void* data) { return static_cast<Connection*>(data); }
  static void timer(Timer* t) { of(t->data)->on_timer(); }
  static void read(void* c, ssize_t nread, const uv_buf_t* buf) { of(c)->on_read(nread, buf); }
  static void written(void* c, int status) { of(c)->on_written(status); }
  static void closed(void* c) { of(c)->on_closed(); }
  static void misdirected(void* c) { of(c)->on_misdirected(); }
  static constexpr Transport::Events kEvents = {read, written, closed, misdirected};
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
  open_tcp(tcp_.accept(ctx_.loop(), server), protocol);
}

void Connection::adopt(uv_os_sock_t fd, Protocol protocol) {
  open_tcp(tcp_.adopt(ctx_.loop(), fd), protocol);
}

// `rc`: how accepting or adopting the socket went (0, or a libuv error).
// The connection speaks through the transport its context makes over the
// socket; if none can be made, the socket closes.
void Connection::open_tcp(int rc, Protocol protocol) {
  if (rc == 0) made_ = ctx_.make_transport(tcp_);
  attach(made_ != nullptr ? *made_ : tcp_, protocol);
  if (made_ == nullptr) {
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
  transport.attach(&ConnectionCallbacks::kEvents, this, ctx_.read_buffer());
  protocol_ = protocol;
  phase_ = Phase::reading;
  first_read_ = true;
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
    peer_port_ = transport_->peer_name(peer_.get(), kPeerSize);
    peer_length_ = static_cast<uint8_t>(strlen(peer_.get()));
  }
  start_reading();
  if (phase_ == Phase::closing) return;
  // A new connection has the header timeout to send its first request.
  deadline_ = ctx_.now_ms() + ctx_.deadlines().header_ms;
}

void Connection::start_reading() {
  if (!transport_->reading() && transport_->start_reading() != 0) close();
}

// Accepted once its first bytes arrived (TCP_DEFER_ACCEPT): the request is
// read now instead of a loop turn later.
void Connection::read_now() {
  if (phase_ == Phase::reading) transport_->read_now();
}

void Connection::stop_reading() {
  if (transport_->reading()) transport_->stop_reading();
}

void Connection::close(CloseReason why) {
  if (phase_ == Phase::closing) return;
  decide(why);
  shut(false);
}

void Connection::shut(bool abort) {
  enter(Phase::closing);
  // Nothing fires on a closed connection.
  ctx_.timers().stop(&timer_);
  transport_->close(abort);
}

// The heart, about to be asked for answers: the sink learns whose they are.
Heart& Connection::answering() {
  ctx_.accounting().serving({peer_.get(), peer_length_}, peer_port_,
                            pending_since_ns_ != 0 ? pending_since_ns_ : read_ns_, read_ns_);
  return *heart_;
}

// The transport has reported a cancelled write, if any, before this.
void Connection::on_closed() {
  HELLO_CHECK(pending_ == nullptr && !timer_.active());
  ctx_.accounting().closed(close_reason_);
  release_held();
  release_stream();
  // A kept heart may report the connection's end as its own (a WebSocket's
  // access-log line): the sink learns whose it is first.
  if (heart_ != nullptr) answering();
  release_heart();
  if (made_ != nullptr) ctx_.take_transport(std::exchange(made_, nullptr), tcp_);
  ctx_.release(this);
}

// Plain HTTP on a TLS port: the persona's answer to malformed input, in
// clear, and the connection ends (nginx answers such a request with 400 too).
void Connection::on_misdirected() {
  if (phase_ != Phase::reading) return;
  read_ns_ = uv_hrtime();
  if (pending_since_ns_ == 0) pending_since_ns_ = read_ns_;
  borrow_heart();
  decide(CloseReason::error);
  answering().refuse(ctx_.output());
  Fed fed;
  fed.next = Fed::Next::close;
  fed.answered = ctx_.output().empty() ? 0 : 1;
  after_feed(fed, nullptr, 0, false, true);
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (phase_ == Phase::closing) return;
  if (nread > 0) {
    read_since_check_ = true;
    ctx_.accounting().bytes_read(static_cast<uint64_t>(nread));
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
  if (first_read_) [[unlikely]] {
    first_read_ = false;
    protocol_ = ctx_.protocol_at_first_read(protocol_, transport_->negotiated_h2(), {data, len});
  }
  bool was_partial = heart_ != nullptr && !between_requests();
  if (pending_since_ns_ == 0) pending_since_ns_ = read_ns_;
  borrow_heart();
  Fed fed = answering().feed(data, len, ctx_.output());
  after_feed(fed, data, len, held, was_partial);
}

void Connection::after_feed(const Fed& fed, const char* data, size_t len, bool held,
                            bool was_partial) {
  if (fed.upgrade) [[unlikely]] {
    switch_heart(fed, data, len, held);
    return;
  }
  if (fed.streams()) [[unlikely]] {
    start_stream(fed, data, len, held);
    return;
  }
  switch (fed.next) {
    case Fed::Next::read:
      if (heart_->keeps_time()) [[unlikely]] {
        // The heart keeps its requests' deadlines: the timer is its wake-up.
        wake_at(fed.wake_us);
      } else if (fed.partial) {
        // A request began: it has the header timeout from now to complete.
        if (!was_partial || fed.answered > 0) start_header_timer();
      } else {
        ctx_.timers().stop(&timer_);
      }
      if (!fed.partial) {
        // Between requests a heart lent per request holds nothing worth
        // keeping; a kept one holds its session.
        if (!heart_->kept()) release_heart();
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
      decide(fed.timeout == Fed::Timeout::header ? CloseReason::header_timeout
             : fed.timeout == Fed::Timeout::send ? CloseReason::send_timeout
                                                 : CloseReason::answered);
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

// The request that ends at fed.consumed switches protocols (Upgrade: h2c,
// docs/http2.md): the old heart hands its request to a heart of the new
// protocol, which answers it (HTTP/2: as stream 1); what the client sent
// after it is in the new protocol (HTTP/2: its preface), fed to the new heart.
void Connection::switch_heart(const Fed& fed, const char* data, size_t len, bool held) {
  Heart* old = std::exchange(heart_, nullptr);
  const Upgrade& upgrade = *old->upgrade();
  Protocol was = std::exchange(protocol_, ctx_.protocol_after_upgrade(upgrade));
  borrow_heart();
  Fed taken = answering().upgraded(upgrade, ctx_.output());
  ctx_.release_heart(was, old);
  size_t rest = len - fed.consumed;
  if (taken.next == Fed::Next::read && rest > 0) {
    uint32_t answered = taken.answered;
    taken = answering().feed(data + fed.consumed, rest, ctx_.output());
    taken.answered += answered;
  }
  after_feed(taken, data, len, held, true);
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

// A heart for the request that begins, reset, unless one is borrowed.
void Connection::borrow_heart() {
  if (heart_ != nullptr) return;
  heart_ = ctx_.acquire_heart(protocol_);
  heart_->reset();
}

// Released as it goes back (a kept heart lets go of its session only now,
// at the connection's end).
void Connection::release_heart() {
  if (heart_ == nullptr) return;
  ctx_.release_heart(protocol_, std::exchange(heart_, nullptr));
}

// The waiting answer is due. What arrived behind it is parsed now, and its
// answers leave in the same write as the waiting one.
void Connection::answer_waiting() {
  // Requests held behind the waiting one are timed from now, when the
  // connection turns to them.
  read_ns_ = uv_hrtime();
  Fed fed = answering().resume(ctx_.output());
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

void Connection::reset() {
  if (phase_ == Phase::closing) return;  // sending the answers before it failed
  shut(true);
}

void Connection::end(bool clean) {
  ctx_.timers().stop(&timer_);
  clean_end_ = clean;
  enter(Phase::ending);
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

}  // namespace hello
