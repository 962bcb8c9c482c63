#include "persona/response_table.h"

#include <gtest/gtest.h>
#include <llhttp.h>

#include <vector>

#include "test_persona.h"

namespace hello {
namespace {

using test::kTestPersona;

std::string head_of(const PreparedResponse& r) {
  return r.bytes.substr(0, r.head_length);
}

TEST(ResponseTable, BuildsStatusLineHeadersAndBody) {
  ResponseTable t(kTestPersona, {});
  t.set_date(784111777);
  const PreparedResponse& r = t.route(t.find_route("/"), Variant::keep_alive_11);
  EXPECT_EQ(r.bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\n"
            "Content-Length: 8\r\n\r\nHello!!!");
  EXPECT_EQ(r.head_length, r.bytes.size() - 8);
  EXPECT_EQ(r.status, 200);
}

TEST(ResponseTable, EachVariantCarriesItsConnectionHeader) {
  ResponseTable t(kTestPersona, {});
  int root = t.find_route("/");
  EXPECT_NE(head_of(t.route(root, Variant::keep_alive_10)).find("Connection: keep-alive\r\n"),
            std::string::npos);
  EXPECT_EQ(head_of(t.route(root, Variant::close_10)).find("Connection:"), std::string::npos);
  EXPECT_EQ(head_of(t.route(root, Variant::keep_alive_11)).find("Connection:"), std::string::npos);
  EXPECT_NE(head_of(t.route(root, Variant::close_11)).find("Connection: close\r\n"),
            std::string::npos);
}

TEST(ResponseTable, SetDatePatchesEveryResponseInPlace) {
  ResponseTable t(kTestPersona, {});
  t.set_date(0);
  std::string before = t.error(404, Variant::keep_alive_11).bytes;
  t.set_date(784111777);
  std::string after = t.error(404, Variant::keep_alive_11).bytes;
  EXPECT_NE(before.find("Thu, 01 Jan 1970 00:00:00 GMT"), std::string::npos);
  EXPECT_NE(after.find("Sun, 06 Nov 1994 08:49:37 GMT"), std::string::npos);
  EXPECT_EQ(before.size(), after.size());
}

TEST(ResponseTable, ErrorsUseFormatAndAllow) {
  ResponseTable t(kTestPersona, {});
  const PreparedResponse& r = t.error(405, Variant::keep_alive_11);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.bytes.substr(0, 32), "HTTP/1.1 405 Method Not Allowed\r");
  EXPECT_NE(head_of(r).find("Allow: GET, HEAD\r\nContent-Length: 22\r\n"), std::string::npos);
  EXPECT_EQ(r.bytes.substr(r.head_length), "405 Method Not Allowed");
}

TEST(ResponseTable, FatalErrorsSayCloseEvenWhereTheFrameworkIsSilent) {
  // The test persona sends no Connection header on a closing HTTP/1.0
  // response, but a 400 must still announce the close.
  ResponseTable t(kTestPersona, {});
  EXPECT_NE(head_of(t.error(400, Variant::close_10)).find("Connection: close\r\n"),
            std::string::npos);
  EXPECT_EQ(head_of(t.error(404, Variant::close_10)).find("Connection:"), std::string::npos);
}

TEST(ResponseTable, UnknownErrorStatusFallsBackTo400) {
  ResponseTable t(kTestPersona, {});
  EXPECT_EQ(t.error(418, Variant::close_11).status, 400);
}

TEST(ResponseTable, JsonOptionSwapsTheRootBody) {
  ResponseTable t(kTestPersona, {.json = true});
  const PreparedResponse& r = t.route(t.find_route("/"), Variant::keep_alive_11);
  EXPECT_EQ(r.bytes.substr(r.head_length), "{\"hello\":\"world\"}");
  EXPECT_NE(head_of(r).find("Content-Type: application/json\r\n"), std::string::npos);
}

TEST(ResponseTable, ReasonStylesAndVersionEcho) {
  Persona p = kTestPersona;
  p.reasons = ReasonStyle::upper;
  p.echo_version = true;
  ResponseTable upper(p, {});
  EXPECT_EQ(upper.error(404, Variant::close_10).bytes.substr(0, 24), "HTTP/1.0 404 NOT FOUND\r\n");
  EXPECT_EQ(upper.error(404, Variant::close_11).bytes.substr(0, 24), "HTTP/1.1 404 NOT FOUND\r\n");
  p.reasons = ReasonStyle::none;
  ResponseTable none(p, {});
  EXPECT_EQ(none.route(0, Variant::close_11).bytes.substr(0, 15), "HTTP/1.1 200 \r\n");
}

TEST(ResponseTable, FindRouteIsExact) {
  ResponseTable t(kTestPersona, {});
  EXPECT_EQ(t.find_route("/"), 0);
  EXPECT_EQ(t.find_route("/json"), 1);
  EXPECT_EQ(t.find_route("/json/"), -1);
  EXPECT_EQ(t.find_route(""), -1);
}

// A route file that adds a method to a persona path: that path's 405 lists
// both, the persona's GET (with HEAD) and the file's POST.
TEST(ResponseTable, AllowListsEveryMethodOfAPathSharedWithTheFile) {
  std::vector<FileRoute> file(1);
  file[0].method = HTTP_POST;
  file[0].path = "/json";
  file[0].content_type = "text/plain";
  file[0].content = "posted";
  TableOptions o;
  o.routes = &file;
  ResponseTable t(kTestPersona, o);
  RouteMatch put = t.match("/json", HTTP_PUT);
  EXPECT_EQ(put.route, -1);
  ASSERT_TRUE(put.path_known);
  std::string r = t.not_allowed(put.path_route, Variant::keep_alive_11).bytes;
  EXPECT_NE(r.find("\r\nAllow: GET, POST, HEAD\r\n"), std::string::npos) << r;
  // The persona's other path keeps the persona's line.
  RouteMatch root = t.match("/", HTTP_PUT);
  EXPECT_EQ(t.not_allowed(root.path_route, Variant::keep_alive_11).bytes,
            t.error(405, Variant::keep_alive_11).bytes);
}

// Tomcat's answer to a body written without a length: one chunk on
// HTTP/1.1, where the connection stays as the client asked.
TEST(ResponseTable, ChunkedBodyIsOneChunkOnHttp11) {
  ResponseTable t(test::kTestFramedPersona, {});
  t.set_date(784111777);
  int chunked = t.find_route("/chunked");
  const PreparedResponse& r = t.route(chunked, Variant::keep_alive_11);
  EXPECT_EQ(r.bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            "11\r\n{\"hello\":\"world\"}\r\n0\r\n\r\n");
  EXPECT_EQ(r.bytes.substr(r.head_length), "11\r\n{\"hello\":\"world\"}\r\n0\r\n\r\n");
  EXPECT_FALSE(r.closes);
  const PreparedResponse& close = t.route(chunked, Variant::close_11);
  EXPECT_NE(head_of(close).find("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"),
            std::string::npos)
      << close.bytes;
  EXPECT_EQ(close.bytes.substr(close.head_length), r.bytes.substr(r.head_length));
}

// HTTP/1.0 has no chunks: the same body is ended by closing, even when the
// client asked to keep the connection, and the keep-alive variant says close.
TEST(ResponseTable, ChunkedBodyIsEndedByCloseOnHttp10) {
  Persona p = test::kTestFramedPersona;
  p.connection.close_10 = "Connection: close\r\n";
  ResponseTable t(p, {});
  t.set_date(784111777);
  int chunked = t.find_route("/chunked");
  for (Variant v : {Variant::keep_alive_10, Variant::close_10}) {
    const PreparedResponse& r = t.route(chunked, v);
    EXPECT_EQ(r.bytes,
              "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
              "Content-Type: application/json\r\nConnection: close\r\n\r\n"
              "{\"hello\":\"world\"}")
        << static_cast<int>(v);
    EXPECT_TRUE(r.closes) << static_cast<int>(v);
  }
}

TEST(ResponseTable, CloseFramedBodyClosesInEveryVariant) {
  ResponseTable t(test::kTestFramedPersona, {});
  t.set_date(784111777);
  int close = t.find_route("/close");
  EXPECT_EQ(t.route(close, Variant::keep_alive_11).bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "Content-Type: text/plain\r\nConnection: close\r\n\r\nbye");
  EXPECT_EQ(t.route(close, Variant::close_11).bytes, t.route(close, Variant::keep_alive_11).bytes);
  // The test persona's HTTP/1.0 close is silent: that is its close layout.
  EXPECT_EQ(t.route(close, Variant::keep_alive_10).bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "Content-Type: text/plain\r\n\r\nbye");
  for (int i = 0; i < kVariants; ++i) {
    const PreparedResponse& r = t.route(close, static_cast<Variant>(i));
    EXPECT_TRUE(r.closes) << i;
    EXPECT_EQ(r.bytes.substr(r.head_length), "bye") << i;
  }
  // A body with a length keeps the connection as the client asked.
  EXPECT_FALSE(t.route(t.find_route("/"), Variant::keep_alive_11).closes);
  EXPECT_FALSE(t.route(t.find_route("/"), Variant::keep_alive_10).closes);
}

// Tomcat's HEAD of a body without a length: no framing line, no body, and
// the connection follows the usual rules (nothing needs the close).
TEST(ResponseTable, HeadOfABodyWithoutLengthHasNoFramingLine) {
  ResponseTable t(test::kTestFramedPersona, {});
  t.set_date(784111777);
  struct {
    const char* path;
    const char* type;
  } cases[] = {{"/chunked", "application/json"}, {"/close", "text/plain"}};
  for (const auto& c : cases) {
    int route = t.find_route(c.path);
    for (int i = 0; i < kVariants; ++i) {
      Variant v = static_cast<Variant>(i);
      const PreparedResponse& head = t.route(route, v, true);
      EXPECT_EQ(head.head_length, head.bytes.size()) << c.path << i;
      EXPECT_FALSE(head.closes) << c.path << i;
      EXPECT_EQ(head.bytes.find("Transfer-Encoding"), std::string::npos) << c.path << i;
      EXPECT_EQ(head.bytes.find("Content-Length"), std::string::npos) << c.path << i;
    }
    EXPECT_EQ(t.route(route, Variant::keep_alive_10, true).bytes,
              "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: " +
                  std::string(c.type) + "\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_EQ(t.route(route, Variant::keep_alive_11, true).bytes,
              "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: " +
                  std::string(c.type) + "\r\n\r\n");
  }
  // A body with a length: HEAD sends the head of the GET answer itself.
  int root = t.find_route("/");
  EXPECT_EQ(&t.route(root, Variant::keep_alive_11, true), &t.route(root, Variant::keep_alive_11));
}

TEST(ResponseTable, SetDatePatchesTheHeadAnswersToo) {
  ResponseTable t(test::kTestFramedPersona, {});
  t.set_date(784111777);
  const PreparedResponse& head = t.route(t.find_route("/chunked"), Variant::keep_alive_11, true);
  ASSERT_GE(head.date_offset, 0);
  EXPECT_EQ(head.bytes.substr(head.date_offset, 29), "Sun, 06 Nov 1994 08:49:37 GMT");
  t.set_date(0);
  EXPECT_EQ(head.bytes.substr(head.date_offset, 29), "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST(ResponseTable, FatalErrorsCloseAndOthersDoNot) {
  ResponseTable t(kTestPersona, {});
  for (int i = 0; i < kVariants; ++i) {
    Variant v = static_cast<Variant>(i);
    EXPECT_TRUE(t.error(400, v).closes) << i;
    EXPECT_TRUE(t.error(413, v).closes) << i;
    EXPECT_FALSE(t.error(404, v).closes) << i;
    EXPECT_FALSE(t.error(405, v).closes) << i;
    EXPECT_FALSE(t.error(417, v).closes) << i;
  }
}

// A route file's Content-Type is one of its headers, sent where the file
// puts it among them; the persona's Content-Type line is left out.
TEST(ResponseTable, FileContentTypeKeepsItsPlaceAmongTheFileHeaders) {
  std::vector<FileRoute> file(2);
  file[0].path = "/after";
  file[0].headers = {{"X-Probe", "1"}, {"Content-Type", "text/csv"}};
  file[1].path = "/before";
  file[1].headers = {{"content-type", "text/csv"}, {"X-Probe", "1"}};
  for (FileRoute& f : file) {
    f.method = HTTP_GET;
    f.content = "a,b";
  }
  TableOptions o;
  o.routes = &file;
  ResponseTable t(kTestPersona, o);
  t.set_date(784111777);
  EXPECT_EQ(t.route(t.find_route("/after"), Variant::keep_alive_11).bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Probe: 1\r\n"
            "Content-Type: text/csv\r\nContent-Length: 3\r\n\r\na,b");
  EXPECT_EQ(t.route(t.find_route("/before"), Variant::keep_alive_11).bytes,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\ncontent-type: text/csv\r\n"
            "X-Probe: 1\r\nContent-Length: 3\r\n\r\na,b");
}

TEST(ResponseTable, KeepAliveOptionOverridesAlwaysClose) {
  Persona p = kTestPersona;
  p.always_close = true;
  EXPECT_TRUE(ResponseTable(p, {}).policy().always_close);
  EXPECT_FALSE(ResponseTable(p, {.keep_alive = true}).policy().always_close);
}

}  // namespace
}  // namespace hello

namespace hello {
namespace {

constexpr Persona kWsTestPersona = [] {
  Persona p = test::kTestPersona;
  p.websocket.path = "/ws";
  p.websocket.switching =
      "HTTP/1.1 101 \r\nDate: {date}\r\nSec-WebSocket-Accept: {accept}\r\n"
      "{extensions}\r\n";
  return p;
}();

// A route file's WebSocket echoes (docs/websocket.md) are the WebSocket
// table's paths, not HTTP routes; one at a persona's path replaces its GET.
TEST(ResponseTable, ARouteFilesWebSocketEchoesAreWebSocketPaths) {
  std::vector<FileRoute> file(2);
  file[0].method = HTTP_GET;
  file[0].path = "/chat";
  file[0].kind = FileRoute::Kind::websocket;
  file[1].method = HTTP_GET;
  file[1].path = "/";
  file[1].kind = FileRoute::Kind::websocket;
  TableOptions options;
  options.routes = &file;
  ResponseTable t(kWsTestPersona, options);
  ASSERT_NE(t.websocket(), nullptr);
  EXPECT_TRUE(t.websocket()->has_path("/ws"));
  EXPECT_TRUE(t.websocket()->has_path("/chat"));
  EXPECT_TRUE(t.websocket()->has_path("/"));
  EXPECT_FALSE(t.websocket()->has_path("/json"));
  EXPECT_EQ(t.find_route("/chat"), -1);
  EXPECT_EQ(t.find_route("/"), -1) << "the file's WebSocket echo replaces the persona's GET /";
  EXPECT_GE(t.find_route("/json"), 0);
}

TEST(ResponseTable, TheSwitchingAnswerHasTheAcceptAndTheDatePatched) {
  ResponseTable t(kWsTestPersona, {});
  std::string out;
  t.websocket()->append_switching(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", false);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 101 \r\nDate: ")) << out;
  EXPECT_NE(out.find(" GMT\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace hello
