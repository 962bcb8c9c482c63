// Upgrade: h2c in the HTTP/1 heart (docs/http2.md): with h2c allowed, a
// bodiless HTTP/1.1 request naming h2c with one HTTP2-Settings ends the
// HTTP/1 session (Fed::upgrade) and hands over its method, path and decoded
// settings; the answers before it are sent; anything else is answered in
// HTTP/1.1, as is every Upgrade when h2c is not allowed.
#include <gtest/gtest.h>

#include <string>

#include "http1/session.h"
#include "test_persona.h"

namespace hello {
namespace {

constexpr std::string_view kUpgrade =
    "GET /json HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nupgrade: "
    "websocket, H2C\r\nHTTP2-Settings: AAMAAABk\r\n\r\n";

class SessionUpgradeTest : public ::testing::Test {
 protected:
  SessionUpgradeTest() : table_(test::kTestPersona, {}), session_(table_, sink_) {
    session_.allow_h2c(true);
    session_.reset();
  }
  Fed feed(std::string_view in, std::string& out) {
    return session_.feed(in.data(), in.size(), out);
  }

  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Session session_;
};

TEST_F(SessionUpgradeTest, AnH2cRequestHandsItselfOver) {
  std::string first = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  std::string in = first + std::string(kUpgrade) + "PRI * HTTP/2.0";
  std::string out;
  Fed fed = feed(in, out);
  EXPECT_TRUE(fed.upgrade);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(fed.answered, 1u) << "the request before it";
  EXPECT_EQ(out, table_.route(0, Variant::keep_alive_11).bytes);
  EXPECT_EQ(fed.consumed, first.size() + kUpgrade.size());
  const Upgrade* u = session_.upgrade();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->settings, std::string("\x00\x03\x00\x00\x00\x64", 6));
  EXPECT_EQ(u->path, "/json");
  EXPECT_EQ(u->method, kGet);
  EXPECT_EQ(stats_.requests.get(), 1u) << "stream 1 is counted by the HTTP/2 heart";
}

TEST_F(SessionUpgradeTest, AHeadCutAcrossReadsIsAnsweredInHttp11) {
  std::string out;
  Fed fed = feed(kUpgrade.substr(0, 20), out);
  fed = feed(kUpgrade.substr(20), out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(out, table_.route(table_.find_route("/json"), Variant::keep_alive_11).bytes);
}

// Each fault alone in an otherwise good Upgrade request: the request is
// answered in HTTP/1.1, exactly as without the Upgrade, and the session
// goes on in HTTP/1.1.
TEST_F(SessionUpgradeTest, ARequestWithABodyIsAnsweredInHttp11) {
  std::string in =
      "POST / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: "
      "h2c\r\nHTTP2-Settings: AAMAAABk\r\nContent-Length: 2\r\n\r\nhi";
  std::string out;
  Fed fed = feed(in, out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(session_.upgrade(), nullptr);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(out, table_.error(405, Variant::keep_alive_11).bytes);
}

// "AAMAAA" decodes to 4 bytes: no whole SETTINGS entry (6 bytes each).
TEST_F(SessionUpgradeTest, SettingsOfAPartEntryAreAnsweredInHttp11) {
  std::string in =
      "GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: "
      "h2c\r\nHTTP2-Settings: AAMAAA\r\n\r\n";
  std::string out;
  Fed fed = feed(in, out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(session_.upgrade(), nullptr);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(out, table_.route(0, Variant::keep_alive_11).bytes);
}

TEST_F(SessionUpgradeTest, SettingsNotInBase64urlAreAnsweredInHttp11) {
  std::string in =
      "GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: "
      "h2c\r\nHTTP2-Settings: AAMA!ABk\r\n\r\n";
  std::string out;
  Fed fed = feed(in, out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(session_.upgrade(), nullptr);
  EXPECT_EQ(out, table_.route(0, Variant::keep_alive_11).bytes);
}

// RFC 7540 section 3.2.1: no upgrade with more than one HTTP2-Settings.
TEST_F(SessionUpgradeTest, TwoSettingsFieldsAreAnsweredInHttp11) {
  std::string in =
      "GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: "
      "h2c\r\nHTTP2-Settings: AAMAAABk\r\nHTTP2-Settings: AAMAAABk\r\n\r\n";
  std::string out;
  Fed fed = feed(in, out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(session_.upgrade(), nullptr);
  EXPECT_EQ(out, table_.route(0, Variant::keep_alive_11).bytes);
}

TEST_F(SessionUpgradeTest, WithoutH2cTheUpgradeIsIgnored) {
  session_.allow_h2c(false);
  session_.reset();
  std::string out;
  Fed fed = feed(kUpgrade, out);
  EXPECT_FALSE(fed.upgrade);
  EXPECT_EQ(session_.upgrade(), nullptr);
  EXPECT_EQ(out, table_.route(table_.find_route("/json"), Variant::keep_alive_11).bytes);
}

}  // namespace
}  // namespace hello

namespace hello {
namespace {

// A session that switched one connection to a WebSocket and is lent to
// another that asks for h2c switches that one to HTTP/2 (a pooled
// session's last Upgrade is never carried over).
constexpr Persona kWsPersona = [] {
  Persona p = test::kTestPersona;
  p.websocket.path = "/ws";
  p.websocket.switching = "HTTP/1.1 101 \r\nSec-WebSocket-Accept: {accept}\r\n{extensions}\r\n";
  return p;
}();

TEST(SessionUpgradeReuse, AnH2cUpgradeAfterAWebSocketOneIsH2c) {
  ResponseTable table(kWsPersona, {});
  WorkerStats stats;
  Accounting sink(stats);
  Session session(table, sink);
  session.allow_h2c(true);
  session.reset();
  std::string out;
  std::string ws =
      "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  Fed fed = session.feed(ws.data(), ws.size(), out);
  ASSERT_TRUE(fed.upgrade);
  ASSERT_EQ(session.upgrade()->to, Upgrade::To::websocket);
  session.reset();
  fed = session.feed(kUpgrade.data(), kUpgrade.size(), out);
  ASSERT_TRUE(fed.upgrade);
  EXPECT_EQ(session.upgrade()->to, Upgrade::To::h2c);
  EXPECT_TRUE(session.upgrade()->ws_key.empty());
}

}  // namespace
}  // namespace hello
