#include "http1/floor_session.h"

#include <gtest/gtest.h>

#include <string>

#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

class FloorSessionTest : public ::testing::Test {
 protected:
  static Persona make() {
    Persona p = test::kTestPersona;
    p.no_parsing = true;
    return p;
  }
  FloorSessionTest() : table_(persona_, {}), floor_(table_, sink_) {}

  // Feeds `bytes` in one piece and returns what the floor answered.
  std::string feed(std::string_view bytes) {
    std::string out;
    fed_ = floor_.feed(bytes.data(), bytes.size(), out);
    EXPECT_EQ(fed_.answered * route().size(), out.size());
    EXPECT_EQ(fed_.consumed, bytes.size());
    open_ = fed_.next == Fed::Next::read;
    return out;
  }
  std::string route() { return table_.route(0, Variant::keep_alive_11).bytes; }

  static inline const Persona persona_ = make();
  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  FloorSession floor_;
  Fed fed_;
  bool open_ = true;
};

TEST_F(FloorSessionTest, AnswersEveryBlankLineEvenSplitAndInvalid) {
  // No parsing: even what is not HTTP gets the fixed answer, once per CRLF CRLF.
  const std::string input = "GET / HTTP/1.1\r\n\r\nnot http\r\n\r\n\r\n\r\n\r\r\n\r\n";
  const std::string one = route();
  test::for_each_split(input, [&](std::string_view a, std::string_view b, size_t split) {
    floor_.reset();
    std::string out = feed(a);
    out += feed(b);
    ASSERT_EQ(out, one + one + one + one) << "split at " << split;
    ASSERT_TRUE(open_);
  });
}

// The matcher finds each LF with memchr; a byte-at-a-time matcher is the
// reference, over every split of many short inputs made of CR, LF and 'x'.
TEST_F(FloorSessionTest, CountsLikeAByteAtATimeMatcher) {
  const std::string one = route();
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return seed >> 16;
  };
  for (int round = 0; round < 2000; ++round) {
    std::string input(next() % 24, 'x');
    for (char& c : input) c = "\r\nx"[next() % 3];
    size_t expected = test::blank_lines(input);
    for (size_t a = 0; a <= input.size(); ++a) {
      size_t b = a + (input.size() - a) / 2;
      floor_.reset();
      std::string_view in(input);
      std::string out = feed(in.substr(0, a));  // one statement each: in this order
      out += feed(in.substr(a, b - a));
      out += feed(in.substr(b));
      ASSERT_EQ(out.size(), expected * one.size()) << testing::PrintToString(input) << " split at "
                                                   << a << " and " << b << ", round " << round;
    }
  }
}

// A CRLF CRLF split across reads is still one request: the matcher's state
// is the floor's only state, and a read that ends inside one says so.
TEST_F(FloorSessionTest, APartialBlankLineIsAPartialRequest) {
  EXPECT_EQ(feed("GET / HTTP/1.1\r\n\r"), "");
  EXPECT_TRUE(fed_.partial);
  EXPECT_EQ(feed("\n"), route());
  EXPECT_FALSE(fed_.partial);
  EXPECT_EQ(feed("x"), "");
  EXPECT_FALSE(fed_.partial) << "no CR seen: nothing to remember";
}

// The heart contract (http/heart.h): lent per request like HTTP/1's, live
// exactly while a CRLF CRLF is begun, and nothing to say at any goodbye.
TEST_F(FloorSessionTest, IsLentPerRequestAndLiveWhileABlankLineIsBegun) {
  EXPECT_FALSE(floor_.kept());
  EXPECT_FALSE(floor_.keeps_time());
  EXPECT_FALSE(floor_.live());
  feed("GET / HTTP/1.1\r\n\r");
  EXPECT_TRUE(floor_.live());
  feed("\n");
  EXPECT_FALSE(floor_.live());
  feed("x\r");
  EXPECT_TRUE(floor_.live());
  floor_.reset();
  EXPECT_FALSE(floor_.live()) << "a new connection has no request";
}

TEST_F(FloorSessionTest, SaysNothingAtGoodbyeOrAtTheDeadline) {
  feed("GET / HTTP/1.1\r\n");
  std::string out;
  floor_.goodbye(out);
  floor_.time_out(out);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace hello
