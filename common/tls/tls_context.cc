#include "tls/tls_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace hello {

namespace {

// OpenSSL's last error, as one phrase ("no error" if none is queued).
std::string openssl_error() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "no error";
  const char* reason = ERR_reason_error_string(e);
  return reason != nullptr ? reason : fmt::format("error {:#x}", e);
}

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Freer<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Freer<X509, X509_free>>;

std::string pem_of(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string fingerprint_of(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(cert, EVP_sha256(), md, &len);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{}{:02X}", i ? ":" : "", md[i]);
  return out;
}

// A subjectAltName entry for `name`: an IP address or a DNS name. The
// wildcard addresses name no host and are left out.
std::string alt_name(const std::string& name) {
  unsigned char addr[16];
  if (inet_pton(AF_INET, name.c_str(), addr) == 1) return name == "0.0.0.0" ? "" : "IP:" + name;
  if (inet_pton(AF_INET6, name.c_str(), addr) == 1) return name == "::" ? "" : "IP:" + name;
  return name.empty() ? "" : "DNS:" + name;
}

// A self-signed certificate for `names`, valid from an hour ago for a
// year (Werkzeug's adhoc certificate is valid for a year too), with a new
// key of `key_type`.
bool make_certificate(const std::string& key_type, const std::vector<std::string>& names, Key& key,
                      Cert& cert, std::string& error) {
  key.reset(key_type == "rsa2048" ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256"));
  cert.reset(X509_new());
  if (!key || !cert) {
    error = "cannot make a key: " + openssl_error();
    return false;
  }
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // a positive number
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("hello-family"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), subject);
  X509_set_pubkey(cert.get(), key.get());
  std::string alt;
  for (const std::string& n : names) {
    std::string entry = alt_name(n);
    if (!entry.empty() && alt.find(entry) == std::string::npos)
      alt += (alt.empty() ? "" : ",") + entry;
  }
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  std::string usage = key_type == "rsa2048" ? "critical,digitalSignature,keyEncipherment"
                                            : "critical,digitalSignature";
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, alt},
                            {NID_basic_constraints, std::string("CA:FALSE")},
                            {NID_key_usage, usage},
                            {NID_ext_key_usage, std::string("serverAuth")}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
    if (ext == nullptr || !X509_add_ext(cert.get(), ext, -1)) {
      X509_EXTENSION_free(ext);
      error = "cannot make the certificate: " + openssl_error();
      return false;
    }
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    error = "cannot sign the certificate: " + openssl_error();
    return false;
  }
  return true;
}

// Refuses to prompt: a key protected by a passphrase is an error, said once.
int no_passphrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return -1;
}

// Opens `path` for reading, or says why not in `error`.
Bio open_file(const std::string& path, const char* what, std::string& error) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = fmt::format("{} {}: {}", what, path, strerror(errno));
    return nullptr;
  }
  return Bio(BIO_new_fp(f, BIO_CLOSE));
}

// The certificate chain of `path` (the leaf first) into `ctx`, and the
// leaf's PEM and fingerprint.
bool use_chain(SSL_CTX* ctx, const std::string& path, std::string& pem, std::string& fingerprint,
               std::string& error) {
  Bio bio = open_file(path, "--tls-cert", error);
  if (!bio) return false;
  Cert leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!leaf || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
    error = fmt::format("--tls-cert {}: no PEM certificate in it ({})", path, openssl_error());
    return false;
  }
  pem = pem_of(leaf.get());
  fingerprint = fingerprint_of(leaf.get());
  SSL_CTX_clear_chain_certs(ctx);
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    pem += pem_of(ca);
    if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
      X509_free(ca);
      error = fmt::format("--tls-cert {}: cannot use its chain ({})", path, openssl_error());
      return false;
    }
  }
  ERR_clear_error();  // the end of the file reads as "no start line"
  return true;
}

bool use_key(SSL_CTX* ctx, const std::string& path, std::string& error) {
  Bio bio = open_file(path, "--tls-key", error);
  if (!bio) return false;
  bool asked = false;
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, &asked));
  if (!key) {
    error = asked
                ? fmt::format(
                      "--tls-key {}: the key is protected by a passphrase; give an "
                      "unprotected one (openssl pkey -in {} -out KEY)",
                      path, path)
                : fmt::format("--tls-key {}: no PEM private key in it ({})", path, openssl_error());
    return false;
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    error = fmt::format("--tls-key {}: does not match the certificate of --tls-cert ({})", path,
                        openssl_error());
    return false;
  }
  return true;
}

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

}  // namespace

std::unique_ptr<TlsContext> TlsContext::create(const TlsOptions& options, std::string_view alpn,
                                               const std::vector<std::string>& names,
                                               std::string& error) {
  std::unique_ptr<TlsContext> self(new TlsContext);
  self->alpn_ = std::string(alpn);
  self->h2_ = options.h2;
  SSL_CTX* ctx = self->ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    error = "cannot start TLS: " + openssl_error();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx,
                                options.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  // No renegotiation (TLS 1.2's client-initiated one costs the server a
  // handshake per request of an attacker's choosing).
  // The server's order of suites decides (testssl.sh rates a client's
  // choice "NOT ok").
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // An idle connection holds no record buffers: they are taken for each
  // read and write and given back after (recycled: tls/tls_memory.h).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  std::string ciphers = options.ciphers.empty() ? std::string(kDefaultCiphers) : options.ciphers;
  if (SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    error =
        fmt::format("--tls-ciphers '{}': OpenSSL takes none of it ({})", ciphers, openssl_error());
    return nullptr;
  }
  if (!options.ciphersuites.empty() &&
      SSL_CTX_set_ciphersuites(ctx, options.ciphersuites.c_str()) != 1) {
    error = fmt::format("--tls-ciphersuites '{}': OpenSSL refuses it ({})", options.ciphersuites,
                        openssl_error());
    return nullptr;
  }
  std::string groups = options.groups.empty() ? std::string(kDefaultGroups) : options.groups;
  if (SSL_CTX_set1_groups_list(ctx, groups.c_str()) != 1) {
    error = fmt::format("--tls-groups '{}': OpenSSL refuses it ({})", groups, openssl_error());
    return nullptr;
  }
  // No server-side session cache to lock: resumption is by tickets, as
  // OpenSSL's and CPython's defaults, stateless, so any worker resumes what
  // another issued.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (options.no_resume) {
    // Every connection a full handshake: no tickets (TLS 1.2 and 1.3).
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
  }
  SSL_CTX_set_alpn_select_cb(ctx, select_alpn, self.get());
  if (!options.cert_path.empty()) {
    if (!use_chain(ctx, options.cert_path, self->pem_, self->fingerprint_, error)) return nullptr;
    if (!use_key(ctx, options.key_path, error)) return nullptr;
    return self;
  }
  Key key;
  Cert cert;
  if (!make_certificate(options.key_type, names, key, cert, error)) return nullptr;
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    error = "cannot use the certificate made: " + openssl_error();
    return nullptr;
  }
  self->pem_ = pem_of(cert.get());
  self->fingerprint_ = fingerprint_of(cert.get());
  self->made_ = true;
  return self;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

}  // namespace hello
