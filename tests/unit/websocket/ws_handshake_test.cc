// The opening handshake judged (RFC 6455 section 4.2.1) in the order the
// persona's refusals are picked by, the accept value (section 4.2.2), and
// which permessage-deflate offers a persona that agrees it takes.
#include "websocket/ws_handshake.h"

#include <gtest/gtest.h>

#include <string>

namespace hello {
namespace {

constexpr WebSocketPersona kStrict{.path = "/ws", .deflate = true};
constexpr WebSocketPersona kOld{.path = "/ws",
                                .versions = kWsVersion13 | kWsVersion8 | kWsVersion7};

WsHandshakeFields good() {
  WsHandshakeFields f;
  f.upgrade_seen = true;
  f.upgrade = "websocket";
  f.connection_upgrade = true;
  f.key = "dGhlIHNhbXBsZSBub25jZQ==";
  f.keys = 1;
  f.version = "13";
  f.versions = 1;
  return f;
}

WsRefusalKind refusal(const WsHandshakeFields& f, const WebSocketPersona& ws = kStrict) {
  WsVerdict v = judge_ws_handshake(ws, f);
  EXPECT_FALSE(v.upgrade);
  return v.refusal;
}

TEST(WsHandshake, TheRfcsExampleKeyGivesItsAcceptValue) {
  char accept[28];
  ws_accept("dGhlIHNhbXBsZSBub25jZQ==", accept);
  EXPECT_EQ(std::string(accept, 28), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WsHandshake, AGoodRequestUpgrades) {
  EXPECT_TRUE(judge_ws_handshake(kStrict, good()).upgrade);
  WsHandshakeFields f = good();
  f.upgrade = "foo, WebSocket";  // a list, any case
  f.key = "  dGhlIHNhbXBsZSBub25jZQ== ";
  EXPECT_TRUE(judge_ws_handshake(kStrict, f).upgrade);
}

TEST(WsHandshake, RefusalsComeInTheRfcsOrder) {
  WsHandshakeFields f = good();
  f.upgrade_seen = false;
  f.connection_upgrade = false;
  EXPECT_EQ(refusal(f), WsRefusalKind::plain);
  f = good();
  f.upgrade = "h2c";
  f.keys = 0;
  EXPECT_EQ(refusal(f), WsRefusalKind::not_websocket);
  f = good();
  f.connection_upgrade = false;
  f.version = "8";
  EXPECT_EQ(refusal(f), WsRefusalKind::no_connection);
  f = good();
  f.version = "12";
  f.keys = 0;
  EXPECT_EQ(refusal(f), WsRefusalKind::bad_version);
  f = good();
  f.keys = 0;
  EXPECT_EQ(refusal(f), WsRefusalKind::bad_key);
}

TEST(WsHandshake, HttpTenNeverUpgrades) {
  WsHandshakeFields f = good();
  f.http11 = false;
  EXPECT_EQ(refusal(f), WsRefusalKind::plain);
}

TEST(WsHandshake, VersionsAreThePersonasOwn) {
  WsHandshakeFields f = good();
  f.version = "8";
  EXPECT_EQ(refusal(f), WsRefusalKind::bad_version);
  EXPECT_TRUE(judge_ws_handshake(kOld, f).upgrade);
  f.version = "7";
  EXPECT_TRUE(judge_ws_handshake(kOld, f).upgrade);
  f.version = "9";
  EXPECT_EQ(refusal(f, kOld), WsRefusalKind::bad_version);
  f = good();
  f.versions = 2;  // two lines
  EXPECT_EQ(refusal(f), WsRefusalKind::bad_version);
}

TEST(WsHandshake, AKeyIsSixteenBytesInBase64AndOnlyOne) {
  for (const char* bad : {"", "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZQ==x",
                          "dGhlIHNhbXBsZSBub25jZQ!=", "dGhlIHNhbXBsZSBub25jZR==",
                          "dGhlIHNhbXBsZSBub25jZQAA", "dGhlIHNhbXBsZSBub25j====", "\x01"}) {
    WsHandshakeFields f = good();
    f.key = bad;
    EXPECT_EQ(refusal(f), WsRefusalKind::bad_key) << bad;
  }
  WsHandshakeFields f = good();
  f.keys = 2;
  EXPECT_EQ(refusal(f), WsRefusalKind::bad_key);
  f = good();
  f.key = "AAAAAAAAAAAAAAAAAAAAAA==";
  EXPECT_TRUE(judge_ws_handshake(kStrict, f).upgrade);
}

TEST(WsHandshake, DeflateIsAgreedForTheOffersEveryFrameworkHereTakes) {
  for (const char* offer : {"permessage-deflate", "permessage-deflate; client_max_window_bits",
                            "x-webkit-deflate-frame, permessage-deflate; client_max_window_bits",
                            "Permessage-Deflate ;  Client_Max_Window_Bits"}) {
    WsHandshakeFields f = good();
    f.extensions = offer;
    WsVerdict v = judge_ws_handshake(kStrict, f);
    EXPECT_TRUE(v.upgrade && v.deflate) << offer;
  }
  for (const char* offer :
       {"", "x-webkit-deflate-frame", "permessage-deflate; server_no_context_takeover",
        "permessage-deflate; client_max_window_bits=10",
        "permessage-deflate; server_max_window_bits=10"}) {
    WsHandshakeFields f = good();
    f.extensions = offer;
    WsVerdict v = judge_ws_handshake(kStrict, f);
    EXPECT_TRUE(v.upgrade && !v.deflate) << offer;
  }
  WsHandshakeFields f = good();
  f.extensions = "permessage-deflate";
  EXPECT_FALSE(judge_ws_handshake(kOld, f).deflate) << "a persona that never agrees it";
}

}  // namespace
}  // namespace hello
