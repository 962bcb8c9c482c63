// The WebSocket heart with permessage-deflate agreed (RFC 7692): echoes
// compressed byte for byte as the frameworks send them, compressed
// messages inflated whole, RSV1 where it may not be, corrupt data, the limit
// once inflated. Frames are made and read back by wslay (ws_frames.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "websocket/ws_heart.h"
#include "ws_frames.h"
#include "ws_test_support.h"

namespace hello {
namespace {

using test::client_frame;
using test::server_frames;
using test::WsFrame;

}  // namespace
}  // namespace hello

namespace hello {
namespace {

// permessage-deflate agreed (RFC 7692): RSV1 marks a compressed message.
class WsDeflateHeartTest : public ::testing::Test {
 protected:
  WsDeflateHeartTest() : table_(test::kTestWs), heart_(table_, sink_) {
    test::reopen(heart_, true);
  }
  std::vector<WsFrame> feed(const std::string& in) {
    std::string out;
    fed_ = heart_.feed(in.data(), in.size(), out);
    return server_frames(out);
  }

  WsTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  WsHeart heart_;
  Fed fed_;
};

// "hello" compressed by zlib with a 32 KiB window, flushed, its tail off,
// twice on one stream: the bytes aiohttp, uvicorn and Tomcat send
// (scripts/peers/websocket/captures/*/deflate-echo).
const std::string kHello1("\xca\x48\xcd\xc9\xc9\x07\x00", 7);
const std::string kHello2("\xca\x00\x11\x00\x00", 5);

TEST_F(WsDeflateHeartTest, EchoesAreCompressedWithContextTakeover) {
  std::vector<WsFrame> frames = feed(client_frame(1, "hello") + client_frame(1, "hello"));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].rsv, 4) << "RSV1";
  EXPECT_EQ(frames[0].payload, kHello1);
  EXPECT_EQ(frames[1].payload, kHello2);
}

TEST_F(WsDeflateHeartTest, ACompressedMessageIsInflatedAndEchoed) {
  std::vector<WsFrame> frames =
      feed(client_frame(1, kHello1, true, 4) + client_frame(1, kHello2, true, 4));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, kHello1) << "the same 'hello' compressed back";
  EXPECT_EQ(stats_.ws_bytes_in.get(), 10u) << "counted inflated";
}

TEST_F(WsDeflateHeartTest, ACompressedMessageInFragmentsIsInflatedWhole) {
  std::string in = client_frame(1, kHello1.substr(0, 3), false, 4) + client_frame(9, "ping") +
                   client_frame(0, kHello1.substr(3), true);
  std::vector<WsFrame> frames = feed(in);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].opcode, test::kWsPongFrame);
  EXPECT_EQ(frames[1].payload, kHello1);
}

TEST_F(WsDeflateHeartTest, Rsv1OnAContinuationOrAControlFrameIsAProtocolError) {
  std::vector<WsFrame> frames = feed(client_frame(1, "a", false) + client_frame(0, "b", true, 4));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().code(), kWsProtocolError);
  test::reopen(heart_, true);
  frames = feed(client_frame(9, "p", true, 4));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().code(), kWsProtocolError);
}

TEST_F(WsDeflateHeartTest, CorruptDataIsInvalidData) {
  std::vector<WsFrame> frames = feed(client_frame(2, std::string("\xff\xff\xff\xff", 4), true, 4));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().code(), kWsInvalidData);
}

TEST_F(WsDeflateHeartTest, AMessageOverTheLimitOnceInflatedIs1009) {
  // 2,000 zero bytes compress to a few; the limit is 1,000.
  std::string zeros;
  {
    WsDeflate d;
    d.deflate(std::string(2000, '\0'), zeros);
  }
  std::vector<WsFrame> frames = feed(client_frame(2, zeros, true, 4));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().code(), kWsTooBig);
}

TEST_F(WsDeflateHeartTest, InvalidUtf8OnceInflatedIsInvalidData) {
  std::string bad;
  {
    WsDeflate d;
    d.deflate("\xc3\x28", bad);
  }
  std::vector<WsFrame> frames = feed(client_frame(1, bad, true, 4));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().code(), kWsInvalidData);
}

}  // namespace
}  // namespace hello
