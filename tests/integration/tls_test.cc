// TLS on the persona's port (--tls, docs/tls.md), over real sockets: what
// bad input gets (plain HTTP, garbage, old versions, no common cipher, half
// a ClientHello) and how the admin port's /stats counts it; and that a flood
// of such clients leaves no descriptor behind.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/tcp.h>  // tcp_info's tcpi_data_segs_in, which glibc's lacks
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <simdjson.h>
#include <csignal>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "test_client.h"
#include "test_time.h"
#include "tls_server.h"

namespace hello::test {
namespace {

// `n` bytes from a seeded generator, the first of them not an upper-case
// letter (that would be plain HTTP to the transport).
std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string r(n, '\0');
  for (char& c : r) c = static_cast<char>(gen() & 0xff);
  if (r[0] >= 'A' && r[0] <= 'Z') r[0] = static_cast<char>(r[0] | 0x80);
  return r;
}

// A handshake record (TLS 1.0 record version, as a ClientHello has) of
// `length` bytes, with 200 bytes of seeded garbage after its header: a
// whole record whose message is no ClientHello (its first byte is not 1),
// or, at a length over the limit, a record too long to be one.
std::string garbage_record(uint16_t length, uint32_t seed) {
  std::string r = "\x16\x03\x01";
  r += static_cast<char>(length >> 8);
  r += static_cast<char>(length & 0xff);
  std::string garbage = random_bytes(200, seed);
  if (garbage[0] == '\x01') garbage[0] = '\x02';
  return r + garbage;
}

// A real ClientHello, as an OpenSSL client with the defaults writes it: the
// client runs on a pair of memory BIOs, so nothing is sent anywhere.
std::string client_hello() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);
  SSL_set_connect_state(ssl);
  SSL_set_tlsext_host_name(ssl, "localhost");
  SSL_do_handshake(ssl);  // wants to read the ServerHello: the ClientHello is out
  char* data = nullptr;
  long len = BIO_get_mem_data(out, &data);
  std::string hello(data, static_cast<size_t>(len));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return hello;
}

// Sends `bytes` over plain TCP; what came back before the close, or
// nullopt if the connection is still open after `limit`.
std::optional<std::string> answer_to(int port, std::string_view bytes,
                                     std::chrono::milliseconds limit = 2s) {
  Client c(port);
  if (!c.send(bytes)) return std::nullopt;
  return c.read_to_eof(limit);
}

// What a handshake with `ctx` came to: whether it completed, and the
// description of the alert the server sent (-1 if none).
struct Handshake {
  bool done = false;
  int alert = -1;
};

void on_message(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  if (write_p == 0 && content_type == SSL3_RT_ALERT && len == 2)
    *static_cast<int*>(arg) = static_cast<const unsigned char*>(buf)[1];
}

Handshake handshake_with(int port, SSL_CTX* ctx) {
  Client tcp(port);  // its socket; the TLS session is this function's own
  struct timeval tv = {3, 0};
  setsockopt(tcp.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(tcp.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  Handshake h;
  SSL* ssl = SSL_new(ctx);
  SSL_set_msg_callback(ssl, on_message);
  SSL_set_msg_callback_arg(ssl, &h.alert);
  SSL_set_fd(ssl, tcp.fd());
  h.done = SSL_connect(ssl) == 1;
  ERR_clear_error();
  SSL_free(ssl);
  return h;
}

TEST(Tls, PlainHttpGetsThe400InClearAndTheClose) {
  TlsServer s;
  auto r = answer_to(s.port(), kGet);
  ASSERT_TRUE(r.has_value()) << "left open";
  EXPECT_EQ(r->rfind("HTTP/1.1 400 ", 0), 0u) << *r;
  EXPECT_NE(r->find("\r\n\r\n"), std::string::npos) << "a whole answer: " << *r;
  EXPECT_EQ(s.counts_when({{"failed_plain_http", 1}}), (Counts{{"failed_plain_http", 1}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.counts_when({{"failed_plain_http", 1}, {"full", 1}}),
            (Counts{{"failed_plain_http", 1}, {"full", 1}}));
  EXPECT_EQ(s.process().stop(), 0);
}

// The whole reply is one fatal alert record, then the close: type 21, a
// legacy version 3.x, length 2, level 2 (fatal), and a description
// (RFC 8446 sections 5.1 and 6).
void expect_fatal_alert(const std::optional<std::string>& r, const char* what) {
  ASSERT_TRUE(r.has_value()) << what << ": left open";
  ASSERT_EQ(r->size(), 7u) << what << ": not one alert record";
  EXPECT_EQ(static_cast<unsigned char>((*r)[0]), kAlertRecord) << what;
  EXPECT_EQ((*r)[1], '\x03') << what;
  EXPECT_EQ(r->substr(3, 3), std::string("\x00\x02\x02", 3)) << what << ": length 2, fatal";
}

TEST(Tls, AGarbageRecordGetsAnAlertAndCountsAsOther) {
  TlsServer s;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    expect_fatal_alert(answer_to(s.port(), garbage_record(200, seed)), "garbage record");
    expect_fatal_alert(answer_to(s.port(), garbage_record(0xffff, seed)), "record too long");
  }
  EXPECT_EQ(s.counts_when({{"failed_other", 6}}), (Counts{{"failed_other", 6}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

// A record header that is no TLS record header at all (the version's major
// byte is not 3) is garbage, not an old version; OpenSSL sends no alert to
// what does not look like TLS: the close alone.
TEST(Tls, RandomBytesAreClosedWithoutAnAlertAndCountAsOther) {
  TlsServer s;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    std::string bytes = random_bytes(300, seed);
    ASSERT_NE(bytes[1], '\x03') << "seed " << seed << " makes a record header";
    auto r = answer_to(s.port(), bytes);
    ASSERT_TRUE(r.has_value()) << "seed " << seed << ": left open";
    EXPECT_EQ(*r, "") << "seed " << seed;
  }
  EXPECT_EQ(s.counts_when({{"failed_other", 5}}), (Counts{{"failed_other", 5}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

TEST(Tls, ATls11OnlyClientFailsOnTheVersion) {
  TlsServer s;
  SSL_CTX* ctx = client_ctx(TLS1_1_VERSION, "DEFAULT:@SECLEVEL=0");
  Handshake h = handshake_with(s.port(), ctx);
  SSL_CTX_free(ctx);
  EXPECT_FALSE(h.done);
  EXPECT_EQ(h.alert, TLS1_AD_PROTOCOL_VERSION);
  EXPECT_EQ(s.counts_when({{"failed_version", 1}}), (Counts{{"failed_version", 1}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

TEST(Tls, AClientWithOnlyACipherNotOfferedFailsOnTheCipher) {
  TlsServer s;
  SSL_CTX* ctx = client_ctx(TLS1_2_VERSION, "AES128-SHA");
  Handshake h = handshake_with(s.port(), ctx);
  SSL_CTX_free(ctx);
  EXPECT_FALSE(h.done);
  EXPECT_EQ(h.alert, SSL3_AD_HANDSHAKE_FAILURE);
  EXPECT_EQ(s.counts_when({{"failed_cipher", 1}}), (Counts{{"failed_cipher", 1}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

TEST(Tls, HalfAClientHelloIsClosedAtTheHeaderTimeout) {
  TlsServer s({"--header-timeout", "1"});
  std::string hello = client_hello();
  ASSERT_GT(hello.size(), 100u);
  ASSERT_EQ(hello[0], '\x16') << "a handshake record";
  std::optional<std::string> r;
  Clock::duration took{};
  {
    Client c(s.port());
    ASSERT_TRUE(c.send(std::string_view(hello).substr(0, 20)));
    auto t0 = Clock::now();
    r = c.read_to_eof(2s + scaled(3s));
    took = Clock::now() - t0;
  }  // our FIN ends the server's wait for it, and the close is counted then
  ASSERT_TRUE(r.has_value()) << "left open past the header timeout";
  EXPECT_EQ(*r, "") << "nothing to say to half a ClientHello";
  // The worker's once-a-second sweep closes it: between 1 and 2 s after,
  // and more on a loaded machine or in a slower build (test_time.h).
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 2s + scaled(1500ms));
  EXPECT_EQ(s.counts_when({{"failed_client_left", 1}}), (Counts{{"failed_client_left", 1}}));
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

// 1,000 connections of random bytes and 1,000 half ClientHellos, all open
// at once on the client's side: once the header timeout has passed, the
// server holds what it held before.
TEST(Tls, AFloodOfGarbageAndHalfHandshakesLeavesNoDescriptor) {
  struct rlimit lim;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  lim.rlim_cur = lim.rlim_max;
  // Before the server starts, so that it inherits the limit too.
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < 2200) GTEST_SKIP() << "descriptor limit " << lim.rlim_cur;
  TlsServer s({"--header-timeout", "1"});
  ASSERT_TRUE(s.serves());
  std::this_thread::sleep_for(100ms);
  const int baseline = s.process().open_fds();
  const std::string half = client_hello().substr(0, 20);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 1000; ++i) {
    clients.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(clients.back()->send(random_bytes(64, static_cast<uint32_t>(i))));
    clients.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(clients.back()->send(half));
  }
  // The header timeout (1 s, checked by a once-a-second sweep), then the
  // 2 to 3 s the server waits for the client's FIN after its own, as over
  // TCP (these clients neither read nor close), with slack.
  EXPECT_TRUE(s.process().fds_reach(baseline, 8s))
      << s.process().open_fds() << " descriptors, " << baseline << " before";
  Counts counts = s.counts();
  uint64_t failed = 0;
  for (const auto& [key, n] : counts)
    if (key.rfind("failed_", 0) == 0) failed += n;
  EXPECT_EQ(failed, 2000u);
  // The half ClientHellos, and any random input that began like a record
  // header and waited for the rest of its record until the header timeout.
  EXPECT_GE(counts["failed_client_left"], 1000u);
  EXPECT_LE(counts["failed_client_left"], 1010u);
  EXPECT_EQ(counts["full"], 1u);
  clients.clear();
  EXPECT_TRUE(s.serves());
  EXPECT_EQ(s.process().stop(), 0);
}

}  // namespace
}  // namespace hello::test
