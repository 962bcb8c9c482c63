// A TLS client and a server session joined by an OpenSSL BIO pair in
// memory: one full or resumed handshake, then what the client saw (the
// version, suite, group and tickets received, whether it resumed). The unit
// tests of tls/tls_context.h and the handshake benchmark
// (tests/tools/tls_handshakes.cc) drive the server's contexts through it.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <string>

namespace hello::test {

// A client context of its own library context `lib` (null: the default)
// that verifies nothing, offers TLS 1.2 and 1.3 up to `max_version`, and
// counts the tickets it receives; `suites` and `ciphers`, if not empty,
// are the TLS 1.3 suites and the TLS 1.2 list it offers.
class TlsClient {
 public:
  explicit TlsClient(OSSL_LIB_CTX* lib = nullptr, int max_version = TLS1_3_VERSION,
                     const std::string& suites = "", const std::string& ciphers = "") {
    ctx_ = SSL_CTX_new_ex(lib, nullptr, TLS_client_method());
    SSL_CTX_set_max_proto_version(ctx_, max_version);
    if (!suites.empty()) ok_ = SSL_CTX_set_ciphersuites(ctx_, suites.c_str()) == 1;
    if (!ciphers.empty()) ok_ = ok_ && SSL_CTX_set_cipher_list(ctx_, ciphers.c_str()) == 1;
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    // Every ticket comes to new_session, which keeps the last one.
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx_, new_session);
  }
  ~TlsClient() {
    SSL_SESSION_free(last_);
    SSL_CTX_free(ctx_);
  }
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  bool ok() const { return ctx_ != nullptr && ok_; }
  SSL_CTX* ctx() const { return ctx_; }
  // The last ticket received (a session to resume), or null.
  SSL_SESSION* last() const { return last_; }
  int tickets = 0;  // received since the count was last reset

 private:
  static int new_session(SSL* ssl, SSL_SESSION* session) {
    auto* self = static_cast<TlsClient*>(SSL_get_app_data(ssl));
    ++self->tickets;
    SSL_SESSION_free(self->last_);
    self->last_ = session;
    return 1;  // kept
  }

  SSL_CTX* ctx_ = nullptr;
  SSL_SESSION* last_ = nullptr;
  bool ok_ = true;
};

// What one handshake did.
struct Shaken {
  bool ok = false;
  bool resumed = false;
  std::string version;  // "TLSv1.3"
  std::string suite;    // "TLS_AES_128_GCM_SHA256"
  std::string group;    // "x25519"
  int tickets = 0;      // received by the client
  int chain = 0;        // certificates the server sent (the leaf and its chain)
};

// One handshake between a new session of `client` (offering `resume`, if
// not null) and a new server session of `server`, then the client's read
// of what the server sent after it (TLS 1.3's tickets).
inline Shaken handshake(TlsClient& client, SSL_CTX* server, SSL_SESSION* resume = nullptr) {
  Shaken out;
  SSL* c = SSL_new(client.ctx());
  SSL* s = SSL_new(server);
  BIO* cb = nullptr;
  BIO* sb = nullptr;
  if (c == nullptr || s == nullptr || BIO_new_bio_pair(&cb, 0, &sb, 0) != 1) {
    SSL_free(c);
    SSL_free(s);
    return out;
  }
  SSL_set_bio(c, cb, cb);
  SSL_set_bio(s, sb, sb);
  SSL_set_app_data(c, &client);
  SSL_set_connect_state(c);
  SSL_set_accept_state(s);
  if (resume != nullptr) SSL_set_session(c, resume);
  client.tickets = 0;
  bool c_done = false, s_done = false;
  // One step of one side: false once it fails (not merely wants more).
  auto step = [](SSL* ssl, bool& done) {
    int rc = SSL_do_handshake(ssl);
    done = rc == 1;
    return done || SSL_get_error(ssl, rc) == SSL_ERROR_WANT_READ;
  };
  // A handshake takes a few flights; 16 turns each way is many more.
  for (int turn = 0; turn < 16 && !(c_done && s_done); ++turn)
    if ((!c_done && !step(c, c_done)) || (!s_done && !step(s, s_done))) break;
  if (c_done && s_done) {
    char byte;
    SSL_read(c, &byte, 1);  // reads the tickets, then wants more
    out.ok = true;
    out.resumed = SSL_session_reused(c) == 1;
    out.version = SSL_get_version(c);
    out.suite = SSL_get_cipher_name(c);
    const char* group = SSL_group_to_name(c, SSL_get_negotiated_group(c));
    out.group = group != nullptr ? group : "";
    out.tickets = client.tickets;
    STACK_OF(X509)* sent = SSL_get_peer_cert_chain(c);
    out.chain = sent != nullptr ? sk_X509_num(sent) : 0;
    // A session freed before its close_notify is marked not resumable.
    SSL_shutdown(c);
    SSL_shutdown(s);
  }
  ERR_clear_error();
  SSL_free(c);
  SSL_free(s);
  return out;
}

}  // namespace hello::test
