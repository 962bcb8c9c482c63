// The server's certificate chain and private key (docs/tls.md): read from
// --tls-cert and --tls-key, or made in memory at start, once; then put into
// each worker's SSL_CTX, every one of which has a library context of its
// own (tls/tls_context.h). The identity is kept as DER and decoded afresh
// in each library context, so that no worker's handshake signs with a key
// object another worker's library owns (OpenSSL would export it on each
// use, under the key's lock).
#pragma once

#include <openssl/ssl.h>

#include <string>
#include <vector>

namespace hello {

struct TlsOptions;

class TlsIdentity {
 public:
  TlsIdentity() = default;
  ~TlsIdentity();
  TlsIdentity(const TlsIdentity&) = delete;
  TlsIdentity& operator=(const TlsIdentity&) = delete;

  // Reads --tls-cert and --tls-key, or makes a self-signed certificate for
  // `names` with a key of --tls-key-type. False with `error` set to one
  // line that starts with the flag it is about.
  bool load(const TlsOptions& options, const std::vector<std::string>& names, std::string& error);
  // The chain and key into `ctx`, decoded in `ctx`'s library context `lib`.
  bool install(SSL_CTX* ctx, OSSL_LIB_CTX* lib, std::string& error) const;

  // The chain as given or the certificate made, PEM.
  const std::string& pem() const { return pem_; }
  // The leaf's SHA-256 fingerprint, "AB:CD:...".
  const std::string& fingerprint() const { return fingerprint_; }
  bool made() const { return made_; }

 private:
  std::string leaf_der_;
  std::vector<std::string> chain_der_;  // after the leaf, as given
  std::string key_der_;                 // wiped when the identity goes
  std::string pem_;
  std::string fingerprint_;
  std::string cert_path_;  // --tls-cert, for errors; empty if made
  std::string key_path_;   // --tls-key, likewise
  bool made_ = false;
};

// OpenSSL's last error, as one phrase ("no error" if none is queued).
std::string openssl_error();

}  // namespace hello
