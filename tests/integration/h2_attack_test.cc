// The HTTP/2 attacks over real sockets (docs/http2.md#limits-and-floods):
// a rapid-reset client for about 2 seconds while another connection is
// served, a PING flood, a bad preface, and --h2-max-streams on the wire
// and on the command line. The unit tests (tests/unit/http2/h2_limits_test.cc)
// cover each limit frame by frame; these show the connection ends, the
// counters reach the summary and --stats-json, and nothing is left open.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "h2_raw.h"
#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

using namespace h2raw;
using Clock = std::chrono::steady_clock;

// Reads what arrives within `wait` (all of it if the server closes).
std::string drain(Client& c, std::chrono::milliseconds wait, bool* closed = nullptr) {
  std::string in;
  auto deadline = Clock::now() + wait;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p = {c.fd(), POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1) break;
    ssize_t n = recv(c.fd(), buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      break;
    }
    in.append(buf, static_cast<size_t>(n));
  }
  return in;
}

std::string client_preface() {
  return std::string(kPreface) + settings() + settings_ack();
}

// A JSON number after "key": in `json`, or -1.
long json_number(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\": ");
  return at == std::string::npos ? -1 : std::stol(json.substr(at + key.size() + 4));
}

TEST(H2Attack, RapidResetEndsEachConnectionAndOthersAreStillServed) {
  std::string stats = temp_path("rapid-reset.json");
  ServerProcess s("sanic", {"--h2", "--stats-json", stats});
  auto end = Clock::now() + 2s;
  int connections = 0, goaways = 0;
  long streams = 0;
  std::chrono::nanoseconds slowest{0};
  while (Clock::now() < end) {
    Client attacker(s.port());
    ++connections;
    // Streams opened and reset in batches of 100, as fast as we can write.
    std::string batch;
    bool closed = false;
    std::string heard;
    uint32_t id = 1;
    // Every connection opened is driven to its flood (bounded by the stream
    // ids), whatever the clock says: one cut off at `end` would not be one.
    while (!closed) {
      batch.clear();
      for (int i = 0; i < 100; ++i, id += 2) batch += get(id) + rst_stream(id, 8);
      if (id == 201) batch = client_preface() + batch;
      if (!attacker.send(batch)) break;
      streams += 100;
      heard += drain(attacker, 0ms, &closed);
      // Past its GOAWAY the server ignores new streams; stop writing, or
      // the close that follows resets the connection under the GOAWAY.
      if (goaway_code(frames(heard)).has_value() || id > 4000) break;
    }
    heard += drain(attacker, 500ms, &closed);
    auto code = goaway_code(frames(heard));
    if (code.has_value()) {
      EXPECT_EQ(*code, 2u) << "INTERNAL_ERROR, nghttp2's";
      ++goaways;
    }
    EXPECT_TRUE(closed) << "the server closes a rapid-reset connection after its GOAWAY";
    // Meanwhile another client is answered promptly.
    Client other(s.port());
    auto t0 = Clock::now();
    ASSERT_TRUE(other.send(client_preface() + get(1)));
    std::string answer;
    while (!answered(frames(answer), 1) && Clock::now() - t0 < scaled(2s))
      answer += drain(other, 50ms);
    ASSERT_TRUE(answered(frames(answer), 1));
    slowest = std::max(slowest, Clock::now() - t0);
  }
  EXPECT_LT(slowest, scaled(500ms));
  // A GOAWAY can be lost to the reset of a close with our streams unread;
  // the server's count below is the one that matters.
  EXPECT_GE(goaways, connections / 2);
  ASSERT_EQ(s.stop(), 0);
  std::string summary = s.rest_of_stderr();
  EXPECT_NE(summary.find("rapid-reset floods"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("HTTP/2 streams open"), std::string::npos) << summary;
  std::string json = read_file(stats);
  EXPECT_EQ(json_number(json, "flood_rapid_reset"), connections) << json;
  EXPECT_EQ(json_number(json, "streams_open"), 0) << json;
  EXPECT_GE(json_number(json, "rst_stream_received"), 500L * connections) << json;
  RecordProperty("streams", std::to_string(streams));
  RecordProperty("connections", std::to_string(connections));
}

TEST(H2Attack, APingFloodGetsGoawayEnhanceYourCalm) {
  ServerProcess s("sanic", {"--h2"});
  Client c(s.port());
  std::string in = client_preface();
  for (int i = 0; i < 300; ++i) in += ping();
  ASSERT_TRUE(c.send(in));
  bool closed = false;
  std::string heard = drain(c, 2s, &closed);
  EXPECT_EQ(goaway_code(frames(heard)), 11u);
  EXPECT_TRUE(closed);
  ASSERT_EQ(s.stop(), 0);
  EXPECT_NE(s.rest_of_stderr().find("1 PING floods"), std::string::npos);
}

TEST(H2Attack, InClearABadPrefaceIsAnHttp1Request) {
  // With --h2 in clear, a connection is HTTP/2 only if its first bytes are
  // the preface's (docs/http2.md): "PRI * HTTP/2.0\r\n\r\nXX" is an
  // HTTP/1 request, answered 505 and closed (h2spec's http2/3.5/2 expects
  // a close, and reads such an answer as a frame); the session's own GOAWAY
  // PROTOCOL_ERROR for a bad preface (ALPN h2) is in the unit tests.
  ServerProcess s("sanic", {"--h2"});
  Client c(s.port());
  ASSERT_TRUE(c.send("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"));
  bool closed = false;
  std::string heard = drain(c, 2s, &closed);
  EXPECT_EQ(heard.rfind("HTTP/1.1 505", 0), 0u) << heard;  // HTTP/2.0 in HTTP/1
  EXPECT_TRUE(closed);
  ASSERT_EQ(s.stop(), 0);
}

// A peer that never opens its window: its answer waits in nghttp2 (not in
// the socket), and the session's own send timeout (H2Setup::send_timeout_ns)
// ends the connection, not the keep-alive timeout.
TEST(H2Attack, APeerThatNeverOpensItsWindowIsClosedAtTheSendTimeout) {
  ServerProcess s("sanic", {"--h2", "--send-timeout", "1", "--keepalive-timeout", "60"});
  Client c(s.port());
  auto t0 = Clock::now();
  ASSERT_TRUE(c.send(std::string(kPreface) + settings({{0x4, 0}}) + settings_ack() + get(1)));
  bool closed = false;
  std::string heard = drain(c, scaled(4s), &closed);
  EXPECT_EQ(count(frames(heard), kData), 0) << "a window of 0 lets no DATA through";
  EXPECT_TRUE(closed) << "still open long after a send timeout of 1 s";
  EXPECT_LT(Clock::now() - t0, scaled(3s)) << "closed at the keep-alive timeout (60 s)";
  ASSERT_EQ(s.stop(), 0);
}

TEST(H2Attack, MaxStreamsIsAdvertised) {
  ServerProcess s("sanic", {"--h2", "--h2-max-streams", "7"});
  Client c(s.port());
  ASSERT_TRUE(c.send(client_preface()));
  std::string heard = drain(c, 300ms);
  auto fs = frames(heard);
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].type, kSettings);
  EXPECT_NE(fs[0].payload.find(std::string("\x00\x03\x00\x00\x00\x07", 6)), std::string::npos);
  EXPECT_NE(fs[0].payload.find(std::string("\x00\x06\x00\x00\x40\x00", 6)), std::string::npos)
      << "MAX_HEADER_LIST_SIZE is --max-header-bytes, 16384";
  ASSERT_EQ(s.stop(), 0);
}

TEST(H2Attack, BadMaxStreamsValuesAreOneLineAndExit2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--h2", "--h2-max-streams", "0"},
                                             {"--h2", "--h2-max-streams", "abc"},
                                             {"--h2", "--h2-max-streams", "4294967296"},
                                             {"--h2-max-streams", "10"}}) {
    RunResult r = run_binary(binary_path("sanic"), args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_NE(r.err.find("--h2-max-streams"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace hello::test
