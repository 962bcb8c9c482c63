// TlsContext::create with the certificate and key files --tls-cert and
// --tls-key name: a chain read whole, and each file or value OpenSSL
// refuses said in one line that names the flag and the file.
#include "tls/tls_context.h"

#include "tls_pair.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace hello {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr new_key() {
  return KeyPtr(EVP_EC_gen("P-256"), EVP_PKEY_free);
}

// A self-signed certificate of `key` naming `cn`.
CertPtr self_signed(EVP_PKEY* key, const char* cn) {
  CertPtr cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_sign(cert.get(), key, EVP_sha256());
  return cert;
}

std::string text_of(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<size_t>(len));
  BIO_free(bio);
  return text;
}

std::string pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  return text_of(bio);
}

// The key in PEM, protected by `passphrase` if one is given.
std::string pem(EVP_PKEY* key, const char* passphrase = nullptr) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (passphrase == nullptr) {
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  } else {
    auto* pass = reinterpret_cast<unsigned char*>(const_cast<char*>(passphrase));
    PEM_write_bio_PrivateKey(bio, key, EVP_aes_128_cbc(), pass,
                             static_cast<int>(strlen(passphrase)), nullptr, nullptr);
  }
  return text_of(bio);
}

std::string fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(cert, EVP_sha256(), md, &len);
  std::string out;
  char hex[4];
  for (unsigned int i = 0; i < len; ++i) {
    snprintf(hex, sizeof hex, "%s%02X", i ? ":" : "", md[i]);
    out += hex;
  }
  return out;
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tls_context_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ERR_clear_error();
  }
  void TearDown() override {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string file(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }
  // The context of a certificate file and a key file; null with `error_`.
  std::unique_ptr<TlsContext> with_files(const std::string& cert, const std::string& key) {
    TlsOptions options;
    options.enabled = true;
    options.cert_path = cert;
    options.key_path = key;
    return TlsContext::create(options, "", {"localhost"}, error_);
  }
  std::unique_ptr<TlsContext> with(const TlsOptions& options) {
    return TlsContext::create(options, "", {"localhost"}, error_);
  }

  std::string dir_;
  std::vector<std::string> files_;
  std::string error_;
  KeyPtr key_ = new_key();
  CertPtr cert_ = self_signed(key_.get(), "leaf");
};

TEST_F(TlsContextTest, AChainIsReadWholeAndTheFingerprintIsTheLeafs) {
  KeyPtr ca_key = new_key();
  CertPtr ca = self_signed(ca_key.get(), "ca");
  std::string chain = pem(cert_.get()) + pem(ca.get());
  auto ctx = with_files(file("chain.pem", chain), file("key.pem", pem(key_.get())));
  ASSERT_NE(ctx, nullptr) << error_;
  EXPECT_EQ(ctx->certificate_pem(), chain);
  EXPECT_EQ(ctx->fingerprint(), fingerprint(cert_.get()));
  EXPECT_FALSE(ctx->made());
  STACK_OF(X509)* extra = nullptr;
  ASSERT_EQ(SSL_CTX_get0_chain_certs(ctx->ctx(), &extra), 1);
  ASSERT_EQ(sk_X509_num(extra), 1);
  EXPECT_EQ(X509_cmp(sk_X509_value(extra, 0), ca.get()), 0);
}

// The chain as given, and only it; and no chain is built from the store at
// each handshake (SSL_MODE_NO_AUTO_CHAIN: the store is empty, so only the
// mode bit tells the two apart, and the cost, not the bytes).
TEST_F(TlsContextTest, EveryWorkerSendsTheChainGivenAndAMadeCertificateAlone) {
  KeyPtr ca_key = new_key();
  CertPtr ca = self_signed(ca_key.get(), "ca");
  TlsOptions options;
  options.enabled = true;
  options.cert_path = file("chain.pem", pem(cert_.get()) + pem(ca.get()));
  options.key_path = file("key.pem", pem(key_.get()));
  auto given = TlsContext::create(options, "", {"localhost"}, error_, 2);
  ASSERT_NE(given, nullptr) << error_;
  for (size_t i = 0; i < 2; ++i) {
    test::TlsClient client;
    test::Shaken got = test::handshake(client, given->ctx(i));
    ASSERT_TRUE(got.ok);
    EXPECT_EQ(got.chain, 2) << "worker " << i;
  }
  TlsOptions plain;
  plain.enabled = true;
  auto made = with(plain);
  ASSERT_NE(made, nullptr) << error_;
  test::TlsClient client;
  EXPECT_EQ(test::handshake(client, made->ctx()).chain, 1);
  EXPECT_NE(SSL_CTX_get_mode(made->ctx()) & SSL_MODE_NO_AUTO_CHAIN, 0u);
}

TEST_F(TlsContextTest, AMissingCertificateFileSaysWhy) {
  std::string path = dir_ + "/absent.pem";
  EXPECT_EQ(with_files(path, file("key.pem", pem(key_.get()))), nullptr);
  EXPECT_EQ(error_, "--tls-cert " + path + ": No such file or directory");
}

TEST_F(TlsContextTest, ACertificateFileWithoutPemSaysSo) {
  std::string path = file("cert.pem", "not a certificate\n");
  EXPECT_EQ(with_files(path, file("key.pem", pem(key_.get()))), nullptr);
  EXPECT_EQ(error_, "--tls-cert " + path + ": no PEM certificate in it (no start line)");
}

TEST_F(TlsContextTest, AMissingKeyFileSaysWhy) {
  std::string path = dir_ + "/absent-key.pem";
  EXPECT_EQ(with_files(file("cert.pem", pem(cert_.get())), path), nullptr);
  EXPECT_EQ(error_, "--tls-key " + path + ": No such file or directory");
}

TEST_F(TlsContextTest, AKeyFileWithoutPemSaysSo) {
  std::string path = file("key.pem", "not a key\n");
  EXPECT_EQ(with_files(file("cert.pem", pem(cert_.get())), path), nullptr);
  EXPECT_EQ(error_, "--tls-key " + path + ": no PEM private key in it (unsupported)");
}

TEST_F(TlsContextTest, AKeyProtectedByAPassphraseIsRefusedWithoutPrompting) {
  std::string path = file("key.pem", pem(key_.get(), "secret"));
  EXPECT_EQ(with_files(file("cert.pem", pem(cert_.get())), path), nullptr);
  EXPECT_EQ(error_, "--tls-key " + path +
                        ": the key is protected by a passphrase; give an unprotected one "
                        "(openssl pkey -in " +
                        path + " -out KEY)");
}

TEST_F(TlsContextTest, AKeyOfAnotherCertificateDoesNotMatch) {
  KeyPtr other = new_key();
  std::string path = file("key.pem", pem(other.get()));
  EXPECT_EQ(with_files(file("cert.pem", pem(cert_.get())), path), nullptr);
  EXPECT_EQ(error_, "--tls-key " + path +
                        ": does not match the certificate of --tls-cert (key values mismatch)");
}

TEST_F(TlsContextTest, CipherListsAndGroupsOpenSslRefusesAreNamed) {
  TlsOptions options;
  options.enabled = true;
  options.ciphers = "NO-SUCH-CIPHER";
  EXPECT_EQ(with(options), nullptr);
  EXPECT_EQ(error_, "--tls-ciphers 'NO-SUCH-CIPHER': OpenSSL takes none of it (no cipher match)");
  options.ciphers.clear();
  options.ciphersuites = "TLS_NO_SUCH_SUITE";
  EXPECT_EQ(with(options), nullptr);
  EXPECT_EQ(error_, "--tls-ciphersuites 'TLS_NO_SUCH_SUITE': OpenSSL refuses it (no cipher match)");
  options.ciphersuites.clear();
  options.groups = "P-999";
  EXPECT_EQ(with(options), nullptr);
  EXPECT_EQ(error_, "--tls-groups 'P-999': OpenSSL refuses it (passed invalid argument)");
}

TEST_F(TlsContextTest, WithoutFilesACertificateIsMadeAndItsFingerprintGiven) {
  TlsOptions options;
  options.enabled = true;
  auto ctx = with(options);
  ASSERT_NE(ctx, nullptr) << error_;
  EXPECT_TRUE(ctx->made());
  BIO* bio = BIO_new_mem_buf(ctx->certificate_pem().data(),
                             static_cast<int>(ctx->certificate_pem().size()));
  CertPtr made(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), X509_free);
  BIO_free(bio);
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(ctx->fingerprint(), fingerprint(made.get()));
  EXPECT_EQ(X509_cmp(SSL_CTX_get0_certificate(ctx->ctx()), made.get()), 0);
}

}  // namespace
}  // namespace hello
