// The HTTP/1 session with routes from a file: overrides, JSON routes and the echo.
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

}  // namespace
}  // namespace hello
