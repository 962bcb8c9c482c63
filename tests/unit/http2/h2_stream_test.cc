// HTTP/2 streams answered each on its own, on a clock the test moves: a
// route's delay holds back its own stream only, a JSON echo, a body over
// the limit (413, then RST_STREAM), shaping per stream (status, header,
// size across flow control, drip, reset as RST_STREAM, close as GOAWAY
// once the stream is done), and the session's own deadlines.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <string>
#include <vector>

#include "h2_client.h"
#include "http2/h2_session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

uint64_t fake_now = 1'000'000'000;
uint64_t fake_clock() {
  return fake_now;
}

constexpr uint64_t kMs = 1000000;

const std::vector<FileRoute> kRoutes = {test::text_route("/slow", "slow", 200000),
                                        test::echo_route("/echo", 0)};

class H2StreamTest : public ::testing::Test {
 protected:
  explicit H2StreamTest(bool shape = true)
      : table_(test::kTestPersona, options(shape)),
        answers_(table_),
        session_(table_, setup(), sink_) {}

  static TableOptions options(bool shape) {
    TableOptions o;
    o.routes = &kRoutes;
    o.shape = shape;
    return o;
  }
  H2Setup setup() {
    H2Setup s;
    s.answers = &answers_;
    s.dice = &dice_;
    s.clock = fake_clock;
    s.max_body_bytes = 1000;
    return s;
  }

  // The client's queued bytes in, the session's answer back to the client.
  Fed exchange() {
    std::string in = client_.output();
    std::string out;
    Fed fed = session_.feed(in.data(), in.size(), out);
    EXPECT_TRUE(client_.input(out));
    return fed;
  }
  // Moves the clock on by `ns` and resumes the session.
  Fed later(uint64_t ns) {
    fake_now += ns;
    std::string out;
    Fed fed = session_.resume(out);
    EXPECT_TRUE(client_.input(out));
    return fed;
  }
  ResponseTable table_;
  H2Answers answers_;
  Dice dice_{7};
  WorkerStats stats_;
  Accounting sink_{stats_};
  H2Session session_;
  test::H2Client client_;
};

TEST_F(H2StreamTest, ADelayedStreamHoldsBackNoOther) {
  int32_t slow = client_.request("GET", "/slow");
  std::vector<int32_t> quick;
  for (int i = 0; i < 9; ++i) quick.push_back(client_.request("GET", "/"));
  Fed fed = exchange();
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(fed.answered, 9u);
  EXPECT_TRUE(fed.partial) << "the slow stream is live";
  EXPECT_EQ(fed.wake_us, 200000u);
  for (int32_t id : quick) EXPECT_TRUE(client_.streams[id].ended) << id;
  EXPECT_FALSE(client_.streams[slow].ended);
  fed = later(199 * kMs);
  EXPECT_EQ(fed.answered, 0u);
  EXPECT_EQ(fed.wake_us, 1000u);
  fed = later(1 * kMs);
  EXPECT_EQ(fed.answered, 1u);
  EXPECT_TRUE(client_.streams[slow].ended);
  EXPECT_EQ(client_.streams[slow].body, "slow");
  EXPECT_EQ(client_.ended.back(), slow);
  EXPECT_FALSE(fed.partial);
  EXPECT_EQ(fed.wake_us, Fed::kNever);
  EXPECT_EQ(session_.live(), 0u);
}

TEST_F(H2StreamTest, TheEchoSendsTheBodyBackMinified) {
  int32_t ok = client_.request("POST", "/echo", {{"content-type", "application/json"}},
                               "{ \"a\" : [1, 2] }");
  int32_t bad = client_.request("POST", "/echo", {}, "not json");
  exchange();
  EXPECT_EQ(client_.streams[ok].body, "{\"a\":[1,2]}");
  EXPECT_EQ(client_.field(ok, ":status"), "200");
  EXPECT_EQ(client_.field(ok, "content-length"), "11");
  EXPECT_EQ(client_.field(bad, ":status"), "400");
  EXPECT_TRUE(client_.streams[bad].ended);
}

TEST_F(H2StreamTest, ABodyOverTheLimitGets413ThenRstStream) {
  int32_t id = client_.request("POST", "/echo", {}, std::string(1500, 'x'));
  exchange();
  EXPECT_EQ(client_.field(id, ":status"), "413");
  EXPECT_TRUE(client_.streams[id].ended);
  EXPECT_EQ(client_.streams[id].reset, static_cast<uint32_t>(NGHTTP2_NO_ERROR));
  EXPECT_EQ(session_.live(), 0u);
}

TEST_F(H2StreamTest, AShapeSetsStatusAndHeadersOfItsStreamOnly) {
  int32_t shaped = client_.request("GET", "/?status=503&header=X-Env:staging");
  int32_t plain = client_.request("GET", "/");
  exchange();
  EXPECT_EQ(client_.field(shaped, ":status"), "503");
  EXPECT_EQ(client_.field(shaped, "x-env"), "staging");
  EXPECT_EQ(client_.field(shaped, "x-hello-shape-decision"), "status=503");
  EXPECT_EQ(client_.streams[shaped].body, "Hello!!!");
  EXPECT_EQ(client_.field(plain, ":status"), "200");
  EXPECT_EQ(client_.field(plain, "x-env"), "");
  EXPECT_EQ(stats_.shaped.get(), 1u);
}

TEST_F(H2StreamTest, TheShapeHeaderFieldShapesToo) {
  int32_t id = client_.request("GET", "/", {{"x-hello-shape", "status=201"}});
  exchange();
  EXPECT_EQ(client_.field(id, ":status"), "201");
}

TEST_F(H2StreamTest, ABadShapeGets400WithTheReason) {
  int32_t id = client_.request("GET", "/?drip=5");
  exchange();
  EXPECT_EQ(client_.field(id, ":status"), "400");
  EXPECT_EQ(client_.streams[id].body, "drip=5: no unit (us, ms or s)\n");
}

// A stream's shaping text (its query, and its x-hello-shape fields joined
// by '&') is read up to 4096 bytes; past them the stream gets 400 with the
// reason, as over HTTP/1, and the others are answered.
TEST_F(H2StreamTest, ShapingTextOver4096BytesGets400WithTheReason) {
  const std::string too_long = "shaping parameters: over 4096 bytes\n";
  // "x=" and the a's: a query of 4096 bytes, then 4097; "x" is not ours.
  std::string at_limit = "/?x=" + std::string(4094, 'a');
  std::string over = "/?x=" + std::string(4095, 'a');
  // A query of 2047 bytes, '&', then a field of 2048 (4096) or 2049.
  std::string half = "/?x=" + std::string(2045, 'a');
  int32_t ok = client_.request("GET", at_limit.c_str());
  int32_t bad = client_.request("GET", over.c_str());
  int32_t joined_ok =
      client_.request("GET", half.c_str(), {{"x-hello-shape", "y=" + std::string(2046, 'b')}});
  int32_t joined_bad =
      client_.request("GET", half.c_str(), {{"x-hello-shape", "y=" + std::string(2047, 'b')}});
  int32_t plain = client_.request("GET", "/");
  exchange();
  for (int32_t id : {ok, joined_ok, plain}) {
    EXPECT_EQ(client_.field(id, ":status"), "200") << id;
    EXPECT_EQ(client_.streams[id].body, "Hello!!!") << id;
  }
  for (int32_t id : {bad, joined_bad}) {
    EXPECT_EQ(client_.field(id, ":status"), "400") << id;
    EXPECT_EQ(client_.streams[id].body, too_long) << id;
    EXPECT_TRUE(client_.streams[id].ended) << id;
  }
  EXPECT_EQ(session_.live(), 0u);
}

TEST_F(H2StreamTest, ASizedBodyCrossesTheFlowControlWindow) {
  // 200,000 bytes: three times the initial window of 65,535.
  int32_t id = client_.request("GET", "/?size=200000");
  exchange();
  for (int i = 0; i < 20 && !client_.streams[id].ended; ++i) exchange();
  EXPECT_TRUE(client_.streams[id].ended);
  EXPECT_EQ(client_.streams[id].body.size(), 200000u);
  EXPECT_EQ(client_.field(id, "content-length"), "200000");
}

TEST_F(H2StreamTest, ADripSendsItsPiecesOnTime) {
  int32_t drip = client_.request("GET", "/?size=1000&drip=100ms");
  int32_t plain = client_.request("GET", "/");
  Fed fed = exchange();
  EXPECT_TRUE(client_.streams[plain].ended);
  EXPECT_EQ(client_.field(drip, ":status"), "200");
  EXPECT_EQ(client_.streams[drip].body.size(), 0u);
  EXPECT_EQ(fed.wake_us, 10000u) << "10 pieces, the first after 10 ms";
  fed = later(10 * kMs);
  EXPECT_EQ(client_.streams[drip].body.size(), 100u);
  fed = later(45 * kMs);
  EXPECT_EQ(client_.streams[drip].body.size(), 500u);
  for (int i = 0; i < 10 && !client_.streams[drip].ended; ++i) later(10 * kMs);
  EXPECT_TRUE(client_.streams[drip].ended);
  EXPECT_EQ(client_.streams[drip].body.size(), 1000u);
}

TEST_F(H2StreamTest, AResetIsRstStreamOnThatStreamAlone) {
  int32_t reset = client_.request("GET", "/?reset=100");
  int32_t plain = client_.request("GET", "/");
  Fed fed = exchange();
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(client_.streams[reset].reset, static_cast<uint32_t>(NGHTTP2_INTERNAL_ERROR));
  EXPECT_TRUE(client_.streams[plain].ended);
  EXPECT_EQ(stats_.resets.get(), 1u);
}

TEST_F(H2StreamTest, ACloseIsGoawayOnceItsStreamIsDone) {
  int32_t id = client_.request("GET", "/?close=100");
  Fed fed = exchange();
  EXPECT_TRUE(client_.streams[id].ended);
  EXPECT_TRUE(client_.goaway);
  EXPECT_EQ(client_.goaway_last, id);
  EXPECT_EQ(fed.next, Fed::Next::close) << "no stream left after the GOAWAY";
}

TEST_F(H2StreamTest, ARequestThatNeverEndsTimesTheConnectionOut) {
  client_.request_open("POST", "/echo");  // HEADERS, and no END_STREAM ever
  Fed fed = exchange();
  EXPECT_TRUE(fed.partial);
  EXPECT_EQ(fed.wake_us, 10'000'000u) << "the header timeout";
  fed = later(10'000 * kMs);
  EXPECT_EQ(fed.next, Fed::Next::close);
  EXPECT_EQ(fed.timeout, Fed::Timeout::header);
  EXPECT_TRUE(client_.goaway);
}

TEST_F(H2StreamTest, APeerThatNeverOpensItsWindowTimesTheConnectionOut) {
  test::H2Client closed(0);  // SETTINGS_INITIAL_WINDOW_SIZE 0
  int32_t id = closed.request("GET", "/");
  std::string in = closed.output();
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  EXPECT_TRUE(closed.input(out));
  EXPECT_EQ(closed.field(id, ":status"), "200");
  EXPECT_FALSE(closed.streams[id].ended);
  EXPECT_EQ(fed.wake_us, 30'000'000u) << "the send timeout";
  fake_now += 30'000 * kMs;
  out.clear();
  fed = session_.resume(out);
  EXPECT_EQ(fed.next, Fed::Next::close);
  EXPECT_EQ(fed.timeout, Fed::Timeout::send);
}

TEST_F(H2StreamTest, ManyStreamsComeBackToThePool) {
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 50; ++i) client_.request("GET", i % 2 ? "/" : "/slow");
    exchange();
    later(200 * kMs);
    EXPECT_EQ(session_.live(), 0u) << round;
  }
  EXPECT_EQ(stats_.requests.get(), 150u);
}

class H2UnshapedStreamTest : public H2StreamTest {
 protected:
  H2UnshapedStreamTest() : H2StreamTest(false) {}
};

TEST_F(H2UnshapedStreamTest, WithoutShapeAQueryIsJustAQuery) {
  int32_t id = client_.request("GET", "/?status=503");
  exchange();
  EXPECT_EQ(client_.field(id, ":status"), "200");
  EXPECT_EQ(stats_.shaped.get(), 0u);
}

}  // namespace
}  // namespace hello
