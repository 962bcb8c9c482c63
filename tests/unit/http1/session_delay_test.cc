// Answers that wait: a route's "delay" makes the heart stop after the
// request, say how long, and answer in resume(); what follows is parsed
// only then, so answers leave in request order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http1/session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

std::vector<FileRoute> delay_routes() {
  return {test::text_route("/slow", "slow", 200000), test::echo_route("/echo", 250)};
}

class SessionDelayTest : public ::testing::Test {
 protected:
  SessionDelayTest() : table_(test::kTestPersona, options()), session_(table_, sink_) {}
  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    return o;
  }
  std::string route(std::string_view path, Variant v = Variant::keep_alive_11) {
    return table_.route(table_.find_route(path), v).bytes;
  }

  // Feeds `in` in pieces cut at `cuts`, as a connection would: a waiting
  // answer is resumed (as if its time had come), then the rest is fed.
  // Returns the output, with "|" where an answer waited.
  std::string drive(std::string_view in, std::vector<size_t> cuts = {}) {
    std::string out;
    cuts.push_back(in.size());
    size_t from = 0;
    for (size_t cut : cuts) {
      std::string_view piece = in.substr(from, cut - from);
      from = cut;
      while (true) {
        Fed fed = session_.feed(piece.data(), piece.size(), out);
        if (fed.next != Fed::Next::later) {
          EXPECT_EQ(fed.consumed, piece.size());
          last_ = fed;
          break;
        }
        EXPECT_EQ(session_.state(), Session::State::deferred);
        delays_.push_back(fed.delay_us);
        out += "|";
        Fed resumed = session_.resume(out);
        EXPECT_EQ(resumed.answered, 1u);
        last_ = resumed;
        piece.remove_prefix(fed.consumed);
        if (resumed.next == Fed::Next::close) return out;
        if (piece.empty()) break;
      }
    }
    return out;
  }

  static inline const std::vector<FileRoute> kRoutes = delay_routes();
  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Session session_;
  Fed last_;
  std::vector<uint64_t> delays_;
};

constexpr std::string_view kSlow = "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kRoot = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

TEST_F(SessionDelayTest, StopsAfterTheRequestAndSaysHowLong) {
  std::string in = std::string(kSlow) + std::string(kRoot);
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  EXPECT_EQ(fed.next, Fed::Next::later);
  EXPECT_EQ(fed.delay_us, 200000u);
  EXPECT_EQ(fed.consumed, kSlow.size()) << "nothing after the waiting request is parsed";
  EXPECT_EQ(fed.answered, 0u);
  EXPECT_EQ(out, "");
  EXPECT_EQ(stats_.requests.get(), 0u) << "counted when answered";
  Fed resumed = session_.resume(out);
  EXPECT_EQ(resumed.next, Fed::Next::read);
  EXPECT_EQ(resumed.consumed, 0u);
  EXPECT_EQ(out, route("/slow"));
  EXPECT_EQ(stats_.requests.get(), 1u);
  fed = session_.feed(in.data() + kSlow.size(), kRoot.size(), out);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(out, route("/slow") + route("/"));
}

// The slow request first, then 15 pipelined in the same write: 16 answers
// in order, none before the slow one, however the bytes are cut.
TEST_F(SessionDelayTest, PipelinedAnswersWaitTheirTurnSplitAtEveryByte) {
  std::string in(kSlow);
  for (int i = 0; i < 15; ++i) in += kRoot;
  std::string expected = "|" + route("/slow");
  for (int i = 0; i < 15; ++i) expected += route("/");
  EXPECT_EQ(drive(in), expected);
  test::for_each_split(in, [&](std::string_view, std::string_view, size_t split) {
    session_.reset();
    ASSERT_EQ(drive(in, {split}), expected) << "split at " << split;
  });
  // And a byte at a time.
  session_.reset();
  std::vector<size_t> every;
  for (size_t i = 1; i < in.size(); ++i) every.push_back(i);
  EXPECT_EQ(drive(in, every), expected);
}

TEST_F(SessionDelayTest, WaitingAnswersAmongOthersKeepTheirOrder) {
  std::string body = "{\"a\": [1, 2]}";
  std::string post =
      "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  std::string in = std::string(kRoot) + std::string(kSlow) + post + std::string(kRoot);
  std::string out = drive(in);
  EXPECT_EQ(delays_, (std::vector<uint64_t>{200000, 250}));
  EXPECT_EQ(out.substr(0, route("/").size() + 1), route("/") + "|");
  size_t echo = out.find("|", 1);
  ASSERT_NE(echo, std::string::npos);
  EXPECT_EQ(out.substr(route("/").size() + 1, route("/slow").size()), route("/slow"));
  EXPECT_NE(out.find("\r\n\r\n{\"a\":[1,2]}", echo), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - route("/").size()), route("/"));
  EXPECT_EQ(stats_.requests.get(), 4u);
}

TEST_F(SessionDelayTest, AClosingRequestWaitsThenCloses) {
  std::string in = "GET /slow HTTP/1.0\r\n\r\n";
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  ASSERT_EQ(fed.next, Fed::Next::later);
  Fed resumed = session_.resume(out);
  EXPECT_EQ(resumed.next, Fed::Next::close);
  EXPECT_TRUE(resumed.clean_end) << "the request was the last input";
  EXPECT_EQ(out, route("/slow", Variant::close_10));
  out.clear();
  EXPECT_EQ(session_.feed(kRoot.data(), kRoot.size(), out).next, Fed::Next::close);
  EXPECT_EQ(out, "") << "nothing after the closing answer";
}

TEST_F(SessionDelayTest, HeadWaitsAndErrorsDoNot) {
  std::string out = drive("HEAD /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  std::string slow = route("/slow");
  EXPECT_EQ(out, "|" + slow.substr(0, slow.find("\r\n\r\n") + 4));
  delays_.clear();
  // 404 and 405 on the path of a waiting route are answered at once.
  out = drive("GET /nope HTTP/1.1\r\nHost: a\r\n\r\nPUT /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_TRUE(delays_.empty());
  EXPECT_EQ(out.find('|'), std::string::npos);
}

}  // namespace
}  // namespace hello
