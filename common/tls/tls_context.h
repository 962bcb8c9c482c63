// The process's TLS configuration (docs/tls.md), made once at start from
// the --tls flags: the certificate (given with --tls-cert and --tls-key, or
// made in memory), the session ticket keys, and one OpenSSL SSL_CTX per
// worker, each in a library context (OSSL_LIB_CTX) of its own, so that
// workers' handshakes take none of OpenSSL 3.0's locks on a shared one
// (algorithm fetches, property caches). The ticket keys are the same in
// every SSL_CTX, so a ticket issued by one worker resumes on any other.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tls/tls_identity.h"

namespace hello {

// What the --tls flags say.
struct TlsOptions {
  bool enabled = false;                 // --tls
  std::string cert_path;                // --tls-cert FILE (PEM, a chain allowed)
  std::string key_path;                 // --tls-key FILE (PEM)
  std::string key_type = "ecdsa-p256";  // --tls-key-type ecdsa-p256|rsa2048, for one made at start
  std::string write_cert;               // --tls-write-cert PATH
  std::string min_version = "1.2";      // --tls-min 1.2|1.3
  std::string ciphers;                  // --tls-ciphers (TLS 1.2), empty: ours
  std::string ciphersuites;             // --tls-ciphersuites (TLS 1.3), empty: ours
  std::string groups;                   // --tls-groups, empty: ours
  int tickets = 1;  // --tls-tickets: TLS 1.3 tickets per full handshake; 0: no resumption
  bool h2 = false;  // --h2: ALPN selects h2 when the client offers it
};

// The most session tickets --tls-tickets allows.
inline constexpr int kMaxTickets = 4;

// The TLS 1.2 suites offered unless --tls-ciphers says otherwise: only
// AEAD suites with forward secrecy, as Mozilla's "intermediate"
// configuration (without its DHE suites), AES-128-GCM first.
inline constexpr std::string_view kDefaultCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
// The TLS 1.3 suites unless --tls-ciphersuites says otherwise: OpenSSL's
// three, AES-128-GCM first (its key schedule hashes with SHA-256, not
// SHA-384). A client that lists ChaCha20-Poly1305 first (no AES hardware)
// gets it.
inline constexpr std::string_view kDefaultCiphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
inline constexpr std::string_view kDefaultGroups = "X25519:P-256:P-384";

class TlsContext {
 public:
  // The configuration of `options` for a server of `contexts` workers whose
  // ALPN answer is `alpn` (empty: it selects no protocol, as most of the
  // frameworks mirrored) and whose made certificate names `names` (host
  // names or addresses). Null with `error` set to one line if a file, a
  // key or a value is refused.
  static std::unique_ptr<TlsContext> create(const TlsOptions& options, std::string_view alpn,
                                            const std::vector<std::string>& names,
                                            std::string& error, size_t contexts = 1);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Worker `i`'s context (i < contexts()).
  SSL_CTX* ctx(size_t i = 0) const { return contexts_.at(i).ctx; }
  size_t contexts() const { return contexts_.size(); }
  // The leaf certificate's SHA-256 fingerprint, "AB:CD:...".
  const std::string& fingerprint() const { return identity_.fingerprint(); }
  // The certificate (the chain as given, or the one made), PEM.
  const std::string& certificate_pem() const { return identity_.pem(); }
  // Whether the certificate was made at start.
  bool made() const { return identity_.made(); }
  std::string_view alpn() const { return alpn_; }
  // With --h2: a client offering "h2" gets it, before the persona's own.
  bool h2() const { return h2_; }

 private:
  struct Own {
    OSSL_LIB_CTX* lib = nullptr;
    SSL_CTX* ctx = nullptr;
  };

  TlsContext() = default;
  // One more context, set up as `options` say. False with `error` set.
  bool add_context(const TlsOptions& options, std::string& error);

  TlsIdentity identity_;
  // The session ticket keys of every context: a 16-byte name, a 32-byte
  // HMAC key and a 32-byte AES key (OpenSSL 3.0's tlsext_tick_key sizes).
  unsigned char ticket_keys_[16 + 32 + 32] = {};
  std::vector<Own> contexts_;
  std::string alpn_;  // the one protocol selected, or empty
  bool h2_ = false;
};

}  // namespace hello
