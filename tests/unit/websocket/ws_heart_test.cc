// The WebSocket heart against RFC 6455, class by class (docs/websocket.md):
// echo, masking, reserved bits and opcodes, control frames, fragmentation,
// UTF-8, the close handshake, the message limit, input cut anywhere, and
// the goodbye. Frames are made and read back by wslay (ws_frames.h).
#include "websocket/ws_heart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ws_frames.h"
#include "ws_test_support.h"

namespace hello {
namespace {

using test::client_frame;
using test::close_payload;
using test::server_frames;
using test::WsFrame;

class WsHeartTest : public ::testing::Test {
 protected:
  WsHeartTest() : table_(test::kTestWs), heart_(table_, sink_) {
    switching_ = test::reopen(heart_);
  }
  // Feeds `in` whole; the frames the server sent.
  std::vector<WsFrame> feed(const std::string& in) {
    std::string out;
    fed_ = heart_.feed(in.data(), in.size(), out);
    bool malformed = false;
    std::vector<WsFrame> frames = server_frames(out, &malformed);
    EXPECT_FALSE(malformed);
    for (const WsFrame& f : frames) EXPECT_FALSE(f.masked) << "a server never masks";
    return frames;
  }
  // Feeds `in` one byte at a time.
  std::vector<WsFrame> feed_bytes(const std::string& in) {
    std::string out;
    for (char c : in) {
      fed_ = heart_.feed(&c, 1, out);
      if (fed_.next == Fed::Next::close) break;
    }
    return server_frames(out);
  }
  // The one close frame `frames` ends with, and the connection ends.
  void expect_close(const std::vector<WsFrame>& frames, uint16_t code) {
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back().opcode, test::kWsCloseFrame);
    EXPECT_EQ(frames.back().code(), code) << frames.back().reason();
    EXPECT_EQ(fed_.next, Fed::Next::close);
    EXPECT_FALSE(fed_.clean_end) << "a failure may leave the client's bytes unread";
    EXPECT_FALSE(heart_.live());
  }

  WsTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  WsHeart heart_;
  std::string switching_;
  Fed fed_;
};

TEST_F(WsHeartTest, TheSwitchCarriesTheAcceptOfTheKey) {
  // RFC 6455 section 1.3's example key and accept value.
  EXPECT_NE(switching_.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"),
            std::string::npos)
      << switching_;
  EXPECT_TRUE(heart_.live());
  EXPECT_EQ(stats_.ws_upgraded.get(), 1u);
}

TEST_F(WsHeartTest, TextAndBinaryOfEverySizeComeBackUnchanged) {
  for (size_t n : {0, 1, 125, 126, 127, 999, 1000}) {
    for (uint8_t op : {test::kWsTextFrame, test::kWsBinaryFrame}) {
      std::string payload(n, op == test::kWsTextFrame ? 'a' : '\xfe');
      std::vector<WsFrame> frames = feed(client_frame(op, payload));
      ASSERT_EQ(frames.size(), 1u) << n;
      EXPECT_EQ(frames[0].opcode, op);
      EXPECT_TRUE(frames[0].fin);
      EXPECT_EQ(frames[0].payload, payload) << n;
      EXPECT_EQ(fed_.next, Fed::Next::read);
    }
  }
  EXPECT_EQ(stats_.ws_messages_in.get(), 14u);
}

TEST_F(WsHeartTest, ManyMessagesInOneReadAreAnsweredInOrder) {
  std::string in = client_frame(1, "one") + client_frame(2, "two") + client_frame(1, "three");
  std::vector<WsFrame> frames = feed(in);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].payload, "one");
  EXPECT_EQ(frames[1].payload, "two");
  EXPECT_EQ(frames[2].payload, "three");
}

TEST_F(WsHeartTest, InputCutAtEveryByteGivesTheSameAnswers) {
  std::string in = client_frame(1, std::string(300, 'x')) + client_frame(9, "ping") +
                   client_frame(1, "fr", false) + client_frame(0, "ag", true);
  std::vector<WsFrame> frames = feed_bytes(in);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].payload, std::string(300, 'x'));
  EXPECT_EQ(frames[1].opcode, test::kWsPongFrame);
  EXPECT_EQ(frames[2].payload, "frag");
}

TEST_F(WsHeartTest, AnUnmaskedFrameIsAProtocolError) {
  expect_close(feed(client_frame(1, "hello", true, 0, false)), kWsProtocolError);
}

TEST_F(WsHeartTest, ReservedBitsWithoutAnExtensionAreAProtocolError) {
  for (uint8_t rsv : {1, 2, 4}) {
    test::reopen(heart_);
    expect_close(feed(client_frame(1, "x", true, rsv)), kWsProtocolError);
  }
}

TEST_F(WsHeartTest, ReservedOpcodesAreAProtocolError) {
  for (uint8_t op : {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
    test::reopen(heart_);
    expect_close(feed(client_frame(op, "x")), kWsProtocolError);
  }
  // A reserved control opcode is no close, even with a close's payload.
  for (uint8_t op : {0xB, 0xF}) {
    test::reopen(heart_);
    expect_close(feed(client_frame(op, close_payload(1000))), kWsProtocolError);
  }
}

TEST_F(WsHeartTest, APingIsAnsweredWithItsPayload) {
  std::vector<WsFrame> frames = feed(client_frame(9, "are you there"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, test::kWsPongFrame);
  EXPECT_EQ(frames[0].payload, "are you there");
  EXPECT_TRUE(feed(client_frame(0xA, "unsolicited")).empty()) << "a pong is not answered";
}

TEST_F(WsHeartTest, AControlFrameOver125BytesIsAProtocolError) {
  expect_close(feed(client_frame(9, std::string(126, 'p'))), kWsProtocolError);
}

TEST_F(WsHeartTest, AFragmentedControlFrameIsAProtocolError) {
  expect_close(feed(client_frame(9, "p", false)), kWsProtocolError);
}

TEST_F(WsHeartTest, FragmentsAreEchoedAsOneMessageWithPingsBetweenAnsweredFirst) {
  std::string in = client_frame(1, "Hel", false) + client_frame(9, "p1") +
                   client_frame(0, "", false) + client_frame(0, "lo", false) +
                   client_frame(9, "p2") + client_frame(0, "!", true);
  std::vector<WsFrame> frames = feed(in);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].payload, "p1");
  EXPECT_EQ(frames[1].payload, "p2");
  EXPECT_EQ(frames[2].opcode, test::kWsTextFrame);
  EXPECT_TRUE(frames[2].fin);
  EXPECT_EQ(frames[2].payload, "Hello!");
}

TEST_F(WsHeartTest, AContinuationOfNothingIsAProtocolError) {
  expect_close(feed(client_frame(0, "x")), kWsProtocolError);
}

TEST_F(WsHeartTest, ANewMessageInsideAFragmentedOneIsAProtocolError) {
  expect_close(feed(client_frame(1, "a", false) + client_frame(2, "b")), kWsProtocolError);
}

TEST_F(WsHeartTest, InvalidUtf8InTextIsInvalidData) {
  expect_close(feed(client_frame(1, "\xc3\x28")), kWsInvalidData);
}

TEST_F(WsHeartTest, InvalidUtf8FailsOnTheFragmentItArrivesIn) {
  // No final fragment is sent: the close comes where the bad byte does.
  expect_close(feed(client_frame(1, "ok", false) + client_frame(0, "\xed\xa0\x80", false)),
               kWsInvalidData);
}

TEST_F(WsHeartTest, ACharacterSplitBetweenFragmentsIsValid) {
  // U+1F600 in four bytes, split 1 / 3.
  std::vector<WsFrame> frames =
      feed(client_frame(1, "\xf0", false) + client_frame(0, "\x9f\x98\x80", true));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, "\xf0\x9f\x98\x80");
}

TEST_F(WsHeartTest, TextEndingInsideACharacterIsInvalidData) {
  expect_close(feed(client_frame(1, "a", false) + client_frame(0, "\xe2\x82", true)),
               kWsInvalidData);
}

TEST_F(WsHeartTest, BinaryIsNeverCheckedAsUtf8) {
  std::vector<WsFrame> frames = feed(client_frame(2, "\xc3\x28\xff"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, "\xc3\x28\xff");
}

TEST_F(WsHeartTest, TheClientsCloseIsEchoedWithItsCode) {
  std::vector<WsFrame> frames = feed(client_frame(8, close_payload(1000, "bye")));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, close_payload(1000)) << "the code, as every framework here";
  EXPECT_EQ(fed_.next, Fed::Next::close);
  EXPECT_TRUE(fed_.clean_end);
  EXPECT_EQ(stats_.ws_close_received.get(), 1u);
  EXPECT_EQ(stats_.ws_close_sent_1000.get(), 1u);
}

TEST_F(WsHeartTest, AnEmptyCloseIsEchoedEmpty) {
  std::vector<WsFrame> frames = feed(client_frame(8, ""));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, test::kWsCloseFrame);
  EXPECT_EQ(frames[0].payload, "");
}

TEST_F(WsHeartTest, ACloseOfOneByteIsAProtocolError) {
  expect_close(feed(client_frame(8, "\x03")), kWsProtocolError);
}

TEST_F(WsHeartTest, CloseCodesTheRfcForbidsAreProtocolErrors) {
  for (uint16_t code : {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535}) {
    test::reopen(heart_);
    expect_close(feed(client_frame(8, close_payload(code))), kWsProtocolError);
  }
}

TEST_F(WsHeartTest, CloseCodesTheRfcAllowsAreEchoed) {
  for (uint16_t code : {1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999}) {
    test::reopen(heart_);
    std::vector<WsFrame> frames = feed(client_frame(8, close_payload(code)));
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].code(), code);
  }
}

TEST_F(WsHeartTest, ACloseReasonThatIsNotUtf8IsInvalidData) {
  expect_close(feed(client_frame(8, close_payload(1000, "\xff"))), kWsInvalidData);
}

TEST_F(WsHeartTest, AMessageOverTheLimitIsClosedWith1009AndItsReason) {
  std::vector<WsFrame> frames = feed(client_frame(2, std::string(1001, 'b')));
  expect_close(frames, kWsTooBig);
  EXPECT_EQ(frames.back().reason(), "too big");
}

TEST_F(WsHeartTest, FragmentsAddingUpOverTheLimitAreClosedWith1009) {
  std::string in =
      client_frame(2, std::string(600, 'b'), false) + client_frame(0, std::string(401, 'b'), true);
  expect_close(feed(in), kWsTooBig);
}

TEST_F(WsHeartTest, TheLimitIsJudgedOnTheHeaderBeforeThePayloadComes) {
  std::string frame = client_frame(2, std::string(5000, 'b'));
  expect_close(feed(frame.substr(0, 8)), kWsTooBig);
}

TEST_F(WsHeartTest, ALengthNotInItsMinimalFormIsAProtocolError) {
  // 5 bytes announced in the 16-bit form, masked.
  std::string in("\x81\xfe\x00\x05\x00\x00\x00\x00hello", 13);
  expect_close(feed(in), kWsProtocolError);
}

TEST_F(WsHeartTest, GoodbyeSendsThePersonasCodeAndWaitsForTheClientsClose) {
  std::string out;
  heart_.goodbye(out);
  std::vector<WsFrame> frames = server_frames(out);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].code(), 1001);
  EXPECT_FALSE(heart_.live()) << "a draining worker may close it once quiet";
  // Messages after our close are read, not answered; the client's close ends it.
  EXPECT_TRUE(feed(client_frame(1, "late")).empty());
  EXPECT_EQ(fed_.next, Fed::Next::read);
  EXPECT_TRUE(feed(client_frame(8, close_payload(1001))).empty());
  EXPECT_EQ(fed_.next, Fed::Next::close);
}

TEST_F(WsHeartTest, AMessageBegunAsksToBeWokenForItsStall) {
  feed(client_frame(1, "abc", false));
  EXPECT_EQ(fed_.wake_us, WsHeart::kStallUs);
  feed(client_frame(0, "d", true));
  EXPECT_EQ(fed_.wake_us, Fed::kNever);
}

TEST_F(WsHeartTest, NothingAfterTheCloseIsRead) {
  std::vector<WsFrame> frames =
      feed(client_frame(8, close_payload(1000)) + client_frame(1, "after"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(fed_.clean_end);
  std::string out;
  Fed again = heart_.feed("x", 1, out);
  EXPECT_EQ(again.next, Fed::Next::close);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace hello
