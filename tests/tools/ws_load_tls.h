// TLS for ws_load (--tls): OpenSSL 3 over two memory BIOs, so that the
// connection moves ciphertext with libuv and OpenSSL never sees a socket.
// Nothing is verified: the servers' certificates are made at their start.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ws_load.h"

namespace ws_load {

// The client context every connection shares: TLS 1.2 or 1.3, no
// verification, ALPN http/1.1. nullptr, with why in `error`, if OpenSSL
// cannot make it.
SSL_CTX* make_tls_context(std::string& error);

// One connection's TLS: ciphertext in from the socket, plaintext out to
// the session, and the reverse.
class TlsSession {
 public:
  enum class Step { kDone, kMore, kFailed };

  TlsSession() = default;
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;
  ~TlsSession() { SSL_free(ssl_); }  // frees both BIOs

  // Makes the SSL object in client mode; nullptr or why not.
  const char* init(SSL_CTX* ctx);
  // Ciphertext read from the socket.
  bool put_cipher(const uint8_t* p, size_t n);
  // Steps the handshake with what was put; its answer is in take_cipher().
  Step handshake();
  // Up to `capacity` bytes of plaintext: their count, 0 when none is ready
  // yet, or -1 when the server closed (close_notify) or TLS failed.
  long read(uint8_t* out, size_t capacity);
  // Encrypts `n` bytes of plaintext; false if TLS failed.
  bool write(const uint8_t* p, size_t n);
  // Moves the ciphertext waiting to be sent to the end of `out`.
  void take_cipher(Buffer& out);
  // Why the last step failed, for a summary.
  const std::string& failure() const { return failure_; }

 private:
  void set_failure(const char* what);

  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // what the server sent, for OpenSSL to read
  BIO* out_ = nullptr;  // what OpenSSL wrote, for the socket
  std::string failure_;
};

}  // namespace ws_load
