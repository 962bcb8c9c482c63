// TLS for ws_load: see ws_load_tls.h.
#include "ws_load_tls.h"

#include <openssl/err.h>

#include <climits>

namespace ws_load {

SSL_CTX* make_tls_context(std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  // ALPN's wire format: a length byte, then the protocol's name.
  static constexpr unsigned char kAlpn[] = "\x08http/1.1";
  if (ctx == nullptr || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof kAlpn - 1) != 0) {
    error = fmt::format("cannot make the TLS client context: {}",
                        ERR_reason_error_string(ERR_get_error()));
    SSL_CTX_free(ctx);
    return nullptr;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  // A server that closes without close_notify at the end is no error here.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  return ctx;
}

const char* TlsSession::init(SSL_CTX* ctx) {
  ssl_ = SSL_new(ctx);
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in_ == nullptr || out_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_);
    in_ = out_ = nullptr;
    return "tls: cannot make the connection's SSL object";
  }
  // An empty memory BIO says "retry", not "end of file", to OpenSSL.
  BIO_set_mem_eof_return(in_, -1);
  BIO_set_mem_eof_return(out_, -1);
  SSL_set_bio(ssl_, in_, out_);
  SSL_set_connect_state(ssl_);
  return nullptr;
}

bool TlsSession::put_cipher(const uint8_t* p, size_t n) {
  if (n == 0) return true;
  if (n > INT_MAX || BIO_write(in_, p, static_cast<int>(n)) != static_cast<int>(n)) {
    set_failure("tls: cannot buffer what the server sent");
    return false;
  }
  return true;
}

TlsSession::Step TlsSession::handshake() {
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return Step::kDone;
  int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Step::kMore;
  set_failure("tls: handshake");
  return Step::kFailed;
}

long TlsSession::read(uint8_t* out, size_t capacity) {
  int rc = SSL_read(ssl_, out, static_cast<int>(capacity < INT_MAX ? capacity : INT_MAX));
  if (rc > 0) return rc;
  int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return 0;
  set_failure(err == SSL_ERROR_ZERO_RETURN ? "tls: close_notify from the server" : "tls: read");
  return -1;
}

bool TlsSession::write(const uint8_t* p, size_t n) {
  // A memory BIO takes all a write gives it, so SSL_write encrypts the
  // whole buffer in one call, in records of up to 16 KiB.
  if (n == 0) return true;
  if (n > INT_MAX || SSL_write(ssl_, p, static_cast<int>(n)) != static_cast<int>(n)) {
    set_failure("tls: write");
    return false;
  }
  return true;
}

void TlsSession::take_cipher(Buffer& out) {
  size_t n = BIO_ctrl_pending(out_);
  if (n == 0) return;
  int got = BIO_read(out_, out.tail(n), static_cast<int>(n));
  expect(got == static_cast<int>(n), "a memory BIO gave less than it holds");
  out.commit(n);
}

// Keeps OpenSSL's reason, without the numbers of its error string, so that
// failures group in the summary; empties OpenSSL's error queue, which
// would otherwise blame the next connection.
void TlsSession::set_failure(const char* what) {
  unsigned long e = ERR_peek_last_error();
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  failure_ = reason != nullptr ? fmt::format("{}: {}", what, reason) : what;
  ERR_clear_error();
}

}  // namespace ws_load
