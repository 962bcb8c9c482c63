#include "http1/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  explicit SessionTest(const Persona& p = test::kTestPersona, TableOptions o = {})
      : table_(p, o), session_(table_, sink_) {}

  // Feeds `bytes` in one piece and returns what the session answered.
  std::string feed(std::string_view bytes) {
    std::string out;
    fed_ = session_.feed(bytes.data(), bytes.size(), out);
    open_ = fed_.next != Fed::Next::close;
    return out;
  }
  // Feeds `a` then `b` to a fresh session: one input cut in two.
  std::string feed_cut(std::string_view a, std::string_view b) {
    session_.reset();
    std::string out = feed(a);
    return out + feed(b);
  }
  std::string route(std::string_view path, Variant v) {
    return table_.route(table_.find_route(path), v).bytes;
  }
  std::string error(int status, Variant v) { return table_.error(status, v).bytes; }
  std::string head_only(const std::string& response) {
    return response.substr(0, response.find("\r\n\r\n") + 4);
  }

  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Session session_;
  Fed fed_;
  bool open_ = true;
};

constexpr std::string_view kGet11 = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

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

// Routes from a file, built in code: an override of "/", a JSON route with
// headers, and a JSON echo.
std::vector<FileRoute> file_routes() {
  std::vector<FileRoute> r{test::text_route("/", "from the file"), test::text_route("/api", ""),
                           test::echo_route()};
  r[1].status = 418;
  r[1].kind = FileRoute::Kind::json;
  r[1].content_type = "application/json";
  r[1].content = "{\"x\":1}";
  r[1].headers = {{"X-One", "1"}, {"X-Two", "2"}};
  return r;
}

class RoutesSessionTest : public SessionTest {
 protected:
  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    return o;
  }
  RoutesSessionTest() : SessionTest(test::kTestPersona, options()) {}
  static std::string post(std::string_view body, std::string_view path = "/echo") {
    return test::post(body, path);
  }
  static std::string chunked(std::string_view a, std::string_view b) {
    return test::chunked_post({a, b});
  }
  // What the echo route answers with `body`: its template with the length.
  std::string echoed(std::string_view body, Variant v = Variant::keep_alive_11) {
    const PreparedResponse& r = table_.route(table_.find_route("/echo"), v);
    return r.bytes.substr(0, r.length_offset) + std::to_string(body.size()) +
           r.bytes.substr(r.length_offset, r.head_length - r.length_offset) + std::string(body);
  }
  static inline const std::vector<FileRoute> kRoutes = file_routes();
};

TEST_F(RoutesSessionTest, FileRoutesReplaceAndAddToThePersonas) {
  std::string root = feed(kGet11);
  EXPECT_EQ(root, route("/", Variant::keep_alive_11));
  EXPECT_NE(root.find("Content-Length: 13\r\n\r\nfrom the file"), std::string::npos) << root;
  std::string api = feed("GET /api HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(api.rfind("HTTP/1.1 418 I'm a teapot\r\n", 0), 0u) << api;
  EXPECT_NE(api.find("Content-Type: application/json\r\nX-One: 1\r\nX-Two: 2\r\n"
                     "Content-Length: 7\r\n\r\n{\"x\":1}"),
            std::string::npos)
      << api;
  EXPECT_TRUE(open_) << "a 418 of a route is an answer, not an error: the connection stays";
  // The persona's other route is still there; a known path with another
  // method is 405, an unknown one 404.
  EXPECT_EQ(feed("GET /json HTTP/1.1\r\nHost: a\r\n\r\n"), route("/json", Variant::keep_alive_11));
  // A path of the file lists its own methods in Allow; the persona's keep its line.
  std::string wrong = feed("GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(wrong.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << wrong;
  EXPECT_NE(wrong.find("\r\nAllow: POST\r\n"), std::string::npos) << wrong;
  EXPECT_TRUE(open_);
  wrong = feed(post("{}", "/api"));
  EXPECT_NE(wrong.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << wrong;
  EXPECT_EQ(feed(post("{}", "/json")), error(405, Variant::keep_alive_11));
  EXPECT_EQ(feed(post("{}", "/nope")), error(404, Variant::keep_alive_11));
  // HEAD of a GET route from the file: its head only.
  EXPECT_EQ(feed("HEAD /api HTTP/1.1\r\nHost: a\r\n\r\n"), head_only(api));
}

TEST_F(RoutesSessionTest, EchoSendsTheBodyBackMinified) {
  EXPECT_EQ(feed(post("{ \"a\" : [1, 2.50, \"x y\"],\n \"b\": {\"c\": null} }")),
            echoed("{\"a\":[1,2.50,\"x y\"],\"b\":{\"c\":null}}"));
  EXPECT_TRUE(open_);
  EXPECT_EQ(feed(post("  42 ")), echoed("42"));
  EXPECT_EQ(feed(chunked("[true, ", "false ]")), echoed("[true,false]"));
  EXPECT_EQ(stats_.responses_2xx.get(), 3u);
}

TEST_F(RoutesSessionTest, EchoOfInvalidJsonIs400AndKeepsTheConnection) {
  for (std::string_view bad : {"{\"a\": }", "", "[1, 2", "nul", "{\"a\":1} x"}) {
    std::string out = feed(post(bad));
    EXPECT_EQ(out.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad << ": " << out;
    std::string body = out.substr(out.find("\r\n\r\n") + 4);
    EXPECT_EQ(body.rfind("invalid JSON: ", 0), 0u) << body;
    EXPECT_EQ(body.find('\n'), body.size() - 1) << "one line: " << body;
    EXPECT_NE(out.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
              std::string::npos);
    EXPECT_TRUE(open_) << bad;
  }
  // And the connection still answers.
  EXPECT_EQ(feed(post("[]")), echoed("[]"));
}

TEST_F(RoutesSessionTest, EchoesPipelinedAfterEachOtherInOrder) {
  std::string in =
      post("{\"n\": 1}") + chunked("{\"n\"", ": 2}") + std::string(kGet11) + post("{\"n\": 3 }");
  std::string expected = echoed("{\"n\":1}") + echoed("{\"n\":2}") +
                         route("/", Variant::keep_alive_11) + echoed("{\"n\":3}");
  EXPECT_EQ(feed(in), expected);
  // Split at every byte, the same answers.
  test::for_each_split(in, [&](std::string_view a, std::string_view b, size_t split) {
    ASSERT_EQ(feed_cut(a, b), expected) << "split at " << split;
  });
}

TEST_F(RoutesSessionTest, EchoOverTheBodyLimitIs413AndCloses) {
  Limits limits;
  limits.max_body_bytes = 16;
  Session small(table_, sink_, limits);
  std::string out;
  std::string in = post("[1,2,3,4,5,6,7,8,9]");  // 19 bytes
  EXPECT_EQ(small.feed(in.data(), in.size(), out).next, Fed::Next::close);
  EXPECT_EQ(out, error(413, Variant::close_11));
  small.reset();
  out.clear();
  in = chunked("[1,2,3,4,5,", "6,7,8,9]");
  EXPECT_EQ(small.feed(in.data(), in.size(), out).next, Fed::Next::close);
  EXPECT_EQ(out, error(413, Variant::close_11));
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

// Answers a hostile-input probe found wrong (docs/hardening.md), each
// checked whole, split in two at every byte and fed one byte at a time.
class ConformanceTest : public SessionTest {
 protected:
  explicit ConformanceTest(const Persona& p = test::kTestPersona) : SessionTest(p) {}
  // What `session` answers to `request` fed in the pieces `cuts` makes of it.
  static std::string answer(Session& session, std::string_view request, std::vector<size_t> cuts) {
    session.reset();
    std::string out;
    size_t from = 0;
    cuts.push_back(request.size());
    for (size_t cut : cuts) {
      session.feed(request.data() + from, cut - from, out);
      from = cut;
    }
    return out;
  }
  // The answer to `request`, after checking that every split gives the same.
  static std::string answer_however_split(Session& session, std::string_view request) {
    std::string whole = answer(session, request, {});
    for (size_t split = 0; split <= request.size(); ++split) {
      std::string out = answer(session, request, {split});
      if (out != whole) {
        ADD_FAILURE() << testing::PrintToString(std::string(request)) << " split at " << split
                      << " answers " << out << "\ninstead of " << whole;
        return whole;
      }
    }
    std::vector<size_t> bytes;
    for (size_t i = 1; i < request.size(); ++i) bytes.push_back(i);
    std::string out = answer(session, request, bytes);
    if (out != whole)
      ADD_FAILURE() << testing::PrintToString(std::string(request))
                    << " one byte at a time answers " << out << "\ninstead of " << whole;
    return whole;
  }
  std::string answer_however_split(std::string_view request) {
    return answer_however_split(session_, request);
  }
  static std::string get(std::string_view target, std::string_view fields) {
    return "GET " + std::string(target) + " HTTP/1.1\r\n" + std::string(fields) + "\r\n";
  }
  static std::string with_host(std::string_view host) {
    return get("/", "Host: " + std::string(host) + "\r\n");
  }
  static std::string post_chunked(std::string_view transfer_encoding) {
    return "POST / HTTP/1.1\r\nHost: a\r\n" + std::string(transfer_encoding) +
           "\r\n3\r\nabc\r\n0\r\n\r\n" + std::string(kGet11);
  }
};

// A chunk whose declared size would take the body over the limit is 413 as
// soon as its size line ends, as a Content-Length over it is: the server does
// not wait for data it would refuse.
TEST_F(ConformanceTest, ChunkOverTheBodyLimitIs413AtItsSizeLine) {
  Limits limits;
  limits.max_body_bytes = 100;
  Session session(table_, sink_, limits);
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string too_large = error(413, Variant::close_11);
  EXPECT_EQ(answer_however_split(session, head + "FFFFFFFFFFFFFFFF\r\n"), too_large);
  EXPECT_EQ(answer_however_split(session, head + "65\r\n"), too_large);  // 101 bytes
  EXPECT_EQ(answer_however_split(session, head + "65;ext=1\r\n"), too_large);
  // 50 and 51 bytes: the second chunk's size line is enough.
  EXPECT_EQ(answer_however_split(session, head + "32\r\n" + std::string(50, 'x') + "\r\n33\r\n"),
            too_large);
  // Exactly at the limit is fine.
  EXPECT_EQ(answer_however_split(session, head + "32\r\n" + std::string(50, 'x') + "\r\n32\r\n" +
                                              std::string(50, 'x') + "\r\n0\r\n\r\n" +
                                              std::string(kGet11)),
            error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11));
}

// RFC 9110 section 5.1: a field name is a token, at least one character.
TEST_F(ConformanceTest, EmptyFieldNameIs400) {
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\n: 1\r\n")), error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split(get("/", ":\r\nHost: a\r\n")), error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "0\r\n: trailer\r\n\r\n"),
            error(400, Variant::close_11));
}

// RFC 9110 section 5.5: a field value may be empty. (llhttp reports an
// empty value at the start of the next line, where a fold would start.)
TEST_F(ConformanceTest, EmptyFieldValuesAreAccepted) {
  const std::string ok = route("/", Variant::keep_alive_11);
  for (const char* fields : {"Host: a\r\nX-A:\r\n", "X-A:\r\nHost: a\r\n", "Host: a\r\nX-B: \r\n",
                             "Host: a\r\nX-A:\r\nX-B: \t \r\nX-C: c\r\n"}) {
    EXPECT_EQ(answer_however_split(get("/", fields) + std::string(kGet11)), ok + ok) << fields;
  }
  // A fold still is not, even after an empty value.
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX-A:\r\nX: a\r\n b\r\n")),
            error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX:\r\n b\r\n")),
            error(400, Variant::close_11));
  // Except one: a continuation of blanks alone after an empty value gives
  // llhttp's empty span at the next line, as an empty value does, and tells
  // the session nothing in between. It adds nothing to the value; RFC 9112
  // section 5.2 lets a server read a fold as blanks. Whole or split alike.
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX:\r\n \r\nY: y\r\n")), ok);
}

// RFC 9112 section 6.1: chunked, alone and last, is the only transfer coding
// a server must know; any other is 501 and a close (as nginx).
TEST_F(ConformanceTest, TransferEncodingMustBeChunkedAlone) {
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  for (const char* te :
       {"Transfer-Encoding: chunked\r\n", "transfer-encoding:CHUNKED\r\n",
        "Transfer-Encoding:  Chunked  \r\n", "X-A:\r\nTransfer-Encoding: chunked\r\n"}) {
    EXPECT_EQ(answer_however_split(post_chunked(te)), ok) << te;
  }
  for (const char* te :
       {"Transfer-Encoding: identity, chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: gzip\r\n", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked, chunked\r\n", "Transfer-Encoding: , chunked\r\n",
        "Transfer-Encoding: chunked,\r\n", "Transfer-Encoding:\r\n",
        "Transfer-Encoding: chunkedx\r\n", "Transfer-Encoding: chunked x\r\n",
        "Transfer-Encoding: xchunked\r\n", "Transfer-Encoding: chunk\r\n"}) {
    EXPECT_EQ(answer_however_split(post_chunked(te)), error(501, Variant::close_11)) << te;
  }
  // Names that only look like it are other fields.
  EXPECT_EQ(answer_however_split(get("/",
                                     "Host: a\r\nTransfer-Encodings: gzip\r\n"
                                     "Transfer_Encoding: gzip\r\n")),
            route("/", Variant::keep_alive_11));
}

// RFC 9112 section 3.2: a Host that is not uri-host [":" port] is 400.
TEST_F(ConformanceTest, HostMustBeAHostAndAnOptionalPort) {
  const std::string ok = route("/", Variant::keep_alive_11);
  for (const char* host : {"a",
                           "a:80",
                           "a:",
                           "127.0.0.1:8080",
                           "localhost",
                           "A.Example:65535",
                           "a:0123456",
                           "999.1.1.1",
                           "a..b",
                           "xn--bcher-kva.example",
                           "a-b.c_d~e",
                           "!$&'()*+,;=",
                           "a%41b%7e",
                           "[::1]",
                           "[::1]:8080",
                           "[2001:DB8::8:800:200c:417a]",
                           "[::ffff:1.2.3.4]",
                           "[v1.fe80::a+en1]",
                           "a ",
                           "a:80 \t"}) {
    EXPECT_EQ(answer_however_split(with_host(host)), ok) << host;
  }
  for (const char* host :
       {"a b",    "a/b",  "",          ":80",          "a:x",      "a:80:80", "a@b",
        "u@a:80", "a?b",  "a#b",       "a\tb",         "a\"b",     "a<b",     "a\\b",
        "a^b",    "a{b",  "a|b",       "a`b",          "\xc3\xa9", "%4",      "%zz",
        "a%",     "[zz]", "[::1",      "::1",          "[::1]x",   "[::1]:x", "a[",
        "a]b",    "[a]",  "[1.2.3.4]", "[::1%25eth0]", "[v1]",     "[v.x]",   "[]"}) {
    EXPECT_EQ(answer_however_split(with_host(host)), error(400, Variant::close_11))
        << testing::PrintToString(std::string(host));
  }
  // HTTP/1.0 needs no Host, but one it sends is checked as well.
  EXPECT_EQ(answer_however_split("GET / HTTP/1.0\r\nHost: a b\r\n\r\n"),
            error(400, Variant::close_10));
}

// RFC 9112 section 3.2.2: an absolute-form target is routed by its path, and
// the Host header (which must still be there, and valid) is ignored.
TEST_F(ConformanceTest, AbsoluteFormIsRoutedByItsPath) {
  const std::string root = route("/", Variant::keep_alive_11);
  const std::string json = route("/json", Variant::keep_alive_11);
  const std::string host = "Host: a\r\n";
  EXPECT_EQ(answer_however_split(get("http://x/", host)), root);
  EXPECT_EQ(answer_however_split(get("HTTP://x", host)), root);
  EXPECT_EQ(answer_however_split(get("hTtPs://x:8080?q=1", host)), root);
  EXPECT_EQ(answer_however_split(get("https://x/json?q=/", "Host: b\r\n")), json);
  EXPECT_EQ(answer_however_split(get("http://[::1]:80/json", host)), json);
  EXPECT_EQ(answer_however_split(get("http://x/json", "Host:\r\n")), json)
      << "the Host of an absolute-form request may be empty";
  EXPECT_EQ(answer_however_split(get("http://" + std::string(300, 'x') + "/json", host)), json)
      << "a long authority is not part of the path";
  EXPECT_EQ(answer_however_split(get("http://x/nope", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("ftp://x/", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("httpx://x/", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("*", host)), error(404, Variant::keep_alive_11));
  // The authority of an http URI is a host (RFC 9110 section 4.2.1), with no
  // userinfo (section 4.2.4).
  for (const char* target : {"http://", "http:///", "http://:80/", "http://u@x/", "http://x:8a/",
                             "https://[::1/", "http://x:80:80"}) {
    EXPECT_EQ(answer_however_split(get(target, host)), error(400, Variant::close_11)) << target;
  }
  EXPECT_EQ(answer_however_split(get("http://x/", "")), error(400, Variant::close_11))
      << "HTTP/1.1 still needs a Host";
  EXPECT_EQ(answer_however_split(get("http://x/", "Host: a b\r\n")), error(400, Variant::close_11))
      << "and a valid one";
}

// RFC 9112 section 3.2: no form of request target has a fragment (origin-form
// is absolute-path ["?" query], and an absolute-URI has none either), so a
// '#' anywhere in it is a malformed request line: 400 and close.
TEST_F(ConformanceTest, AFragmentInTheTargetIs400) {
  const std::string bad = error(400, Variant::close_11);
  for (const std::string& target : std::vector<std::string>{
           "/#x", "/#", "/json#x", "/json?q#x", "/?#", "/json?a=1&b=2#f", "http://x/#y",
           "http://x#y", "http://x?q#y", "HTTPS://x:80/json#", "*#", "ftp://x/#y", "http:#/",
           "/" + std::string(200, 'a') + "#x", "/" + std::string(200, 'a') + "?q#x"}) {
    EXPECT_EQ(answer_however_split(get(target, "Host: a\r\n")), bad) << target;
  }
  // The bytes around a '#' that is not in the target are fine.
  EXPECT_EQ(answer_however_split(get("/json?q=%23", "Host: a\r\nX-A: #\r\n")),
            route("/json", Variant::keep_alive_11));
}

// RFC 9110 section 2.5: a recipient that implements a major version should
// process a higher minor one as the highest it implements, as nginx does:
// HTTP/1.2 to 1.9 are answered as HTTP/1.1, with its keep-alive and Host
// rules. (llhttp 8.1 refuses them in strict mode unless told not to.)
TEST_F(ConformanceTest, HigherMinorVersionsAreAnsweredAsHttp11) {
  for (int minor = 2; minor <= 9; ++minor) {
    std::string version = "HTTP/1." + std::to_string(minor);
    EXPECT_EQ(
        answer_however_split("GET / " + version + "\r\nHost: a\r\n\r\n" + std::string(kGet11)),
        route("/", Variant::keep_alive_11) + route("/", Variant::keep_alive_11))
        << version;
    EXPECT_EQ(
        answer_however_split("GET /json " + version + "\r\nHost: a\r\nConnection: close\r\n\r\n" +
                             std::string(kGet11)),
        route("/json", Variant::close_11))
        << version;
    EXPECT_EQ(answer_however_split("GET / " + version + "\r\n\r\n"), error(400, Variant::close_11))
        << version << " needs a Host, as HTTP/1.1 does";
  }
}

// Other versions keep their answers: another major version is 505, a
// malformed one 400 or 505 as before.
TEST_F(ConformanceTest, OtherVersionsKeepTheirAnswers) {
  for (const char* version : {"HTTP/2.0", "HTTP/0.9", "HTTP/3.1", "HTTP/0.0", "HTTP/9.9",
                              "HTTP/1.2x", "HTTP/1.20", "HTTP/a.1"}) {
    EXPECT_EQ(answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n"),
              error(505, Variant::close_11))
        << version;
  }
  for (const char* version : {"HTTP/1.x", "HTTP/1.10", "HTTP/1.1x", "HTTP/1.", "HTTP/1", "HTTP/11",
                              "HTTP/1.1 x", "http/1.1", "HTTP/1.1\n"}) {
    EXPECT_EQ(answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n"),
              error(400, Variant::close_11))
        << version;
  }
}

// llhttp 8.1 has no limit on chunk extensions (RFC 9112 section 7.1.1), which
// the reader discards: each counts the bytes of its name and value and 2
// for its ';' and '=' against --max-header-bytes, with the head and the
// trailers. Past it: 413 at once, without waiting for the size line to end.
TEST_F(ConformanceTest, ChunkExtensionsCountAgainstTheHeadLimit) {
  Limits limits;
  limits.max_header_bytes = 200;
  Session session(table_, sink_, limits);
  // The head counts 38 bytes: "/" (1), "Host" "a" and "Transfer-Encoding"
  // "chunked" (29) and the 4 bytes around each of the two lines.
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string too_large = error(413, Variant::close_11);
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  // "a" (1), ';' and '=' (2) and the value (159): 200 bytes in all.
  const std::string at_limit = "1;a=" + std::string(159, 'b');
  EXPECT_EQ(
      answer_however_split(session, head + at_limit + "\r\nx\r\n0\r\n\r\n" + std::string(kGet11)),
      ok);
  EXPECT_EQ(answer_however_split(session, head + at_limit + "b"), too_large);
  // Many short names, on one chunk or on several, and on the last chunk.
  EXPECT_EQ(
      answer_however_split(session, head + "1" + test::repeat(";a", 54) + "\r\nx\r\n0\r\n\r\n"),
      error(405, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(session, head + "1" + test::repeat(";a", 55)), too_large);
  EXPECT_EQ(answer_however_split(session, head + test::repeat("1;aaaaaaaaaaaa\r\nx\r\n", 12)),
            too_large);
  EXPECT_EQ(answer_however_split(session, head + "0;a=" + std::string(160, 'b')), too_large);
  // A quoted value counts with its quotes.
  EXPECT_EQ(answer_however_split(session, head + "1;a=\"" + std::string(158, ' ') + "\""),
            too_large);
}

// The connection that sent "1;a=" and gigabytes of extension bytes: with
// the default limits it is answered within the first 16 KiB.
TEST_F(ConformanceTest, AnEndlessChunkExtensionIs413WithinTheHeadLimit) {
  std::string out;
  std::string start = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;a=";
  Fed fed = session_.feed(start.data(), start.size(), out);
  const std::string piece(4096, 'b');
  int pieces = 0;
  while (fed.next != Fed::Next::close && pieces < 1000) {
    fed = session_.feed(piece.data(), piece.size(), out);
    ++pieces;
  }
  EXPECT_EQ(out, error(413, Variant::close_11));
  EXPECT_EQ(pieces, 4) << "16384 bytes of the head and the extension";
}

// llhttp 8.1.0, as Debian 12 ships it, refuses some valid chunk extensions
// (RFC 9112 section 7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name
// [ BWS "=" BWS chunk-ext-val ] )): a second extension after a value that is
// a token, and any whitespace. The client gets 400 and a close
// (docs/hardening.md). If this test fails, llhttp has learned them: update
// docs/hardening.md.
TEST_F(ConformanceTest, ChunkExtensionsLlhttp81TakesAndRefuses) {
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  for (const char* ext : {";a", ";a=b", ";a;b", ";a;c=d", ";a=\"b c\"", ";a=\"b\";c=d", ";a="}) {
    EXPECT_EQ(answer_however_split(head + "1" + ext + "\r\nx\r\n0" + ext + "\r\n\r\n" +
                                   std::string(kGet11)),
              ok)
        << ext;
  }
  for (const char* ext : {";a=b;c=d", ";a=b;c", "; a=b", ";a =b", ";a= b", " ;a=b", ";a=b\t"}) {
    EXPECT_EQ(answer_however_split(head + "1" + ext + "\r\nx\r\n0\r\n\r\n"),
              error(400, Variant::close_11))
        << ext;
  }
}

class EchoVersionSessionTest : public ConformanceTest {
 protected:
  static Persona echoing() {
    Persona p = test::kTestPersona;
    p.echo_version = true;
    return p;
  }
  EchoVersionSessionTest() : ConformanceTest(persona_) {}
  static inline const Persona persona_ = echoing();
};

// A persona that answers in the request's version (gunicorn, aiohttp) says
// HTTP/1.1 to HTTP/1.2 to 1.9, the version it answers as.
TEST_F(EchoVersionSessionTest, AHigherMinorVersionIsAnsweredInHttp11) {
  EXPECT_EQ(answer_however_split("GET / HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
  for (const char* version : {"HTTP/1.2", "HTTP/1.5", "HTTP/1.9"}) {
    std::string out = answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n");
    EXPECT_EQ(out, route("/", Variant::keep_alive_11)) << version;
    EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
  }
}

}  // namespace
}  // namespace hello
