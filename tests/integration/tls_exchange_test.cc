// TLS on the persona's port (--tls, docs/tls.md), over real sockets: that
// pipelined and byte-per-record requests are answered as in clear; that the
// handshake's last flight, the answer and the close_notify leave in one
// write; and how a connection ends over TLS (close_notify at a graceful
// stop, nothing owed to a client that resets).
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
// --tls-tickets's default: one after a full handshake, one after a resumed
// one.
TEST(Tls, TheTicketsTheAnswerAndTheCloseNotifyLeaveInOneWrite) {
  TlsServer s;
  SSL_CTX* ctx = client_ctx(TLS1_3_VERSION, "DEFAULT");
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  Exchange full = exchange(s.port(), ctx, nullptr);
  EXPECT_EQ(body_of(full.answer), "Hello!!!") << full.answer;
  EXPECT_TRUE(full.close_notify);
  EXPECT_FALSE(full.resumed);
  EXPECT_EQ(full.tickets, 1);
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
