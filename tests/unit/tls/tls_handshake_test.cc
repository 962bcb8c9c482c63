// What TlsContext's contexts negotiate with clients (docs/tls.md): the
// suite the server prefers, the tickets --tls-tickets sends, and a ticket
// from one worker's context resuming on another's, each a handshake in
// memory (tests/support/tls_pair.h).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include <memory>
#include <string>

#include "tls/tls_context.h"
#include "tls_pair.h"

namespace hello {
namespace {

using test::handshake;
using test::Shaken;
using test::TlsClient;

// A reference of its own to `session`, which the client frees when the
// next ticket comes.
SSL_SESSION* hold(SSL_SESSION* session) {
  SSL_SESSION_up_ref(session);
  return session;
}

std::unique_ptr<TlsContext> make(TlsOptions options, size_t contexts = 1) {
  options.enabled = true;
  std::string error;
  auto tls = TlsContext::create(options, "", {"localhost"}, error, contexts);
  EXPECT_NE(tls, nullptr) << error;
  return tls;
}

TEST(TlsHandshake, ADefaultClientGetsAes128GcmOverX25519AndOneTicket) {
  auto tls = make({});
  TlsClient client;
  Shaken got = handshake(client, tls->ctx());
  ASSERT_TRUE(got.ok);
  EXPECT_EQ(got.version, "TLSv1.3");
  EXPECT_EQ(got.suite, "TLS_AES_128_GCM_SHA256");
  EXPECT_EQ(got.group, "x25519");
  EXPECT_EQ(got.tickets, 1);
  EXPECT_FALSE(got.resumed);
}

TEST(TlsHandshake, ATls12ClientGetsEcdheWithAes128Gcm) {
  auto tls = make({});
  TlsClient client(nullptr, TLS1_2_VERSION);
  Shaken got = handshake(client, tls->ctx());
  ASSERT_TRUE(got.ok);
  EXPECT_EQ(got.version, "TLSv1.2");
  EXPECT_EQ(got.suite, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST(TlsHandshake, ClientsOfferingOneSuiteGetIt) {
  auto tls = make({});
  for (const char* suite : {"TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}) {
    TlsClient client(nullptr, TLS1_3_VERSION, suite);
    ASSERT_TRUE(client.ok());
    Shaken got = handshake(client, tls->ctx());
    ASSERT_TRUE(got.ok) << suite;
    EXPECT_EQ(got.suite, suite);
  }
  for (const char* cipher : {"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"}) {
    TlsClient client(nullptr, TLS1_2_VERSION, "", cipher);
    ASSERT_TRUE(client.ok());
    Shaken got = handshake(client, tls->ctx());
    ASSERT_TRUE(got.ok) << cipher;
    EXPECT_EQ(got.suite, cipher);
  }
}

// A client without AES hardware lists ChaCha20-Poly1305 first.
TEST(TlsHandshake, AClientPreferringChaChaGetsItAndOthersGetTheServersOrder) {
  auto tls = make({});
  TlsClient chacha(nullptr, TLS1_3_VERSION,
                   "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256");
  EXPECT_EQ(handshake(chacha, tls->ctx()).suite, "TLS_CHACHA20_POLY1305_SHA256");
  TlsClient aes(nullptr, TLS1_3_VERSION,
                "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256");
  EXPECT_EQ(handshake(aes, tls->ctx()).suite, "TLS_AES_128_GCM_SHA256");
}

TEST(TlsHandshake, TheSuitesFlagStillDecidesTheOrder) {
  TlsOptions options;
  options.ciphersuites = "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256";
  auto tls = make(options);
  TlsClient client;
  EXPECT_EQ(handshake(client, tls->ctx()).suite, "TLS_AES_256_GCM_SHA384");
}

TEST(TlsHandshake, EachFullHandshakeSendsTheTicketsAskedAndAResumedOneSendsOne) {
  for (int n = 1; n <= kMaxTickets; ++n) {
    TlsOptions options;
    options.tickets = n;
    auto tls = make(options);
    TlsClient client;
    Shaken full = handshake(client, tls->ctx());
    EXPECT_EQ(full.tickets, n);
    ASSERT_NE(client.last(), nullptr);
    SSL_SESSION* ticket = hold(client.last());
    Shaken resumed = handshake(client, tls->ctx(), ticket);
    SSL_SESSION_free(ticket);
    EXPECT_TRUE(resumed.resumed) << n;
    EXPECT_EQ(resumed.tickets, 1) << n;
  }
}

TEST(TlsHandshake, NoTicketsMeansNoResumptionInEitherVersion) {
  TlsOptions options;
  options.tickets = 0;
  auto tls = make(options);
  for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    TlsClient client(nullptr, version);
    Shaken got = handshake(client, tls->ctx());
    ASSERT_TRUE(got.ok);
    EXPECT_FALSE(got.resumed);
    // TLS 1.2 hands the client its session whether or not a ticket came.
    if (version == TLS1_3_VERSION) {
      EXPECT_EQ(got.tickets, 0);
    }
    if (client.last() == nullptr) continue;
    SSL_SESSION* offer = hold(client.last());
    EXPECT_FALSE(handshake(client, tls->ctx(), offer).resumed) << version;
    SSL_SESSION_free(offer);
  }
}

TEST(TlsHandshake, EachWorkerHasItsOwnContextAndResumesTheOthersTickets) {
  auto tls = make({}, 3);
  ASSERT_EQ(tls->contexts(), 3u);
  EXPECT_NE(tls->ctx(0), tls->ctx(1));
  EXPECT_NE(tls->ctx(1), tls->ctx(2));
  for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    for (size_t from = 0; from < 3; ++from) {
      TlsClient client(nullptr, version);
      ASSERT_TRUE(handshake(client, tls->ctx(from)).ok);
      ASSERT_NE(client.last(), nullptr);
      SSL_SESSION* ticket = hold(client.last());
      Shaken on = handshake(client, tls->ctx((from + 1) % 3), ticket);
      SSL_SESSION_free(ticket);
      EXPECT_TRUE(on.resumed) << "TLS " << version << " from worker " << from;
    }
  }
}

TEST(TlsHandshake, AnotherProcessesTicketDoesNotResume) {
  auto one = make({});
  auto other = make({});
  TlsClient client;
  ASSERT_TRUE(handshake(client, one->ctx()).ok);
  SSL_SESSION* ticket = hold(client.last());
  Shaken got = handshake(client, other->ctx(), ticket);
  SSL_SESSION_free(ticket);
  EXPECT_TRUE(got.ok);
  EXPECT_FALSE(got.resumed);
}

TEST(TlsHandshake, EveryWorkerServesTheOneCertificate) {
  auto tls = make({}, 2);
  X509* a = SSL_CTX_get0_certificate(tls->ctx(0));
  X509* b = SSL_CTX_get0_certificate(tls->ctx(1));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(X509_cmp(a, b), 0);
  EXPECT_NE(a, b);
  // Each key decoded in its worker's library context, whose provider
  // instance signs with it: no key crosses from one library to another.
  const OSSL_PROVIDER* pa = EVP_PKEY_get0_provider(SSL_CTX_get0_privatekey(tls->ctx(0)));
  const OSSL_PROVIDER* pb = EVP_PKEY_get0_provider(SSL_CTX_get0_privatekey(tls->ctx(1)));
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  EXPECT_NE(pa, pb);
  EVP_PKEY* in_default = EVP_EC_gen("P-256");
  EXPECT_NE(EVP_PKEY_get0_provider(in_default), pa);
  EVP_PKEY_free(in_default);
}

}  // namespace
}  // namespace hello
