// TLS on the persona's port (--tls, docs/tls.md), over real sockets: what
// bad input gets (plain HTTP, garbage, old versions, no common cipher, half
// a ClientHello) and how the admin port's /stats counts it; that a flood of
// such clients leaves no descriptor behind; that pipelined and
// byte-per-record requests are answered as in clear; and how a connection
// ends over TLS (close_notify at a graceful stop, nothing owed to a client
// that resets); and that the handshake's last flight, the answer and the
// close_notify leave in one write.
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

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;
using Counts = std::map<std::string, uint64_t>;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
constexpr unsigned char kAlertRecord = 0x15;  // TLS record type 21, RFC 8446 section 5.1

int status_of(const std::string& r) {
  return r.size() >= 12 && r.rfind("HTTP/1.", 0) == 0 ? std::stoi(r.substr(9, 3)) : -1;
}

std::string body_of(const std::string& r) {
  size_t at = r.find("\r\n\r\n");
  return at == std::string::npos ? "" : r.substr(at + 4);
}

// hello-sanic --tls with an admin port, and `flags`.
class TlsServer {
 public:
  explicit TlsServer(const std::vector<std::string>& flags = {})
      : admin_port_(free_port()), server_("sanic", all_flags(admin_port_, flags)) {}

  ServerProcess& process() { return server_; }
  int port() const { return server_.port(); }

  // The handshake counters of /stats's "total" that are not zero (of
  // full, resumed and the failures), or {"unreadable", 1}.
  Counts counts() const {
    Client c(admin_port_);
    c.send("GET /stats HTTP/1.1\r\nHost: a\r\n\r\n");
    std::string body = body_of(c.read_to_eof(2s).value_or(""));
    simdjson::dom::parser parser;
    simdjson::dom::object tls;
    if (parser.parse(body).get(tls) == simdjson::SUCCESS &&
        tls["total"]["tls"].get(tls) == simdjson::SUCCESS) {
      Counts counts;
      for (const char* key : {"full", "resumed", "failed_version", "failed_cipher",
                              "failed_plain_http", "failed_other", "failed_client_left"}) {
        uint64_t n = 0;
        if (tls[key].get(n) != simdjson::SUCCESS) return {{"unreadable", 1}};
        if (n != 0) counts[key] = n;
      }
      return counts;
    }
    return {{"unreadable", 1}};
  }

  // The counters once they are `expected`, or as they are after `limit`:
  // a worker counts on its own loop, the admin port reads on another.
  Counts counts_when(const Counts& expected, std::chrono::milliseconds limit = 2s) const {
    auto deadline = Clock::now() + limit;
    Counts now = counts();
    while (now != expected && Clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      now = counts();
    }
    return now;
  }

  // One request over a new TLS connection; true if it got the route's body.
  bool serves() const {
    try {
      Client c(port(), Tls::on);
      return c.send(kGet) && body_of(c.read_response()) == "Hello!!!";
    } catch (const std::exception&) {
      return false;
    }
  }

 private:
  static std::vector<std::string> all_flags(int admin_port, std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--tls", "--admin", "127.0.0.1:" + std::to_string(admin_port)});
    return flags;
  }

  int admin_port_;
  ServerProcess server_;
};

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

// A client context limited to `max_version` and `ciphers`, no verification.
SSL_CTX* client_ctx(int max_version, const char* ciphers) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, max_version);
  EXPECT_EQ(SSL_CTX_set_cipher_list(ctx, ciphers), 1) << ciphers;
  return ctx;
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

TEST(Tls, SixteenPipelinedRequestsInOneWriteGetSixteenAnswers) {
  TlsServer s;
  Client c(s.port(), Tls::on);
  std::string burst;
  for (int i = 0; i < 16; ++i)
    burst += "GET /?n=" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_LT(burst.size(), 16384u) << "one TLS record";
  ASSERT_TRUE(c.send(burst));
  for (int i = 0; i < 16; ++i) {
    std::string r = c.read_response();
    ASSERT_EQ(status_of(r), 200) << i << ": " << r;
    ASSERT_EQ(body_of(r), "Hello!!!") << i;
  }
  EXPECT_EQ(c.read_exactly(1, 200ms), "") << "more than 16 answers";
  EXPECT_EQ(s.process().stop(), 0);
}

// What a client's message callback keeps: the tickets read, and the
// socket to cork once the server's Finished is read, so that the client's
// Finished and its request leave in one segment, as from a client that
// sends its request at once (wrk, ab) to a busy server.
struct Watch {
  int tickets = 0;
  int cork_fd = -1;
};

void watch(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  constexpr unsigned char kFinished = 20, kNewSessionTicket = 4;  // RFC 8446 section 4
  if (write_p != 0 || content_type != SSL3_RT_HANDSHAKE || len == 0) return;
  auto* w = static_cast<Watch*>(arg);
  unsigned char type = static_cast<const unsigned char*>(buf)[0];
  if (type == kNewSessionTicket) ++w->tickets;
  if (type == kFinished && w->cork_fd >= 0) {
    int one = 1;
    setsockopt(w->cork_fd, IPPROTO_TCP, TCP_CORK, &one, sizeof one);
  }
}

// The segments with data the socket `fd` has received.
uint32_t data_segments_in(int fd) {
  struct tcp_info info {};
  socklen_t len = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return 0;
  return info.tcpi_data_segs_in;
}

// One `Connection: close` request over a new TLS 1.3 connection, offering
// `session` if not null: what the server's side of it came to.
struct Exchange {
  std::string answer;
  bool close_notify = false;
  bool resumed = false;
  int tickets = 0;
  uint32_t segments = 0;
  SSL_SESSION* session = nullptr;  // the client's, to resume; the caller frees it
};

Exchange exchange(int port, SSL_CTX* ctx, SSL_SESSION* session) {
  Exchange x;
  Client tcp(port);
  struct timeval tv = {3, 0};
  setsockopt(tcp.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  Watch w;
  w.cork_fd = tcp.fd();
  SSL* ssl = SSL_new(ctx);
  SSL_set_msg_callback(ssl, watch);
  SSL_set_msg_callback_arg(ssl, &w);
  SSL_set_fd(ssl, tcp.fd());
  SSL_set_tlsext_host_name(ssl, "localhost");
  if (session != nullptr) SSL_set_session(ssl, session);
  const std::string request = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  if (SSL_connect(ssl) == 1 && SSL_write(ssl, request.data(), static_cast<int>(request.size())) ==
                                   static_cast<int>(request.size())) {
    int zero = 0;
    setsockopt(tcp.fd(), IPPROTO_TCP, TCP_CORK, &zero, sizeof zero);  // both leave now
    char buf[4096];
    for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;)
      x.answer.append(buf, static_cast<size_t>(n));
  }
  x.tickets = w.tickets;
  x.close_notify = (SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN) != 0;
  x.resumed = SSL_session_reused(ssl) == 1;
  x.segments = data_segments_in(tcp.fd());
  x.session = SSL_get1_session(ssl);
  SSL_shutdown(ssl);  // our close_notify: freed without it, the session would not resume
  ERR_clear_error();
  SSL_free(ssl);
  return x;
}

// A TLS 1.3 server writes its tickets on reading the client's Finished.
// When the request came in the same read, they go in the answers' write,
// and the last answer takes the close_notify with it: the server's side of
// the connection is two writes, its first flight and the rest. (Written on
// their own, the tickets were a segment of their own.) As many tickets as
// OpenSSL's default: two after a full handshake, one after a resumed one.
TEST(Tls, TheTicketsTheAnswerAndTheCloseNotifyLeaveInOneWrite) {
  TlsServer s;
  SSL_CTX* ctx = client_ctx(TLS1_3_VERSION, "DEFAULT");
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  Exchange full = exchange(s.port(), ctx, nullptr);
  EXPECT_EQ(body_of(full.answer), "Hello!!!") << full.answer;
  EXPECT_TRUE(full.close_notify);
  EXPECT_FALSE(full.resumed);
  EXPECT_EQ(full.tickets, 2);
  EXPECT_EQ(full.segments, 2u) << "the server's flight, then tickets, answer, close_notify";
  Exchange resumed = exchange(s.port(), ctx, full.session);
  EXPECT_EQ(body_of(resumed.answer), "Hello!!!") << resumed.answer;
  EXPECT_TRUE(resumed.close_notify);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.tickets, 1);
  EXPECT_EQ(resumed.segments, 2u);
  SSL_SESSION_free(full.session);
  SSL_SESSION_free(resumed.session);
  SSL_CTX_free(ctx);
  EXPECT_EQ(s.counts_when({{"full", 1}, {"resumed", 1}}), (Counts{{"full", 1}, {"resumed", 1}}));
  EXPECT_EQ(s.process().stop(), 0);
}

// Without a request in the same read, the tickets leave at once: a client
// with Nagle's algorithm on (Python's) holds its request until its
// Finished is acknowledged, and the tickets carry that ACK; held back for
// the first answer, they made every such request wait for a delayed ACK
// (40 ms).
TEST(Tls, TheTicketsLeaveAtOnceWhenNoRequestCameWithTheFinished) {
  TlsServer s;
  Client c(s.port(), Tls::on);  // the handshake only: nothing sent after the Finished
  pollfd p = {c.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 2000), 1) << "no tickets before the request";
  ASSERT_TRUE(c.send(kGet));
  EXPECT_EQ(body_of(c.read_response()), "Hello!!!");
  EXPECT_EQ(s.process().stop(), 0);
}

TEST(Tls, ARequestSentOneByteARecordIsAnsweredAsWhenSentWhole) {
  TlsServer s;
  const std::string request = "GET /json HTTP/1.1\r\nHost: t\r\nUser-Agent: bytewise\r\n\r\n";
  Client whole(s.port(), Tls::on);
  ASSERT_TRUE(whole.send(request));
  std::string expected = whole.read_response();
  ASSERT_EQ(status_of(expected), 200) << expected;
  Client bytewise(s.port(), Tls::on);
  for (char ch : request) {
    // One SSL_write, one record, one segment (the client sets TCP_NODELAY).
    ASSERT_TRUE(bytewise.send(std::string_view(&ch, 1)));
    std::this_thread::sleep_for(200us);
  }
  EXPECT_EQ(mask_date(bytewise.read_response()), mask_date(expected));
  // The connection goes on.
  ASSERT_TRUE(bytewise.send(kGet));
  EXPECT_EQ(body_of(bytewise.read_response()), "Hello!!!");
  EXPECT_EQ(s.process().stop(), 0);
}

TEST(Tls, AGracefulStopSendsCloseNotifyToAnIdleConnection) {
  // The close comes from the stop, long before the shutdown timeout.
  TlsServer s({"--shutdown-timeout", "60"});
  Client c(s.port(), Tls::on);
  ASSERT_TRUE(c.send(kGet));
  ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
  auto t0 = Clock::now();
  s.process().signal(SIGTERM);
  auto rest = c.read_to_eof(scaled(2s));
  ASSERT_TRUE(rest.has_value()) << "left open";
  EXPECT_EQ(*rest, "");
  EXPECT_TRUE(c.got_close_notify()) << "EOF without close_notify";
  EXPECT_EQ(s.process().wait(scaled(2s)), 0);
  EXPECT_LT(Clock::now() - t0, scaled(2s));
}

TEST(Tls, AKeepAliveConnectionResetByTheClientCostsNothing) {
  TlsServer s;
  ASSERT_TRUE(s.serves());
  std::this_thread::sleep_for(100ms);
  const int baseline = s.process().open_fds();
  for (int i = 0; i < 20; ++i) {
    Client c(s.port(), Tls::on);
    ASSERT_TRUE(c.send(kGet));
    ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
    c.reset();
  }
  EXPECT_TRUE(s.serves());
  EXPECT_TRUE(s.process().fds_reach(baseline, 2s))
      << s.process().open_fds() << " descriptors, " << baseline << " before";
  EXPECT_EQ(s.counts_when({{"full", 22}}), (Counts{{"full", 22}}));
  EXPECT_EQ(s.process().stop(), 0);
}

}  // namespace
}  // namespace hello::test
