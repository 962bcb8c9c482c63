// The HTTP/2 heart's side of the heart contract (http/heart.h): kept for
// the whole connection and keeping its streams' deadlines itself; live
// while some stream is; GOAWAY (NO_ERROR, the last stream seen) at
// goodbye; its session let go of when it is released.
#include "http2/h2_heart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "h2_raw.h"
#include "test_persona.h"

namespace hello {
namespace {

namespace h2raw = test::h2raw;

class H2HeartTest : public ::testing::Test {
 protected:
  H2HeartTest() : table_(test::kTestPersona, {}), answers_(table_), heart_(table_, setup(), sink_) {
    heart_.reset();
  }
  const H2Setup& setup() {
    setup_.answers = &answers_;
    return setup_;
  }
  // `bytes` to the heart; its frames back.
  std::vector<h2raw::Frame> send(const std::string& bytes) {
    std::string out;
    fed_ = heart_.feed(bytes.data(), bytes.size(), out);
    return h2raw::frames(out);
  }
  void start() {
    std::string in(h2raw::kPreface);
    in += h2raw::settings();
    in += h2raw::settings_ack();
    send(in);
  }

  ResponseTable table_;
  H2Answers answers_;
  H2Setup setup_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  H2Heart heart_;
  Fed fed_;
};

TEST_F(H2HeartTest, IsKeptForTheConnectionAndKeepsItsStreamsDeadlines) {
  EXPECT_TRUE(heart_.kept());
  EXPECT_TRUE(heart_.keeps_time());
}

TEST_F(H2HeartTest, IsLiveWhileSomeStreamIs) {
  start();
  EXPECT_FALSE(heart_.live()) << "a session with no stream";
  // A POST's HEADERS without END_STREAM: its request goes on.
  send(h2raw::open_post(1));
  EXPECT_TRUE(fed_.partial);
  EXPECT_TRUE(heart_.live());
  std::vector<h2raw::Frame> fs = send(h2raw::data(1, "", h2raw::kEndStream));
  EXPECT_TRUE(h2raw::answered(fs, 1));
  EXPECT_FALSE(fed_.partial);
  EXPECT_FALSE(heart_.live()) << "answered, the stream is over";
}

TEST_F(H2HeartTest, SaysGoawayWithTheLastStreamAtGoodbye) {
  start();
  send(h2raw::get(1) + h2raw::get(3));
  std::string out;
  heart_.goodbye(out);
  std::vector<h2raw::Frame> fs = h2raw::frames(out);
  ASSERT_EQ(h2raw::count(fs, h2raw::kGoaway), 1);
  EXPECT_EQ(h2raw::goaway_code(fs), h2raw::kNoError);
  EXPECT_EQ(h2raw::read32(fs[0].payload) & 0x7fffffff, 3u) << "the last stream seen";
}

TEST_F(H2HeartTest, LetsGoOfItsSessionWhenReleasedAndStartsANewOneWhenReset) {
  start();
  send(h2raw::open_post(1));
  ASSERT_TRUE(heart_.live());
  heart_.release();
  EXPECT_FALSE(heart_.live()) << "no session, no stream";
  heart_.reset();
  // A new session: the preface again, and its own SETTINGS first.
  std::string in(h2raw::kPreface);
  in += h2raw::settings();
  std::vector<h2raw::Frame> fs = send(in);
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].type, h2raw::kSettings);
  EXPECT_EQ(fed_.next, Fed::Next::read);
  EXPECT_FALSE(heart_.live());
}

}  // namespace
}  // namespace hello
