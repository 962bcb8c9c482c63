#include "tls/tls_context.h"

#include <openssl/conf.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include <fmt/format.h>

namespace hello {

namespace {

// Selects `want` if the client's list `in` holds it.
bool offered(std::string_view want, const unsigned char** out, unsigned char* outlen,
             const unsigned char* in, unsigned int inlen) {
  for (unsigned int i = 0; i < inlen;) {
    unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (std::string_view(reinterpret_cast<const char*>(in + i + 1), len) == want) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return true;
    }
    i += 1 + len;
  }
  return false;
}

// ALPN: with --h2, h2 if the client offers it; then the persona's one
// protocol if the client offers it; otherwise, and for a persona without
// one, no protocol is selected and the client goes on in HTTP/1.1 (as
// CPython's ssl does when nothing overlaps).
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                unsigned int inlen, void* arg) {
  const auto* self = static_cast<const TlsContext*>(arg);
  if (self->h2() && offered("h2", out, outlen, in, inlen)) return SSL_TLSEXT_ERR_OK;
  std::string_view mine = self->alpn();
  if (!mine.empty() && offered(mine, out, outlen, in, inlen)) return SSL_TLSEXT_ERR_OK;
  return SSL_TLSEXT_ERR_NOACK;
}

// The flags' protocol versions, suites, groups and tickets on `ctx`.
bool configure(SSL_CTX* ctx, const TlsOptions& options, std::string& error) {
  SSL_CTX_set_min_proto_version(ctx,
                                options.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  // No renegotiation (TLS 1.2's client-initiated one costs the server a
  // handshake per request of an attacker's choosing). The server's order of
  // suites decides (testssl.sh rates a client's choice "NOT ok"), except
  // that a client listing ChaCha20-Poly1305 first, as one without AES
  // hardware does, gets it.
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
  // An idle connection holds no record buffers: they are taken for each
  // read and write and given back after (recycled: tls/tls_memory.h).
  // The chain sent is the one given (or the made certificate alone), not
  // one OpenSSL builds from its empty store again at every handshake.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN);
  std::string ciphers = options.ciphers.empty() ? std::string(kDefaultCiphers) : options.ciphers;
  if (SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    error =
        fmt::format("--tls-ciphers '{}': OpenSSL takes none of it ({})", ciphers, openssl_error());
    return false;
  }
  std::string suites =
      options.ciphersuites.empty() ? std::string(kDefaultCiphersuites) : options.ciphersuites;
  if (SSL_CTX_set_ciphersuites(ctx, suites.c_str()) != 1) {
    error =
        fmt::format("--tls-ciphersuites '{}': OpenSSL refuses it ({})", suites, openssl_error());
    return false;
  }
  std::string groups = options.groups.empty() ? std::string(kDefaultGroups) : options.groups;
  if (SSL_CTX_set1_groups_list(ctx, groups.c_str()) != 1) {
    error = fmt::format("--tls-groups '{}': OpenSSL refuses it ({})", groups, openssl_error());
    return false;
  }
  // No server-side session cache to lock: resumption is by tickets,
  // stateless, so any worker resumes what another issued. TLS 1.3 sends
  // --tls-tickets of them after a full handshake and one after a resumed
  // one; TLS 1.2 one. With 0, every connection is a full handshake.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx, static_cast<size_t>(options.tickets));
  if (options.tickets == 0) SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  return true;
}

}  // namespace

std::unique_ptr<TlsContext> TlsContext::create(const TlsOptions& options, std::string_view alpn,
                                               const std::vector<std::string>& names,
                                               std::string& error, size_t contexts) {
  std::unique_ptr<TlsContext> self(new TlsContext);
  self->alpn_ = std::string(alpn);
  self->h2_ = options.h2;
  if (RAND_bytes(self->ticket_keys_, sizeof self->ticket_keys_) != 1) {
    error = "cannot start TLS: " + openssl_error();
    return nullptr;
  }
  // The first context checks the flags' values before a file is read.
  if (!self->add_context(options, error) || !self->identity_.load(options, names, error))
    return nullptr;
  while (self->contexts_.size() < contexts)
    if (!self->add_context(options, error)) return nullptr;
  for (const Own& own : self->contexts_)
    if (!self->identity_.install(own.ctx, own.lib, error)) return nullptr;
  return self;
}

bool TlsContext::add_context(const TlsOptions& options, std::string& error) {
  Own& own = contexts_.emplace_back();
  own.lib = OSSL_LIB_CTX_new();
  // The system's configuration (providers, default properties), as the
  // default library context has it; none is no error, as there.
  if (char* file = CONF_get1_default_config_file(); file != nullptr) {
    if (own.lib != nullptr) OSSL_LIB_CTX_load_config(own.lib, file);
    OPENSSL_free(file);
    ERR_clear_error();
  }
  own.ctx = own.lib != nullptr ? SSL_CTX_new_ex(own.lib, nullptr, TLS_server_method()) : nullptr;
  if (own.ctx == nullptr) {
    error = "cannot start TLS: " + openssl_error();
    return false;
  }
  if (!configure(own.ctx, options, error)) return false;
  if (SSL_CTX_set_tlsext_ticket_keys(own.ctx, ticket_keys_, sizeof ticket_keys_) != 1) {
    error = "cannot set the session ticket keys: " + openssl_error();
    return false;
  }
  SSL_CTX_set_alpn_select_cb(own.ctx, select_alpn, this);
  return true;
}

TlsContext::~TlsContext() {
  for (Own& own : contexts_) {
    SSL_CTX_free(own.ctx);
    OSSL_LIB_CTX_free(own.lib);
  }
  OPENSSL_cleanse(ticket_keys_, sizeof ticket_keys_);
}

}  // namespace hello
