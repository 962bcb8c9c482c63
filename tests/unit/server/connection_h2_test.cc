// Connection over a fake transport (connection_fixture.h) speaking HTTP/2:
// chosen at the first read by its preface (--h2), or by an h2c Upgrade
// that hands the HTTP/1 request over as stream 1; the session kept between
// requests, its deadlines and its wake-ups.
#include <gtest/gtest.h>

#include <string>

#include "connection_fixture.h"
#include "h2_raw.h"

namespace hello {
namespace {

using test::ConnectionTest;
namespace h2raw = test::h2raw;

constexpr std::string_view kUpgrade =
    "GET /json HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\n"
    "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n\r\n";

std::string start() {
  return std::string(h2raw::kPreface) + h2raw::settings() + h2raw::settings_ack();
}

// The frames after an HTTP/1.1 101 head, which must come first.
std::vector<h2raw::Frame> after_101(const std::string& received) {
  EXPECT_EQ(received.rfind("HTTP/1.1 101 ", 0), 0u) << received;
  size_t end = received.find("\r\n\r\n");
  if (end == std::string::npos) return {};
  return h2raw::frames(std::string_view(received).substr(end + 4));
}

class ConnectionH2Test : public ConnectionTest {
 protected:
  void SetUp() override {
    context_.use_h2(true);
    ConnectionTest::SetUp();
  }
  // The frames the client received since the last call.
  std::vector<h2raw::Frame> frames() {
    std::string_view rest = std::string_view(fake_.received).substr(seen_);
    seen_ = fake_.received.size();
    return h2raw::frames(rest);
  }
  size_t seen_ = 0;
};

TEST_F(ConnectionH2Test, RequestsAreAnsweredAndTheSessionKeptBetweenThem) {
  fake_.send(start() + h2raw::get(1));
  auto fs = frames();
  EXPECT_EQ(h2raw::count(fs, h2raw::kSettings), 2);  // the server's, and its ACK
  EXPECT_EQ(h2raw::count(fs, h2raw::kSettings, h2raw::kAck), 1);
  EXPECT_TRUE(h2raw::answered(fs, 1));
  EXPECT_EQ(h2raw::count(fs, h2raw::kData, h2raw::kEndStream), 1);
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  // The next read goes on in the same session (a new one would want a preface).
  fake_.send(h2raw::get(3, "/json"));
  fs = frames();
  EXPECT_TRUE(h2raw::answered(fs, 3));
  EXPECT_FALSE(h2raw::goaway_code(fs).has_value());
  EXPECT_EQ(stats_.requests.get(), 2u);
}

TEST_F(ConnectionH2Test, BetweenRequestsTheKeepAliveDeadlineRunsAndEndsWithGoaway) {
  fake_.send(start() + h2raw::get(1));
  frames();
  uint64_t now = context_.now_ms();
  const Deadlines d;
  connection_.check_deadlines(now + d.header_ms + 1);  // the first request's deadline has gone
  EXPECT_TRUE(frames().empty());
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  connection_.check_deadlines(now + d.keep_alive_ms + 1);
  EXPECT_EQ(h2raw::goaway_code(frames()), h2raw::kNoError);
  EXPECT_TRUE(fake_.fin);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  fake_.eof();
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_keepalive_timeout.get(), 1u);
}

TEST_F(ConnectionH2Test, AKeepAliveGoawayTheTransportRefusesClosesAsAnError) {
  // A client gone (a reset not yet read): the GOAWAY's write fails and
  // closes the connection, which then must not be ended a second time.
  fake_.send(start() + h2raw::get(1));
  frames();
  fake_.fail = UV_ECONNRESET;
  connection_.check_deadlines(context_.now_ms() + Deadlines{}.keep_alive_ms + 1);
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_keepalive_timeout.get() + stats_.closed_error.get(), 1u);
}

TEST_F(ConnectionH2Test, ARequestInProgressIsEndedByTheSessionsOwnDeadline) {
  h2_.header_timeout_ns = 30'000'000;  // 30 ms
  fake_.send(start() + h2raw::open_post(1));
  frames();
  // A stream is live: the connection is not idle, whatever the sweep says.
  connection_.check_deadlines(context_.now_ms() + Deadlines{}.keep_alive_ms + 1);
  EXPECT_TRUE(frames().empty());
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  // The session's wake-up comes on the connection's timer.
  run_until([&] { return connection_.phase() != Connection::Phase::reading; }, 2000);
  auto fs = frames();
  EXPECT_TRUE(h2raw::goaway_code(fs).has_value());
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  EXPECT_TRUE(fake_.fin);
  fake_.eof();
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_header_timeout.get(), 1u);
}

TEST_F(ConnectionH2Test, AnUpgradeWithThePrefaceBehindItIsAnsweredOnStream1) {
  h2_.h2c_upgrade = true;
  fake_.send(std::string(kUpgrade) + start());
  auto fs = after_101(fake_.received);
  seen_ = fake_.received.size();
  EXPECT_TRUE(h2raw::answered(fs, 1));
  EXPECT_EQ(h2raw::count(fs, h2raw::kData, h2raw::kEndStream), 1);
  EXPECT_EQ(h2raw::count(fs, h2raw::kSettings, h2raw::kAck), 1) << "the preface was fed";
  EXPECT_FALSE(h2raw::goaway_code(fs).has_value());
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  fake_.send(h2raw::get(3));
  fs = frames();
  EXPECT_TRUE(h2raw::answered(fs, 3));
  EXPECT_EQ(stats_.requests.get(), 2u);
}

TEST_F(ConnectionH2Test, AnUpgradeWhosePrefaceComesLaterWaitsForIt) {
  h2_.h2c_upgrade = true;
  fake_.send(kUpgrade);
  auto fs = after_101(fake_.received);
  seen_ = fake_.received.size();
  EXPECT_EQ(h2raw::count(fs, h2raw::kSettings, h2raw::kAck), 0);
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  fake_.send(start() + h2raw::get(3));
  fs = frames();
  EXPECT_EQ(h2raw::count(fs, h2raw::kSettings, h2raw::kAck), 1);
  EXPECT_TRUE(h2raw::answered(fs, 3));
  EXPECT_FALSE(h2raw::goaway_code(fs).has_value());
}

TEST_F(ConnectionH2Test, AnUpgradeFollowedByNoPrefaceEndsTheConnection) {
  h2_.h2c_upgrade = true;
  fake_.send(std::string(kUpgrade) + "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  auto fs = after_101(fake_.received);
  EXPECT_EQ(h2raw::goaway_code(fs), h2raw::kProtocolError);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  EXPECT_TRUE(fake_.fin);
}

}  // namespace
}  // namespace hello
