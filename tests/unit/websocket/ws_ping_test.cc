// The WebSocket heart's own time: a persona's pings (Sanic's keepalive)
// and a stalled message, on a clock of the test's own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "websocket/ws_heart.h"
#include "ws_frames.h"

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
  ASSERT_EQ(resume_at(20).size(), 1u);
  std::string out;
  std::string other = client_frame(0xA, "nope");
  heart_.feed(other.data(), other.size(), out);  // a pong, but not to our ping
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
