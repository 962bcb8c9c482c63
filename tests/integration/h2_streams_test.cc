// HTTP/2 streams never wait for each other (docs/http2.md), over a real
// socket: 100 streams on one connection, the first on a 200 ms route (or
// shaped to wait 200 ms), the other 99 answered at once and the first
// after its 200 ms; a 1 MiB body dripped over a second on one stream
// while the other 99 are answered at once: all 99 end before the first
// (and before a tenth of the drip has come). The upper bounds on time are
// loose for a loaded machine and scaled for slower builds (test_time.h);
// docs/http2.md has the figures of a quiet one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "h2_connection.h"
#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

class SlowRoute {
 public:
  SlowRoute()
      : path_(std::filesystem::temp_directory_path() /
              ("h2-slow-routes-" + std::to_string(getpid()) + ".json")) {
    std::ofstream(path_)
        << R"({"routes": [{"method": "GET", "path": "/slow", "body": "slow\n", "delay": "200ms"}]})";
  }
  ~SlowRoute() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Sends `first` and 99 "/" on one connection at once; returns when each
// ended, in ms after the send: the first's, then the slowest of the others;
// and in what order: whether every one of the others ended in a read of the
// socket before the one that ended the first (sent apart, and before), and
// how much of the first's body had come by the read that ended the last.
struct Times {
  double first;
  double others;
  size_t first_body;
  bool others_ended_first;
  size_t first_body_by_others;
};
Times hundred_streams(int port, const char* first) {
  H2Connection c(port);
  std::vector<int32_t> ids = {c.get(first)};
  for (int i = 0; i < 99; ++i) ids.push_back(c.get("/"));
  auto t0 = Clock::now();
  EXPECT_TRUE(c.run(ids, scaled(5s)));
  double others = 0;
  uint64_t others_read = 0;
  for (size_t i = 1; i < ids.size(); ++i) {
    EXPECT_EQ(c.streams[ids[i]].body, "Hello!!!") << ids[i];
    others = std::max(others, Ms(c.streams[ids[i]].ended_at - t0).count());
    others_read = std::max(others_read, c.streams[ids[i]].ended_read);
  }
  const Stream& s = c.streams[ids[0]];
  size_t by_others = 0;
  for (const Piece& p : s.pieces)
    if (p.read <= others_read) by_others = p.body;
  return {Ms(s.ended_at - t0).count(), others, s.body.size(), others_read < s.ended_read,
          by_others};
}

TEST(H2Streams, ADelayedRouteHoldsBackItsOwnStreamOnly) {
  SlowRoute routes;
  ServerProcess s("sanic", {"--h2", "--routes", routes.path()});
  Times t = hundred_streams(s.port(), "/slow");
  EXPECT_TRUE(t.others_ended_first) << "the 99 waited for the slow one";
  EXPECT_LT(t.others, scaled_ms(100.0));
  EXPECT_GE(t.first, 200.0);
  EXPECT_LT(t.first, 200.0 + scaled_ms(200.0));
  EXPECT_EQ(t.first_body, 5u);
  std::printf("99 streams within %.2f ms; the 200 ms one after %.2f ms\n", t.others, t.first);
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2Streams, AShapedDelayHoldsBackItsOwnStreamOnly) {
  ServerProcess s("sanic", {"--h2", "--shape"});
  Times t = hundred_streams(s.port(), "/?delay=200ms");
  EXPECT_TRUE(t.others_ended_first) << "the 99 waited for the delayed one";
  EXPECT_LT(t.others, scaled_ms(100.0));
  EXPECT_GE(t.first, 200.0);
  EXPECT_LT(t.first, 200.0 + scaled_ms(200.0));
  std::printf("99 streams within %.2f ms; the shaped 200 ms one after %.2f ms\n", t.others,
              t.first);
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2Streams, ADrippedMebibyteSlowsNoOtherStream) {
  ServerProcess s("sanic", {"--h2", "--shape"});
  Times t = hundred_streams(s.port(), "/?size=1048576&drip=1s");
  EXPECT_TRUE(t.others_ended_first) << "the 99 waited for the drip";
  // The drip's 100 pieces are due 10 ms apart: by the last of the 99, no
  // more than a tenth of them had come.
  EXPECT_LE(t.first_body_by_others, 1048576u / 10) << "the 99 waited for the drip";
  EXPECT_LT(t.others, scaled_ms(100.0));
  EXPECT_GE(t.first, 990.0);
  EXPECT_LT(t.first, 1000.0 + scaled_ms(500.0));
  EXPECT_EQ(t.first_body, 1048576u);
  std::printf(
      "99 streams within %.2f ms (%zu bytes of the drip by then); the dripped MiB after "
      "%.2f ms\n",
      t.others, t.first_body_by_others, t.first);
  EXPECT_EQ(s.stop(), 0);
}

// A graceful stop: GOAWAY at once with the last stream, every stream
// already open still answered, then the close.
TEST(H2Streams, AGracefulStopAnswersTheStreamsStillOpen) {
  SlowRoute routes;
  // A shutdown timeout far longer than any wait below: the close comes
  // from the last answer, not from the timeout.
  ServerProcess s("sanic", {"--h2", "--routes", routes.path(), "--shutdown-timeout", "30"});
  H2Connection c(s.port());
  int32_t slow = c.get("/slow");
  int32_t quick = c.get("/");
  ASSERT_TRUE(c.run({quick}));
  EXPECT_FALSE(c.streams[slow].ended);
  auto t0 = Clock::now();
  s.signal(SIGTERM);
  EXPECT_TRUE(c.run_until_closed(scaled(3s))) << "left open";
  EXPECT_TRUE(c.goaway);
  EXPECT_EQ(c.goaway_last, quick);  // the last stream it saw
  EXPECT_TRUE(c.streams[slow].ended) << "the open stream was not answered";
  EXPECT_EQ(c.streams[slow].body, "slow\n");
  EXPECT_LT(Clock::now() - t0, scaled(2s));
  EXPECT_EQ(s.wait(scaled(3s)), 0);
}

}  // namespace
}  // namespace hello::test
