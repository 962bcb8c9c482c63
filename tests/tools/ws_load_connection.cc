// One ws_load connection: see ws_load_connection.h.
#include "ws_load_connection.h"

#include <utility>

namespace ws_load {
namespace {

// send_out()'s answer when TLS, not libuv, failed.
constexpr int kTlsFailed = 1;

Connection* of(void* data) {
  return static_cast<Connection*>(data);
}

void on_connect(uv_connect_t* req, int status) {
  of(req->data)->on_connect(status);
}

void on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = of(handle->data)->read_buffer();
}

void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
  of(stream->data)->on_read(nread);
}

void on_write(uv_write_t* req, int status) {
  of(req->data)->on_write(status);
}

void on_close(uv_handle_t* handle) {
  of(handle->data)->on_closed();
}

}  // namespace

bool Connection::start() {
  expect(phase_ == Phase::kIdle, "start on a connection already started");
  if (int rc = uv_tcp_init(shared_.loop, &tcp_); rc < 0) {
    abandon(fmt::format("connect: {}", uv_strerror(rc)));
    return false;
  }
  tcp_.data = this;
  connect_.data = this;
  write_.data = this;
  phase_ = Phase::kConnecting;
  if (int rc = uv_tcp_connect(&connect_, &tcp_, shared_.address, ws_load::on_connect); rc < 0)
    fail(fmt::format("connect: {}", uv_strerror(rc)));
  return true;
}

void Connection::abandon(std::string why) {
  expect(phase_ == Phase::kIdle, "abandon on a connection started");
  phase_ = Phase::kClosed;
  outcome_ = Outcome::kHandshakeFailed;
  failure_ = std::move(why);
}

void Connection::start_sending() {
  expect(phase_ == Phase::kOpen, "start_sending on a connection not open");
  session_.start_sending(out_);
  queue_flush();
}

void Connection::send_close() {
  if (phase_ != Phase::kOpen) return;
  session_.send_close(out_);
  queue_flush();
}

void Connection::close(Outcome outcome, std::string why) {
  if (phase_ >= Phase::kClosing) return;
  expect(phase_ != Phase::kIdle, "close on a connection never started");
  if (outcome_ == Outcome::kNone) {
    outcome_ = outcome;
    failure_ = std::move(why);
  }
  // What is framed already (the answer to a server's close) goes out if
  // the socket takes it now; uv_close cancels whatever it does not.
  if (phase_ >= Phase::kSecuring && !writing_) (void)send_out();
  phase_ = Phase::kClosing;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ws_load::on_close);
}

void Connection::flush() {
  flush_queued_ = false;
  if (phase_ < Phase::kSecuring || phase_ >= Phase::kClosing || writing_) return;
  int rc = send_out();
  if (rc == kTlsFailed) return fail(tls_->failure());
  if (rc < 0) fail(fmt::format("write: {}", uv_strerror(rc)));
}

void Connection::on_connect(int status) {
  if (phase_ != Phase::kConnecting) return;  // closed meanwhile: status is UV_ECANCELED
  if (status < 0) return fail(fmt::format("connect: {}", uv_strerror(status)));
  // Each message is a small write that must not wait for the last one's ACK.
  if (int rc = uv_tcp_nodelay(&tcp_, 1); rc < 0)
    return fail(fmt::format("TCP_NODELAY: {}", uv_strerror(rc)));
  if (int rc = uv_read_start(stream(), on_alloc, ws_load::on_read); rc < 0)
    return fail(fmt::format("read: {}", uv_strerror(rc)));
  if (shared_.tls == nullptr) return begin_session();
  tls_ = std::make_unique<TlsSession>();
  if (const char* why = tls_->init(shared_.tls)) return fail(why);
  phase_ = Phase::kSecuring;
  if (tls_->handshake() == TlsSession::Step::kFailed) return fail(tls_->failure());
  queue_flush();  // the ClientHello
}

void Connection::on_read(ssize_t nread) {
  if (phase_ >= Phase::kClosing || nread == 0) return;  // 0: libuv's EAGAIN
  if (nread < 0) {
    return fail(nread == UV_EOF ? std::string("closed by the server without a close frame")
                                : fmt::format("read: {}", uv_strerror(static_cast<int>(nread))));
  }
  const uint8_t* p = shared_.read_buffer;
  if (tls_ != nullptr)
    read_tls(p, static_cast<size_t>(nread));
  else
    take_plain(p, static_cast<size_t>(nread));
}

void Connection::on_write(int status) {
  writing_ = false;
  wire_.clear();
  if (phase_ >= Phase::kClosing) return;  // UV_ECANCELED by uv_close, or done anyway
  if (status < 0) return fail(fmt::format("write: {}", uv_strerror(status)));
  // What was framed while this write was under way waits for it.
  queue_flush();
}

void Connection::on_closed() {
  expect(phase_ == Phase::kClosing, "a close callback on a connection not closing");
  phase_ = Phase::kClosed;
  shared_.owner->on_closed(*this);
}

uv_buf_t Connection::read_buffer() const {
  return uv_buf_init(reinterpret_cast<char*>(shared_.read_buffer), kReadBufferSize);
}

void Connection::begin_session() {
  phase_ = Phase::kUpgrading;
  session_.start(out_);
  queue_flush();
}

void Connection::read_tls(const uint8_t* p, size_t n) {
  if (!tls_->put_cipher(p, n)) return fail(tls_->failure());
  if (phase_ == Phase::kSecuring) {
    TlsSession::Step step = tls_->handshake();
    if (step == TlsSession::Step::kFailed) return fail(tls_->failure());
    queue_flush();  // the handshake's next flight, if it has one
    if (step == TlsSession::Step::kMore) return;
    begin_session();
  }
  // Each SSL_read takes at least one record, of at least one byte, out of
  // what was put; the bound is a backstop against one that takes none.
  for (size_t pass = 0; pass <= kReadBufferSize; ++pass) {
    long got = tls_->read(shared_.plain_buffer, kPlainBufferSize);
    if (got == 0) break;
    if (got < 0) return fail(tls_->failure());
    take_plain(shared_.plain_buffer, static_cast<size_t>(got));
    if (phase_ >= Phase::kClosing) return;
  }
  // Reading may have left TLS something to say (a key update's answer).
  queue_flush();
}

void Connection::take_plain(const uint8_t* p, size_t n) {
  Session::Phase before = session_.phase();
  session_.on_bytes(p, n, out_);
  Session::Phase now = session_.phase();
  if (now == Session::Phase::kFailed) return fail(session_.failure());
  if (before == Session::Phase::kUpgrading && now != Session::Phase::kUpgrading) {
    phase_ = Phase::kOpen;
    shared_.owner->on_open(*this);
  }
  if (now == Session::Phase::kClosed) return close(Outcome::kClean, {});
  if (!out_.empty()) queue_flush();
}

// Sends what is buffered with one uv_try_write; the tail the socket did not
// take is copied to wire_ and queued with one uv_write. 0, a libuv error,
// or kTlsFailed.
int Connection::send_out() {
  Buffer* from = &out_;
  if (tls_ != nullptr) {
    if (!out_.empty() && !tls_->write(out_.data(), out_.size())) return kTlsFailed;
    out_.clear();
    tls_->take_cipher(wire_);
    from = &wire_;
  }
  if (from->empty()) return 0;
  uv_buf_t buf =
      uv_buf_init(reinterpret_cast<char*>(from->data()), static_cast<unsigned>(from->size()));
  int sent = uv_try_write(stream(), &buf, 1);
  if (sent == UV_EAGAIN) sent = 0;
  if (sent < 0) return sent;
  if (static_cast<size_t>(sent) == from->size()) {
    from->clear();
    return 0;
  }
  if (from == &out_) {
    wire_.append(out_.data() + sent, out_.size() - static_cast<size_t>(sent));
    out_.clear();
  } else {
    wire_.consume(static_cast<size_t>(sent));
  }
  buf = uv_buf_init(reinterpret_cast<char*>(wire_.data()), static_cast<unsigned>(wire_.size()));
  if (int rc = uv_write(&write_, stream(), &buf, 1, ws_load::on_write); rc < 0) return rc;
  writing_ = true;
  return 0;
}

void Connection::queue_flush() {
  if (flush_queued_) return;
  flush_queued_ = true;
  shared_.owner->queue_flush(*this);
}

// Ends the connection for `why`: a handshake failure if the WebSocket had
// not opened yet, an error after.
void Connection::fail(std::string why) {
  close(phase_ < Phase::kOpen ? Outcome::kHandshakeFailed : Outcome::kFailed, std::move(why));
}

}  // namespace ws_load
