// The process's one TLS configuration (docs/tls.md): an OpenSSL SSL_CTX
// made once at start from the --tls flags and shared by every worker, so
// that a session ticket issued by one worker resumes on any other (the
// ticket key belongs to the SSL_CTX). Its certificate is given (--tls-cert,
// --tls-key) or made in memory at start, and its ALPN answer is the
// persona's.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  std::string ciphersuites;             // --tls-ciphersuites (TLS 1.3), empty: OpenSSL's
  std::string groups;                   // --tls-groups, empty: ours
  bool no_resume = false;               // --tls-no-resume
  bool h2 = false;                      // --h2: ALPN selects h2 when the client offers it
};

// The TLS 1.2 suites offered unless --tls-ciphers says otherwise: only
// AEAD suites with forward secrecy, as Mozilla's "intermediate"
// configuration (without its DHE suites).
inline constexpr std::string_view kDefaultCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr std::string_view kDefaultGroups = "X25519:P-256:P-384";

class TlsContext {
 public:
  // The context of `options` for a server whose ALPN answer is `alpn`
  // (empty: it selects no protocol, as most of the frameworks mirrored)
  // and whose made certificate names `names` (host names or addresses).
  // Null with `error` set to one line if a file, a key or a value is refused.
  static std::unique_ptr<TlsContext> create(const TlsOptions& options, std::string_view alpn,
                                            const std::vector<std::string>& names,
                                            std::string& error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* ctx() const { return ctx_; }
  // The leaf certificate's SHA-256 fingerprint, "AB:CD:...".
  const std::string& fingerprint() const { return fingerprint_; }
  // The certificate (the chain as given, or the one made), PEM.
  const std::string& certificate_pem() const { return pem_; }
  // Whether the certificate was made at start.
  bool made() const { return made_; }
  std::string_view alpn() const { return alpn_; }
  // With --h2: a client offering "h2" gets it, before the persona's own.
  bool h2() const { return h2_; }

 private:
  TlsContext() = default;

  SSL_CTX* ctx_ = nullptr;
  std::string fingerprint_;
  std::string pem_;
  std::string alpn_;  // the one protocol selected, or empty
  bool made_ = false;
  bool h2_ = false;
};

}  // namespace hello
