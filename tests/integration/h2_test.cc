// --h2 over real sockets (docs/http2.md): a connection that opens with the
// HTTP/2 preface (h2c, prior knowledge), or whose TLS handshake selected
// ALPN h2, gets the persona's answers as HTTP/2 frames, nghttp2's client
// reading them; HTTP/1.1 keeps working on the same port; without --h2 the
// preface is HTTP/1 input like any other, and ALPN never selects h2.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "h2_connection.h"
#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;

TEST(H2c, APriorKnowledgeConnectionGetsThePersonasAnswerAsFrames) {
  ServerProcess s("sanic", {"--h2"});
  H2Connection c(s.port());
  int32_t root = c.get("/");
  int32_t missing = c.get("/nope");
  ASSERT_TRUE(c.run({root, missing}));
  EXPECT_EQ(c.streams[root].fields[":status"], "200");
  EXPECT_EQ(c.streams[root].body, "Hello!!!");
  EXPECT_EQ(c.streams[root].fields.count("connection"), 0u);
  EXPECT_EQ(c.streams[missing].fields[":status"], "404");
  // More streams on the same connection, many at once.
  std::vector<int32_t> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(c.get("/"));
  ASSERT_TRUE(c.run(ids));
  for (int32_t id : ids) EXPECT_EQ(c.streams[id].body, "Hello!!!") << id;
  EXPECT_EQ(s.stop(), 0);
  std::string summary = s.rest_of_stderr();
  EXPECT_NE(summary.find("62 requests, 62 over HTTP/2"), std::string::npos) << summary;
}

TEST(H2c, AGracefulStopSaysGoawayWithTheLastStream) {
  // The close comes from the stop, long before the shutdown timeout.
  ServerProcess s("sanic", {"--h2", "--shutdown-timeout", "60"});
  H2Connection c(s.port());
  int32_t root = c.get("/");
  ASSERT_TRUE(c.run({root}));
  auto t0 = Clock::now();
  s.signal(SIGTERM);
  EXPECT_TRUE(c.run_until_closed(scaled(3s))) << "left open";
  EXPECT_TRUE(c.goaway) << "closed without GOAWAY";
  EXPECT_EQ(c.goaway_last, root);
  EXPECT_EQ(s.wait(scaled(3s)), 0);
  EXPECT_LT(Clock::now() - t0, scaled(3s));
}

TEST(H2c, Http11KeepsWorkingOnTheSamePort) {
  ServerProcess s("sanic", {"--h2"});
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string r = c.read_response();
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(r.substr(r.size() - 8), "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
  EXPECT_EQ(s.rest_of_stderr().find("over HTTP/2"), std::string::npos);
}

constexpr std::string_view kH2ThenHttp11 = "\x02h2\x08http/1.1";

TEST(H2, AlpnH2OverTlsGetsThePersonasAnswerAsFrames) {
  ServerProcess s("sanic", {"--h2", "--tls"});
  H2Connection c(s.port(), kH2ThenHttp11);
  EXPECT_EQ(c.negotiated, "h2");
  int32_t root = c.get("/");
  ASSERT_TRUE(c.run({root}));
  EXPECT_EQ(c.streams[root].fields[":status"], "200");
  EXPECT_EQ(c.streams[root].body, "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2, WithoutTheFlagAlpnSelectsThePersonasOwn) {
  ServerProcess s("sanic", {"--tls"});
  H2Connection c(s.port(), kH2ThenHttp11);
  EXPECT_EQ(c.negotiated, "http/1.1");  // sanic's, docs/tls.md
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2c, WithoutTheFlagThePrefaceIsHttp1Input) {
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
  auto r = c.read_to_eof(2s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rfind("HTTP/1.1 ", 0), 0u) << *r;
  EXPECT_EQ(s.stop(), 0);
}

// curl --http2's request in clear, with its HTTP2-Settings (MAX_CONCURRENT_STREAMS
// 100, INITIAL_WINDOW_SIZE 32 MiB, ENABLE_PUSH 0).
constexpr std::string_view kCurlSettings = "AAMAAABkAAQCAAAAAAIAAAAA";
const std::string kCurlSettingsBytes(
    "\x00\x03\x00\x00\x00\x64\x00\x04\x02\x00\x00\x00\x00\x02\x00\x00\x00\x00", 18);

std::string upgrade_request(std::string_view path, std::string_view settings_lines) {
  return "GET " + std::string(path) +
         " HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" +
         std::string(settings_lines) + "\r\n";
}

TEST(H2c, AnUpgradeIsAnswered101ThenOnStream1) {
  ServerProcess s("sanic", {"--h2"});
  H2Connection c(s.port());
  std::string head =
      c.upgrade(upgrade_request("/json", "HTTP2-Settings: " + std::string(kCurlSettings) + "\r\n"),
                kCurlSettingsBytes);
  EXPECT_EQ(head,
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
  ASSERT_TRUE(c.run({1}));
  EXPECT_EQ(c.streams[1].fields[":status"], "200");
  EXPECT_EQ(c.streams[1].body, "{\"hello\":\"world\"}");
  // The connection goes on in HTTP/2.
  int32_t next = c.get("/");
  ASSERT_TRUE(c.run({next}));
  EXPECT_EQ(next, 3);
  EXPECT_EQ(c.streams[next].body, "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
  std::string summary = s.rest_of_stderr();
  EXPECT_NE(summary.find("2 requests, 2 over HTTP/2"), std::string::npos) << summary;
}

// RFC 7540 section 3.2.1: no upgrade without exactly one HTTP2-Settings;
// an Upgrade to anything else, over TLS or without --h2, is ignored too.
TEST(H2c, AnUpgradeTheServerMayNotTakeIsAnsweredInHttp11) {
  ServerProcess s("sanic", {"--h2"});
  const std::string settings = "HTTP2-Settings: " + std::string(kCurlSettings) + "\r\n";
  for (const std::string& request :
       {upgrade_request("/", ""), upgrade_request("/", settings + settings),
        upgrade_request("/", "HTTP2-Settings: not*base64\r\n"),
        std::string(
            "GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
        std::string("GET / HTTP/1.0\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n") +
            settings + "\r\n"}) {
    Client c(s.port());
    ASSERT_TRUE(c.send(request));
    std::string r = c.read_response();
    EXPECT_EQ(r.rfind("HTTP/1.", 0), 0u) << request;
    EXPECT_EQ(r.find("101"), std::string::npos) << request;
    EXPECT_EQ(r.substr(r.size() - 8), "Hello!!!") << request;
  }
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2c, OverTlsOrWithoutTheFlagAnUpgradeIsIgnored) {
  const std::string request =
      upgrade_request("/", "HTTP2-Settings: " + std::string(kCurlSettings) + "\r\n");
  {
    ServerProcess s("sanic", {"--h2", "--tls"});
    Client c(s.port(), Tls::on);
    ASSERT_TRUE(c.send(request));
    EXPECT_EQ(c.read_response().rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_EQ(s.stop(), 0);
  }
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send(request));
  EXPECT_EQ(c.read_response().rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2c, TheAccessLogSaysHttp2) {
  ServerProcess s("sanic", {"--h2", "--access-log"});
  H2Connection c(s.port());
  int32_t id = c.get("/json?x=1");
  ASSERT_TRUE(c.run({id}));
  EXPECT_EQ(s.stop(), 0);
  std::string log = s.all_of_stdout();
  EXPECT_NE(log.find("\"GET /json?x=1 HTTP/2.0\" 200 17"), std::string::npos) << log;
}

}  // namespace
}  // namespace hello::test
