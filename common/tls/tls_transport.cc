#include "tls/tls_transport.h"

#include <openssl/err.h>
#include <openssl/obj_mac.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "tls/tls_context.h"

namespace hello {

// OpenSSL's side of the socket: reads the ciphertext of the read being
// handled, writes into the worker's scratch buffer.
int tls_bio_write(BIO* bio, const char* data, int len) {
  auto* t = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  t->shared_.cipher_out.append(data, static_cast<size_t>(len));
  return len;
}

int tls_bio_read(BIO* bio, char* data, int len) {
  auto* t = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (t->in_len_ == 0) {
    BIO_set_retry_read(bio);
    return -1;
  }
  size_t n = std::min(t->in_len_, static_cast<size_t>(len));
  memcpy(data, t->in_, n);
  t->in_ += n;
  t->in_len_ -= n;
  return static_cast<int>(n);
}

namespace {

long tls_bio_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int tls_bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// Made once for the process (C++ guarantees one thread makes it).
BIO_METHOD* bio_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "hello-tls");
    HELLO_CHECK(m != nullptr);
    BIO_meth_set_write(m, tls_bio_write);
    BIO_meth_set_read(m, tls_bio_read);
    BIO_meth_set_ctrl(m, tls_bio_ctrl);
    BIO_meth_set_create(m, tls_bio_create);
    return m;
  }();
  return method;
}

// What a handshake that failed for OpenSSL's `reason` (0: not OpenSSL's)
// is counted as.
TlsHandshake::End end_of(int reason) {
  switch (reason) {
    // (Not SSL_R_WRONG_VERSION_NUMBER: OpenSSL says that of any record
    // header without version 3, which is what garbage looks like; a TLS 1.0
    // or 1.1 ClientHello fails as unsupported.)
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
      return TlsHandshake::End::version;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SUITABLE_KEY_SHARE:
      return TlsHandshake::End::cipher;
    default:
      return TlsHandshake::End::other;
  }
}

// The cipher a handshake agreed on, by OpenSSL's NID.
TlsHandshake::Cipher cipher_of(int nid) {
  if (nid == NID_aes_128_gcm) return TlsHandshake::Cipher::aes_128_gcm;
  if (nid == NID_aes_256_gcm) return TlsHandshake::Cipher::aes_256_gcm;
  if (nid == NID_chacha20_poly1305) return TlsHandshake::Cipher::chacha20;
  return TlsHandshake::Cipher::other;
}

}  // namespace

struct TlsCallbacks {
  static TlsTransport* of(void* data) { return static_cast<TlsTransport*>(data); }
  static void read(void* t, ssize_t nread, const uv_buf_t* buf) {
    of(t)->on_lower_read(nread, buf);
  }
  static void written(void* t, int status) { of(t)->on_lower_written(status); }
  static void closed(void* t) { of(t)->on_lower_closed(); }
  static void misdirected(void*) {}  // the transport under TLS never reports it
  static constexpr Transport::Events kLower = {read, written, closed, misdirected};
};

TlsShared::TlsShared(SSL_CTX* context, Accounting& sink) : ctx(context), accounting(sink) {
  cipher_out.reserve(kFlushAt + 2 * kRecord);
}

TlsTransport::~TlsTransport() {
  SSL_free(ssl_);
}

bool TlsTransport::wrap(Transport& lower) {
  HELLO_CHECK(ssl_ == nullptr && !flying_ && q_ == nullptr);
  lower_ = &lower;
  ssl_ = SSL_new(shared_.ctx);
  BIO* bio = ssl_ != nullptr ? BIO_new(bio_method()) : nullptr;
  if (bio == nullptr) {
    SSL_free(std::exchange(ssl_, nullptr));
    ERR_clear_error();
    return false;
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_accept_state(ssl_);
  state_ = State::handshake;
  reading_ = shutdown_wanted_ = counted_ = h2_ = false;
  write_error_ = 0;
  lower.attach(&TlsCallbacks::kLower, this,
               uv_buf_init(shared_.cipher_in, sizeof shared_.cipher_in));
  return true;
}

int TlsTransport::start_reading() {
  int rc = lower_->start_reading();
  if (rc == 0) reading_ = true;
  return rc;
}

void TlsTransport::stop_reading() {
  lower_->stop_reading();
  reading_ = false;
}

void TlsTransport::read_now() {
  lower_->read_now();
}

void TlsTransport::on_lower_read(ssize_t nread, const uv_buf_t* buf) {
  if (state_ == State::closed || state_ == State::plain) return;  // plain: the rest is ignored
  if (nread <= 0) {
    if (nread == 0) return;
    report_read(nread, buf);
    return;
  }
  in_ = buf->base;
  in_len_ = static_cast<size_t>(nread);
  // A TLS connection opens with a handshake record (22); an HTTP request
  // with the letters of its method.
  if (state_ == State::handshake && SSL_in_before(ssl_) && in_[0] >= 'A' && in_[0] <= 'Z') {
    in_len_ = 0;
    counted_ = true;
    shared_.accounting.tls_handshake({TlsHandshake::End::plain_http});
    state_ = State::plain;
    report_misdirected();
    return;
  }
  if (state_ == State::handshake) handshake();
  if (state_ == State::open) decrypt();
  in_ = nullptr;
  in_len_ = 0;
}

// Goes on with the handshake; on its end, counts it and opens the way for
// plaintext (which may follow in the same read).
bool TlsTransport::handshake() {
  int rc = SSL_do_handshake(ssl_);
  if (rc != 1) {
    int err = SSL_get_error(ssl_, rc);
    if (err != SSL_ERROR_WANT_READ) {
      failed(err);
      return false;
    }
    if (int sent = flush(false); sent < 0) report_read(sent, nullptr);
    return false;
  }
  TlsHandshake h;
  h.end = SSL_session_reused(ssl_) ? TlsHandshake::End::resumed : TlsHandshake::End::full;
  h.tls13 = SSL_version(ssl_) == TLS1_3_VERSION;
  h.cipher = cipher_of(SSL_CIPHER_get_cipher_nid(SSL_get_current_cipher(ssl_)));
  counted_ = true;
  shared_.accounting.tls_handshake(h);
  state_ = State::open;
  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_len);
  h2_ = alpn_len == 2 && alpn[0] == 'h' && alpn[1] == '2';
  // What the handshake wrote last (TLS 1.3's tickets, TLS 1.2's last
  // flight) waits in cipher_out for decrypt(): with the answers to a
  // request that came in the same read, one write; alone at once
  // otherwise (a client that waits for it, or for its ACK, as one with
  // Nagle's algorithm on does before it sends its request, is not kept
  // waiting for the request).
  return true;
}

// The handshake failed: the alert OpenSSL wrote goes out, the failure is
// counted by why, and the connection hears of an error and closes.
void TlsTransport::failed(int ssl_error) {
  int reason = ssl_error == SSL_ERROR_SSL ? ERR_GET_REASON(ERR_peek_error()) : 0;
  ERR_clear_error();
  TlsHandshake h;
  h.end = end_of(reason);
  counted_ = true;
  shared_.accounting.tls_handshake(h);
  flush(true);
  report_read(UV_EPROTO, nullptr);
}

// Decrypts everything the read brought and hands it up in one piece, then
// the client's close_notify (as an EOF) or a bad record (as an error).
void TlsTransport::decrypt() {
  size_t got = 0;
  int err = SSL_ERROR_WANT_READ;
  for (;;) {
    size_t n = 0;
    HELLO_CHECK(got < buffer_.len);  // see kCipherBufferSize
    if (SSL_read_ex(ssl_, buffer_.base + got, buffer_.len - got, &n) == 1) {
      got += n;
      // The read's ciphertext all taken and no record left half read: a
      // next call could only want more (and costs a call into the record
      // layer per read).
      if (in_len_ == 0 && SSL_has_pending(ssl_) == 0) break;
      continue;
    }
    err = SSL_get_error(ssl_, 0);
    break;
  }
  if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_ZERO_RETURN) ERR_clear_error();
  // What OpenSSL wrote while reading (tickets, a key update's answer)
  // leaves with the answers the plaintext brings, in their write; only
  // what no answer took is sent on its own.
  if (got > 0) {
    uv_buf_t plain = uv_buf_init(buffer_.base, static_cast<unsigned>(got));
    report_read(static_cast<ssize_t>(got), &plain);
    if (state_ == State::closed) return;
  }
  if (int sent = flush(false); sent < 0) {
    report_read(sent, nullptr);
    return;
  }
  if (err == SSL_ERROR_ZERO_RETURN)
    report_read(UV_EOF, nullptr);
  else if (err != SSL_ERROR_WANT_READ)
    report_read(UV_EPROTO, nullptr);
}

// Always, while TLS flows: a TLS client answers our close_notify with its
// own (or keeps sending records until it reads ours), so the connection
// ends as it does after unread input, with close_notify and the FIN, then
// a bounded wait for the client's end. Closing at once instead reset the
// connection whenever the client's next records came in before the
// close, and the reset discarded the answer the kernel still held for the
// FIN (seen with the hardening rows sent a byte per record). In clear
// (plain HTTP to the port), as TCP.
bool TlsTransport::unread_input() {
  return state_ == State::open || lower_->unread_input();
}

// close_notify, then the FIN once everything before it is sent.
int TlsTransport::shutdown() {
  if (state_ == State::open && (SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN) == 0) {
    SSL_shutdown(ssl_);
    ERR_clear_error();
    if (int rc = flush(true); rc < 0) return rc;
  }
  if (flying_) {
    shutdown_wanted_ = true;
    return 0;
  }
  return lower_->shutdown();
}

// A close without abort says close_notify first, if the kernel takes it
// now; an abort (shaping's `reset`) is a TCP reset and nothing else.
void TlsTransport::close(bool abort) {
  if (state_ == State::closed) return;
  // Closed before the handshake ended: the client left, or its deadline passed.
  if (!counted_) shared_.accounting.tls_handshake({TlsHandshake::End::client_left});
  if (!abort && state_ == State::open && !flying_ &&
      (SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN) == 0) {
    SSL_shutdown(ssl_);
    ERR_clear_error();
    flush(true);
  }
  shared_.cipher_out.clear();
  state_ = State::closed;
  reading_ = false;
  lower_->close(abort);
}

void TlsTransport::on_lower_closed() {
  SSL_free(std::exchange(ssl_, nullptr));
  release_queue();
  report_closed();
}

uint16_t TlsTransport::peer_name(char* out, size_t size) {
  return lower_->peer_name(out, size);
}

}  // namespace hello
