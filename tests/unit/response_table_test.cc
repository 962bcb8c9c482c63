#include "response_table.h"

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

TEST(ResponseTable, KeepAliveOptionOverridesAlwaysClose) {
  Persona p = kTestPersona;
  p.always_close = true;
  EXPECT_TRUE(ResponseTable(p, {}).policy().always_close);
  EXPECT_FALSE(ResponseTable(p, {.keep_alive = true}).policy().always_close);
}

}  // namespace
}  // namespace hello
