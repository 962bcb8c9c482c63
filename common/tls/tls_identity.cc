#include "tls/tls_identity.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "tls/tls_context.h"

namespace hello {

// OpenSSL's last error, as one phrase ("no error" if none is queued).
std::string openssl_error() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "no error";
  const char* reason = ERR_reason_error_string(e);
  return reason != nullptr ? reason : fmt::format("error {:#x}", e);
}

namespace {

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

// The DER of `cert`, or empty if it cannot be encoded.
std::string der_of(X509* cert) {
  unsigned char* out = nullptr;
  int len = i2d_X509(cert, &out);
  if (len <= 0) return {};
  std::string der(reinterpret_cast<char*>(out), static_cast<size_t>(len));
  OPENSSL_free(out);
  return der;
}

std::string der_of(EVP_PKEY* key) {
  unsigned char* out = nullptr;
  int len = i2d_PrivateKey(key, &out);
  if (len <= 0) return {};
  std::string der(reinterpret_cast<char*>(out), static_cast<size_t>(len));
  OPENSSL_clear_free(out, static_cast<size_t>(len));
  return der;
}

// `der` decoded as a certificate of library context `lib`. (d2i_X509 frees
// the object it is given when it fails, and nulls the pointer.)
Cert cert_in(const std::string& der, OSSL_LIB_CTX* lib) {
  X509* cert = X509_new_ex(lib, nullptr);
  if (cert == nullptr) return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  if (d2i_X509(&cert, &p, static_cast<long>(der.size())) == nullptr) {
    X509_free(cert);
    return nullptr;
  }
  return Cert(cert);
}

// The leaf and the chain after it of the PEM file `path`.
bool read_chain(const std::string& path, Cert& leaf, std::vector<Cert>& chain, std::string& error) {
  Bio bio = open_file(path, "--tls-cert", error);
  if (!bio) return false;
  leaf.reset(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!leaf) {
    error = fmt::format("--tls-cert {}: no PEM certificate in it ({})", path, openssl_error());
    return false;
  }
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) chain.emplace_back(ca);
  ERR_clear_error();  // the end of the file reads as "no start line"
  return true;
}

bool read_key(const std::string& path, Key& key, std::string& error) {
  Bio bio = open_file(path, "--tls-key", error);
  if (!bio) return false;
  bool asked = false;
  key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, &asked));
  if (key) return true;
  error = asked ? fmt::format(
                      "--tls-key {}: the key is protected by a passphrase; give an "
                      "unprotected one (openssl pkey -in {} -out KEY)",
                      path, path)
                : fmt::format("--tls-key {}: no PEM private key in it ({})", path, openssl_error());
  return false;
}

}  // namespace

TlsIdentity::~TlsIdentity() {
  OPENSSL_cleanse(key_der_.data(), key_der_.size());
}

bool TlsIdentity::load(const TlsOptions& options, const std::vector<std::string>& names,
                       std::string& error) {
  Cert leaf;
  std::vector<Cert> rest;
  Key pkey;
  if (options.cert_path.empty()) {
    if (!make_certificate(options.key_type, names, pkey, leaf, error)) return false;
    made_ = true;
  } else {
    cert_path_ = options.cert_path;
    key_path_ = options.key_path;
    if (!read_chain(options.cert_path, leaf, rest, error)) return false;
    if (!read_key(options.key_path, pkey, error)) return false;
    if (X509_check_private_key(leaf.get(), pkey.get()) != 1) {
      error = fmt::format("--tls-key {}: does not match the certificate of --tls-cert ({})",
                          options.key_path, openssl_error());
      return false;
    }
  }
  pem_ = pem_of(leaf.get());
  fingerprint_ = fingerprint_of(leaf.get());
  leaf_der_ = der_of(leaf.get());
  key_der_ = der_of(pkey.get());
  for (const Cert& c : rest) {
    pem_ += pem_of(c.get());
    chain_der_.push_back(der_of(c.get()));
  }
  return true;
}

bool TlsIdentity::install(SSL_CTX* ctx, OSSL_LIB_CTX* lib, std::string& error) const {
  Cert leaf = cert_in(leaf_der_, lib);
  if (!leaf || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
    error = made_ ? "cannot use the certificate made: " + openssl_error()
                  : fmt::format("--tls-cert {}: cannot use it ({})", cert_path_, openssl_error());
    return false;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(key_der_.data());
  Key pkey(d2i_AutoPrivateKey_ex(nullptr, &p, static_cast<long>(key_der_.size()), lib, nullptr));
  if (!pkey || SSL_CTX_use_PrivateKey(ctx, pkey.get()) != 1) {
    error = made_ ? "cannot use the key made: " + openssl_error()
                  : fmt::format("--tls-key {}: cannot use it ({})", key_path_, openssl_error());
    return false;
  }
  for (const std::string& der : chain_der_) {
    Cert ca = cert_in(der, lib);
    if (!ca || SSL_CTX_add0_chain_cert(ctx, ca.get()) != 1) {
      error = fmt::format("--tls-cert {}: cannot use its chain ({})", cert_path_, openssl_error());
      return false;
    }
    (void)ca.release();  // the context owns it now
  }
  return true;
}

}  // namespace hello
