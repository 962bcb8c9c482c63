// HTTP/2 streams never wait for each other (docs/http2.md), over a real
// socket: 100 streams on one connection, the first on a 200 ms route (or
// shaped to wait 200 ms), the other 99 answered at once and the first
// after its 200 ms; a 1 MiB body dripped over a second on one stream
// while the other 99 are answered at once. The bounds here are loose for
// a loaded test machine; docs/http2.md has the figures of a quiet one.
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
// ended, in ms after the send: the first's, then the slowest of the others.
struct Times {
  double first;
  double others;
  size_t first_body;
};
Times hundred_streams(int port, const char* first) {
  H2Connection c(port);
  std::vector<int32_t> ids = {c.get(first)};
  for (int i = 0; i < 99; ++i) ids.push_back(c.get("/"));
  auto t0 = Clock::now();
  EXPECT_TRUE(c.run(ids, 5s));
  double others = 0;
  for (size_t i = 1; i < ids.size(); ++i) {
    EXPECT_EQ(c.streams[ids[i]].body, "Hello!!!") << ids[i];
    others = std::max(others, Ms(c.streams[ids[i]].ended_at - t0).count());
  }
  return {Ms(c.streams[ids[0]].ended_at - t0).count(), others, c.streams[ids[0]].body.size()};
}

TEST(H2Streams, ADelayedRouteHoldsBackItsOwnStreamOnly) {
  SlowRoute routes;
  ServerProcess s("sanic", {"--h2", "--routes", routes.path()});
  Times t = hundred_streams(s.port(), "/slow");
  EXPECT_LT(t.others, 100.0) << "the 99 waited for the slow one";
  EXPECT_GE(t.first, 200.0);
  EXPECT_LT(t.first, 400.0);
  EXPECT_EQ(t.first_body, 5u);
  std::printf("99 streams within %.2f ms; the 200 ms one after %.2f ms\n", t.others, t.first);
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2Streams, AShapedDelayHoldsBackItsOwnStreamOnly) {
  ServerProcess s("sanic", {"--h2", "--shape"});
  Times t = hundred_streams(s.port(), "/?delay=200ms");
  EXPECT_LT(t.others, 100.0) << "the 99 waited for the delayed one";
  EXPECT_GE(t.first, 200.0);
  EXPECT_LT(t.first, 400.0);
  std::printf("99 streams within %.2f ms; the shaped 200 ms one after %.2f ms\n", t.others,
              t.first);
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2Streams, ADrippedMebibyteSlowsNoOtherStream) {
  ServerProcess s("sanic", {"--h2", "--shape"});
  Times t = hundred_streams(s.port(), "/?size=1048576&drip=1s");
  EXPECT_LT(t.others, 100.0) << "the 99 waited for the drip";
  EXPECT_GE(t.first, 990.0);
  EXPECT_LT(t.first, 1500.0);
  EXPECT_EQ(t.first_body, 1048576u);
  std::printf("99 streams within %.2f ms; the dripped MiB after %.2f ms\n", t.others, t.first);
  EXPECT_EQ(s.stop(), 0);
}

// A graceful stop: GOAWAY at once with the last stream, every stream
// already open still answered, then the close.
TEST(H2Streams, AGracefulStopAnswersTheStreamsStillOpen) {
  SlowRoute routes;
  ServerProcess s("sanic", {"--h2", "--routes", routes.path(), "--shutdown-timeout", "5"});
  H2Connection c(s.port());
  int32_t slow = c.get("/slow");
  int32_t quick = c.get("/");
  ASSERT_TRUE(c.run({quick}));
  EXPECT_FALSE(c.streams[slow].ended);
  auto t0 = Clock::now();
  s.signal(SIGTERM);
  EXPECT_TRUE(c.run_until_closed(3s)) << "left open";
  EXPECT_TRUE(c.goaway);
  EXPECT_EQ(c.goaway_last, quick);  // the last stream it saw
  EXPECT_TRUE(c.streams[slow].ended) << "the open stream was not answered";
  EXPECT_EQ(c.streams[slow].body, "slow\n");
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_EQ(s.wait(3s), 0);
}

}  // namespace
}  // namespace hello::test
