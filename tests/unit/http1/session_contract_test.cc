// The HTTP/1 heart's side of the heart contract (http/heart.h): lent per
// request, with its deadline kept by the connection; live from a request's
// first byte until it is answered (a waiting answer included); nothing to
// say at goodbye, 408 at the header deadline.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http1/session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

class SessionContractTest : public ::testing::Test {
 protected:
  SessionContractTest() : table_(test::kTestPersona, options()), session_(table_, sink_) {}
  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    return o;
  }
  Fed feed(std::string_view in) { return session_.feed(in.data(), in.size(), out_); }

  static inline const std::vector<FileRoute> kRoutes = {test::text_route("/slow", "slow", 200000)};
  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Session session_;
  std::string out_;
};

TEST_F(SessionContractTest, IsLentPerRequestAndLeavesTheDeadlinesToTheConnection) {
  EXPECT_FALSE(session_.kept());
  EXPECT_FALSE(session_.keeps_time());
}

TEST_F(SessionContractTest, IsLiveFromARequestsFirstByteUntilItIsAnswered) {
  EXPECT_FALSE(session_.live());
  Fed fed = feed("GET / HTTP/1.1\r\nHo");
  EXPECT_TRUE(fed.partial);
  EXPECT_TRUE(session_.live());
  fed = feed("st: a\r\n\r\n");
  EXPECT_EQ(fed.answered, 1u);
  EXPECT_FALSE(session_.live());
  // A request and the first byte of the next: live again.
  feed("GET / HTTP/1.1\r\nHost: a\r\n\r\nG");
  EXPECT_TRUE(session_.live());
  session_.reset();
  EXPECT_FALSE(session_.live()) << "a new connection has no request";
}

TEST_F(SessionContractTest, IsLiveWhileAnAnswerWaits) {
  Fed fed = feed("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(fed.next, Fed::Next::later);
  EXPECT_TRUE(session_.live());
  fed = session_.resume(out_);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_FALSE(session_.live());
}

TEST_F(SessionContractTest, SaysNothingAtGoodbyeAndA408AtTheHeaderDeadline) {
  feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  out_.clear();
  session_.goodbye(out_);
  EXPECT_EQ(out_, "") << "between requests";
  feed("GET / HTTP/1.1\r\n");
  session_.goodbye(out_);
  EXPECT_EQ(out_, "") << "in a request: its FIN says it";
  session_.time_out(out_);
  EXPECT_EQ(out_.substr(0, 12), "HTTP/1.1 408");
}

TEST_F(SessionContractTest, ServesAgainOnceReleasedAndReset) {
  feed("GET / HTTP/1.1\r\n");
  session_.release();
  session_.reset();
  EXPECT_FALSE(session_.live());
  out_.clear();
  Fed fed = feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(fed.answered, 1u);
  EXPECT_EQ(out_, table_.route(0, Variant::keep_alive_11).bytes);
}

}  // namespace
}  // namespace hello
