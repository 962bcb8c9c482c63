// The WebSocket heart's own time: a persona's pings (Sanic's keepalive)
// and a stalled message, on a clock of the test's own.
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

// Sanic's keepalive (WebSocketPersona::ping_interval_s), on a clock of the
// test's own.
uint64_t fake_now = 0;
uint64_t fake_clock() {
  return fake_now;
}

constexpr WebSocketPersona kPinging{
    .path = "/feed",
    .switching =
        "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: {accept}\r\n"
        "{extensions}\r\n",
    .ping_interval_s = 20,
    .ping_timeout_s = 20,
};

class WsPingTest : public ::testing::Test {
 protected:
  WsPingTest() : table_(kPinging), heart_(table_, sink_) {
    fake_now = 1'000'000'000;
    heart_.set_clock(fake_clock);
    Upgrade u;
    u.ws_key = "dGhlIHNhbXBsZSBub25jZQ==";
    std::string out;
    fed_ = heart_.upgraded(u, out);
  }
  std::vector<WsFrame> resume_at(uint64_t s) {
    fake_now = 1'000'000'000 + s * 1'000'000;
    std::string out;
    fed_ = heart_.resume(out);
    return server_frames(out);
  }

  WsTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  WsHeart heart_;
  Fed fed_;
};

TEST_F(WsPingTest, APingGoesOutEveryIntervalAndItsPongKeepsTheConnection) {
  EXPECT_EQ(fed_.wake_us, 20'000'000u) << "woken for the first ping";
  EXPECT_TRUE(resume_at(10).empty());
  std::vector<WsFrame> frames = resume_at(20);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, test::kWsPingFrame);
  EXPECT_EQ(fed_.wake_us, 20'000'000u) << "woken when the pong is due";
  std::string out;
  std::string pong = client_frame(0xA, frames[0].payload);
  fake_now += 1'000'000;
  heart_.feed(pong.data(), pong.size(), out);
  EXPECT_TRUE(resume_at(39).empty()) << "the pong came: no close";
  EXPECT_EQ(fed_.next, Fed::Next::read);
  frames = resume_at(40);
  ASSERT_EQ(frames.size(), 1u) << "the next ping";
  EXPECT_EQ(frames[0].opcode, test::kWsPingFrame);
}

TEST_F(WsPingTest, NoPongWithinTheTimeoutIs1011) {
  std::vector<WsFrame> ping = resume_at(20);
  ASSERT_EQ(ping.size(), 1u);
  std::string out;
  // Pongs, but not to our ping: another payload, and ours with a byte more.
  std::string other = client_frame(0xA, "nope") + client_frame(0xA, ping[0].payload + "x");
  heart_.feed(other.data(), other.size(), out);
  std::vector<WsFrame> frames = resume_at(40);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].code(), kWsInternalError);
  EXPECT_EQ(fed_.next, Fed::Next::close);
}

TEST_F(WsPingTest, AStalledMessageEndsWith1008) {
  std::string out;
  std::string half = client_frame(1, "abc", false);
  fed_ = heart_.feed(half.data(), half.size(), out);
  EXPECT_EQ(fed_.wake_us, 20'000'000u) << "the ping comes before the stall's end";
  ASSERT_EQ(resume_at(20).size(), 1u)
      << "the ping; its pong is due at 40 s, the stall ends at 30 s";
  std::vector<WsFrame> frames = resume_at(30);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].code(), kWsPolicy);
}

}  // namespace
}  // namespace hello

namespace hello {
namespace {

// --shape on the upgrade (docs/websocket.md): `delay` holds every echo,
// in order; `size` answers each message with that many pattern bytes.
constexpr WebSocketPersona kQuiet{
    .path = "/ws",
    .switching =
        "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: {accept}\r\n"
        "{extensions}\r\n",
};

class WsShapeTest : public ::testing::Test {
 protected:
  WsShapeTest() : table_(kQuiet), heart_(table_, sink_, &dice_) {
    fake_now = 5'000'000;
    heart_.set_clock(fake_clock);
  }
  void upgrade(std::string text) {
    text_ = std::move(text);
    ShapeError error;
    ASSERT_TRUE(parse_shape(text_.data(), text_.size(), {}, shape_, error)) << error.view();
    test::reopen(heart_, false, &shape_);
  }
  std::vector<WsFrame> feed(const std::string& in) {
    std::string out;
    fed_ = heart_.feed(in.data(), in.size(), out);
    return server_frames(out);
  }
  std::vector<WsFrame> resume_after(uint64_t us) {
    fake_now += us;
    std::string out;
    fed_ = heart_.resume(out);
    return server_frames(out);
  }

  WsTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Dice dice_{1};
  WsHeart heart_;
  std::string text_;
  Shape shape_;
  Fed fed_;
};

TEST_F(WsShapeTest, ADelayHoldsEveryEchoInOrder) {
  upgrade("delay=50ms");
  EXPECT_TRUE(feed(client_frame(1, "one") + client_frame(1, "two")).empty());
  EXPECT_EQ(fed_.wake_us, 50'000u);
  EXPECT_TRUE(resume_after(49'000).empty());
  std::vector<WsFrame> frames = resume_after(1'000);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, "one");
  EXPECT_EQ(frames[1].payload, "two");
  EXPECT_EQ(fed_.wake_us, Fed::kNever) << "nothing left to wait for";
}

TEST_F(WsShapeTest, APingIsAnsweredAtOnceAndACloseAfterTheEchoesOwed) {
  upgrade("delay=1s");
  std::vector<WsFrame> frames = feed(client_frame(1, "late") + client_frame(9, "now"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, test::kWsPongFrame);
  frames = feed(client_frame(8, test::close_payload(1000)));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, "late");
  EXPECT_EQ(frames[1].code(), 1000);
}

TEST_F(WsShapeTest, SizeAnswersWithThatManyPatternBytes) {
  upgrade("size=70000");
  std::vector<WsFrame> frames = feed(client_frame(1, "x"));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, test::kWsTextFrame);
  ASSERT_EQ(frames[0].payload.size(), 70000u);
  EXPECT_EQ(frames[0].payload.substr(0, 10), "0123456789");
  EXPECT_EQ(stats_.ws_bytes_out.get(), 70000u);
  EXPECT_EQ(stats_.ws_bytes_in.get(), 1u);
}

}  // namespace
}  // namespace hello

namespace hello {
namespace {

// After our close (a graceful stop) no ping is due, so nothing wakes the
// heart for one: a draining connection never spins on its timer.
TEST_F(WsPingTest, AfterGoodbyeNoPingIsDueAndNothingWakes) {
  std::string out;
  heart_.goodbye(out);
  EXPECT_TRUE(resume_at(21).empty());
  EXPECT_EQ(fed_.wake_us, Fed::kNever);
  EXPECT_EQ(fed_.next, Fed::Next::read) << "waiting for the client's close";
}

}  // namespace
}  // namespace hello
