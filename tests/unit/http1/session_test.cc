#include "http1/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "http_bytes.h"
#include "session_fixture.h"
#include "test_persona.h"

namespace hello {
namespace {

TEST_F(SessionTest, AnswersGetAndStaysOpen) {
  EXPECT_EQ(feed(kGet11), route("/", Variant::keep_alive_11));
  EXPECT_TRUE(open_);
  EXPECT_EQ(stats_.requests.get(), 1u);
  EXPECT_EQ(stats_.responses_2xx.get(), 1u);
}

struct KeepAliveCase {
  const char* request;
  Variant variant;
  bool open;
};

TEST_F(SessionTest, KeepAliveMatrix) {
  const KeepAliveCase cases[] = {
      {"GET / HTTP/1.0\r\n\r\n", Variant::close_10, false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", Variant::keep_alive_10, true},
      {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", Variant::keep_alive_10, true},
      {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", Variant::keep_alive_11, true},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", Variant::close_11, false},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n", Variant::close_11, false},
  };
  for (const KeepAliveCase& c : cases) {
    session_.reset();
    EXPECT_EQ(feed(c.request), route("/", c.variant)) << c.request;
    EXPECT_EQ(open_, c.open) << c.request;
  }
}

// The connection closes at once only when nothing was left unread.
TEST_F(SessionTest, CleanEndOnlyWhenTheClosingRequestEndsTheInput) {
  feed("GET / HTTP/1.0\r\nUser-Agent: ab\r\n\r\n");
  EXPECT_FALSE(open_);
  EXPECT_TRUE(fed_.clean_end);

  session_.reset();
  feed("GET / HTTP/1.1\r\nHost: a\r\n");
  feed("Connection: close\r\n\r\n");
  EXPECT_TRUE(fed_.clean_end) << "split across reads";

  session_.reset();
  feed("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n");
  EXPECT_FALSE(fed_.clean_end) << "a pipelined request was left";

  session_.reset();
  feed("GET / HTTP/1.0\r\n\r\nG");
  EXPECT_FALSE(fed_.clean_end) << "one byte was left";

  session_.reset();
  feed("GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n");
  EXPECT_FALSE(open_);
  EXPECT_FALSE(fed_.clean_end) << "a rejected request never ends cleanly";

  session_.reset();
  feed(kGet11);
  EXPECT_TRUE(open_);
  EXPECT_FALSE(fed_.clean_end);
}

TEST_F(SessionTest, KnowsWhenItIsMidRequest) {
  EXPECT_EQ(session_.state(), Session::State::idle);
  EXPECT_EQ(feed("GET / HTTP/1.1\r\nHo"), "");
  EXPECT_TRUE(fed_.partial);
  EXPECT_EQ(fed_.answered, 0u);
  EXPECT_EQ(session_.state(), Session::State::in_request);
  EXPECT_NE(feed("st: a\r\n\r\n"), "");
  EXPECT_FALSE(fed_.partial);
  EXPECT_EQ(fed_.answered, 1u);
  EXPECT_EQ(session_.state(), Session::State::idle);
}

TEST_F(SessionTest, UpgradeHeaderIsIgnored) {
  std::string out = feed(
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
      "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n" +
      std::string(kGet11));
  EXPECT_EQ(out, route("/", Variant::keep_alive_11) + route("/", Variant::keep_alive_11));
  EXPECT_TRUE(open_);
}

TEST_F(SessionTest, ConnectIsAnsweredThenClosed) {
  EXPECT_EQ(feed("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" + std::string(kGet11)),
            error(404, Variant::close_11));
  EXPECT_FALSE(open_);
}

TEST_F(SessionTest, ObsFoldIsRejectedHoweverItArrives) {
  const char* folds[] = {
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX:\r\n b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX: \r\n b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n   b\r\n\r\n",
  };
  for (std::string_view fold : folds) {
    test::for_each_split(fold, [&](std::string_view a, std::string_view b, size_t split) {
      ASSERT_EQ(feed_cut(a, b), error(400, Variant::close_11)) << fold << " split at " << split;
    });
  }
}

TEST_F(SessionTest, ValuesSplitAcrossReadsAreNotFolds) {
  std::string_view request = "GET / HTTP/1.1\r\nHost: a\r\nX: a b  c\r\nY:  d\r\n\r\n";
  test::for_each_split(request, [&](std::string_view a, std::string_view b, size_t split) {
    ASSERT_EQ(feed_cut(a, b), route("/", Variant::keep_alive_11)) << "split at " << split;
  });
}

TEST_F(SessionTest, ExpectValueMayHaveTrailingBlanks) {
  std::string out =
      feed("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue \r\nContent-Length: 1\r\n\r\n");
  EXPECT_EQ(out, "HTTP/1.1 100 Continue\r\n\r\n");
}

// 417 answers a well-formed request: the connection stays, and the answer
// must not say it closes.
TEST_F(SessionTest, UnknownExpectationIs417AndKeepsTheConnection) {
  std::string out = feed("GET / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\n\r\n");
  EXPECT_EQ(out, error(417, Variant::keep_alive_11));
  EXPECT_EQ(out.find("Connection: close"), std::string::npos) << out;
  EXPECT_TRUE(open_);
  EXPECT_EQ(feed(kGet11), route("/", Variant::keep_alive_11));
}

// Trailers after a chunked body are not headers: Host and Expect there
// change nothing.
TEST_F(SessionTest, HostAndExpectInTrailersAreIgnored) {
  std::string chunked =
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "1\r\nx\r\n0\r\nExpect: teapot\r\nHost: b\r\n\r\n";
  EXPECT_EQ(feed(chunked), error(405, Variant::keep_alive_11));
  EXPECT_TRUE(open_);
}

TEST_F(SessionTest, IgnoresTheQuery) {
  EXPECT_EQ(feed("GET /json?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
            route("/json", Variant::keep_alive_11));
}

TEST_F(SessionTest, HeadSendsHeadersOnly) {
  EXPECT_EQ(feed("HEAD /json HTTP/1.1\r\nHost: a\r\n\r\n"),
            head_only(route("/json", Variant::keep_alive_11)));
  EXPECT_TRUE(open_);
}

TEST_F(SessionTest, UnknownPathIs404AndStaysOpen) {
  EXPECT_EQ(feed("GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"), error(404, Variant::keep_alive_11));
  EXPECT_TRUE(open_);
  EXPECT_EQ(stats_.responses_4xx.get(), 1u);
}

TEST_F(SessionTest, LongPathIs404) {
  std::string path(200, 'a');
  EXPECT_EQ(feed("GET /" + path + " HTTP/1.1\r\nHost: a\r\n\r\n"),
            error(404, Variant::keep_alive_11));
}

TEST_F(SessionTest, OtherMethodIs405AndItsBodyIsSkipped) {
  std::string out =
      feed("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + std::string(kGet11));
  EXPECT_EQ(out, error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11));
  EXPECT_TRUE(open_);
}

TEST_F(SessionTest, ChunkedBodyIsSkipped) {
  std::string out = feed(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
      std::string(kGet11));
  EXPECT_EQ(out, error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11));
}

TEST_F(SessionTest, MalformedRequestIs400ThenClose) {
  std::string out = feed("GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n");
  EXPECT_EQ(out, error(400, Variant::close_11));
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
  EXPECT_FALSE(open_);
  EXPECT_EQ(stats_.parse_errors.get(), 1u);
  EXPECT_EQ(feed(kGet11), "") << "nothing is answered after the close";
}

TEST_F(SessionTest, GarbageIs400) {
  EXPECT_EQ(feed("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), error(400, Variant::close_11));
  EXPECT_FALSE(open_);
}

TEST_F(SessionTest, Http11WithoutHostIs400) {
  EXPECT_EQ(feed("GET / HTTP/1.1\r\n\r\n"), error(400, Variant::close_11));
  EXPECT_FALSE(open_);
}

TEST_F(SessionTest, TwoHostHeadersAre400) {
  EXPECT_EQ(feed("GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n"), error(400, Variant::close_10));
}

TEST_F(SessionTest, Http10WithoutHostIsFine) {
  EXPECT_EQ(feed("GET / HTTP/1.0\r\n\r\n"), route("/", Variant::close_10));
}

TEST_F(SessionTest, OtherMajorVersionIs505) {
  EXPECT_EQ(feed("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), error(505, Variant::close_11));
  EXPECT_FALSE(open_);
  EXPECT_EQ(stats_.responses_5xx.get(), 1u);
}

TEST_F(SessionTest, NothingAfterConnectionClose) {
  std::string out =
      feed("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + std::string(kGet11));
  EXPECT_EQ(out, route("/", Variant::close_11));
  EXPECT_FALSE(open_);
  EXPECT_EQ(stats_.requests.get(), 1u);
}

TEST_F(SessionTest, PipelinedRequestsSplitAtEveryByteGiveIdenticalAnswers) {
  const std::string pipeline =
      "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /json?q HTTP/1.1\r\nHost: a\r\n\r\n"
      "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"
      "POST /json HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
      "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /json HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
  const std::string expected =
      route("/", Variant::keep_alive_11) + route("/json", Variant::keep_alive_11) +
      head_only(route("/", Variant::keep_alive_11)) + error(405, Variant::keep_alive_11) +
      error(404, Variant::keep_alive_11) + route("/json", Variant::close_11);
  session_.reset();
  ASSERT_EQ(feed(pipeline), expected);
  test::for_each_split(pipeline, [&](std::string_view a, std::string_view b, size_t split) {
    ASSERT_EQ(feed_cut(a, b), expected) << "split at byte " << split;
    ASSERT_FALSE(open_);
  });
  // And one byte at a time.
  session_.reset();
  std::string out;
  for (char c : pipeline) out += feed(std::string_view(&c, 1));
  EXPECT_EQ(out, expected);
}
class AlwaysCloseSessionTest : public SessionTest {
 protected:
  static Persona closing() {
    Persona p = test::kTestPersona;
    p.always_close = true;
    return p;
  }
  AlwaysCloseSessionTest() : SessionTest(persona_) {}
  static inline const Persona persona_ = closing();
};

TEST_F(AlwaysCloseSessionTest, ClosesEvenHttp11) {
  EXPECT_EQ(feed(kGet11), route("/", Variant::close_11));
  EXPECT_FALSE(open_);
}

class NoHttp10KeepAliveTest : public SessionTest {
 protected:
  static Persona make() {
    Persona p = test::kTestPersona;
    p.keep_alive_http10 = false;
    p.head_allowed = false;
    return p;
  }
  NoHttp10KeepAliveTest() : SessionTest(persona_) {}
  static inline const Persona persona_ = make();
};

TEST_F(NoHttp10KeepAliveTest, Http10KeepAliveIsRefused) {
  EXPECT_EQ(feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
            route("/", Variant::close_10));
  EXPECT_FALSE(open_);
}

TEST_F(NoHttp10KeepAliveTest, HeadNotAllowedIs405WithoutBody) {
  EXPECT_EQ(feed("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"),
            head_only(error(405, Variant::keep_alive_11)));
  EXPECT_TRUE(open_);
}

class FramedSessionTest : public SessionTest {
 protected:
  FramedSessionTest() : SessionTest(test::kTestFramedPersona) {}
  const PreparedResponse& answer(std::string_view path, Variant v, bool head = false) {
    return table_.route(table_.find_route(path), v, head);
  }
};

TEST_F(FramedSessionTest, ChunkedBodyKeepsAnHttp11Connection) {
  EXPECT_EQ(feed("GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n" + std::string(kGet11)),
            answer("/chunked", Variant::keep_alive_11).bytes + route("/", Variant::keep_alive_11));
  EXPECT_TRUE(open_);
}

// Asked to keep the connection, the session still closes after a body
// that only the close can end, and answers nothing after it.
TEST_F(FramedSessionTest, BodyEndedByCloseClosesWhateverTheClientAsked) {
  EXPECT_EQ(feed("GET /chunked HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + std::string(kGet11)),
            answer("/chunked", Variant::keep_alive_10).bytes);
  EXPECT_FALSE(open_);
  session_.reset();
  EXPECT_EQ(feed("GET /close HTTP/1.1\r\nHost: a\r\n\r\n"),
            answer("/close", Variant::keep_alive_11).bytes);
  EXPECT_FALSE(open_);
  EXPECT_TRUE(fed_.clean_end);
}

TEST_F(FramedSessionTest, HeadOfABodyWithoutLengthKeepsTheConnection) {
  EXPECT_EQ(feed("HEAD /chunked HTTP/1.1\r\nHost: a\r\n\r\n"),
            answer("/chunked", Variant::keep_alive_11, true).bytes);
  EXPECT_TRUE(open_);
  EXPECT_EQ(feed("HEAD /close HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
            answer("/close", Variant::keep_alive_10, true).bytes);
  EXPECT_TRUE(open_);
}

}  // namespace
}  // namespace hello
