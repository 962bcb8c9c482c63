#include "persona/routes_file.h"

#include "http/route_path.h"

#include <gtest/gtest.h>
#include <llhttp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace hello {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHead = "Server: test\r\n{extra}Content-Length: {length}\r\n";

class RoutesFileTest : public ::testing::Test {
 protected:
  // Writes `text` to a file of this test and loads it.
  bool load(const std::string& text) {
    std::ofstream(path_) << text;
    return load_routes(path_, "text/plain", kHead, routes_, error_, ShapeLimits{60000000});
  }
  void TearDown() override { fs::remove(path_); }

  static std::string temp_file() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');  // parameterised names have one
    return (fs::temp_directory_path() /
            ("routes-" + std::to_string(getpid()) + "-" + name + ".json"))
        .string();
  }

  const std::string path_ = temp_file();
  std::vector<FileRoute> routes_;
  std::string error_;
};

TEST_F(RoutesFileTest, EveryFieldOfAGoodFile) {
  ASSERT_TRUE(load(R"({"routes": [
    {"method": "GET", "path": "/health", "body": "ok\n"},
    {"method": "PUT", "path": "/v1/thing", "status": 201,
     "headers": [["X-B", "2"], ["Content-Type", "application/vnd.x+json"], ["X-A", "1"]],
     "json": {"a": [1, 2.5, "x y"], "b": null,   "c": true}},
    {"method": "POST", "path": "/echo", "echo": "json"},
    {"method": "DELETE", "path": "/gone", "status": 410, "body": ""}
  ]})"))
      << error_;
  ASSERT_EQ(routes_.size(), 4u);

  EXPECT_EQ(routes_[0].method, HTTP_GET);
  EXPECT_EQ(routes_[0].path, "/health");
  EXPECT_EQ(routes_[0].status, 200);
  EXPECT_EQ(routes_[0].kind, FileRoute::Kind::body);
  EXPECT_EQ(routes_[0].content, "ok\n");
  EXPECT_EQ(routes_[0].content_type, "text/plain");

  EXPECT_EQ(routes_[1].method, HTTP_PUT);
  EXPECT_EQ(routes_[1].status, 201);
  EXPECT_EQ(routes_[1].kind, FileRoute::Kind::json);
  EXPECT_EQ(routes_[1].content, R"({"a":[1,2.5,"x y"],"b":null,"c":true})");
  // The route's own Content-Type stays in its place among the headers, and
  // the persona's line gets no value.
  EXPECT_EQ(routes_[1].content_type, "");
  ASSERT_EQ(routes_[1].headers.size(), 3u);
  EXPECT_EQ(routes_[1].headers[0], std::make_pair(std::string("X-B"), std::string("2")));
  EXPECT_EQ(routes_[1].headers[1],
            std::make_pair(std::string("Content-Type"), std::string("application/vnd.x+json")));
  EXPECT_EQ(routes_[1].headers[2], std::make_pair(std::string("X-A"), std::string("1")));

  EXPECT_EQ(routes_[2].method, HTTP_POST);
  EXPECT_EQ(routes_[2].kind, FileRoute::Kind::echo);
  EXPECT_EQ(routes_[2].content_type, "application/json");

  EXPECT_EQ(routes_[3].method, HTTP_DELETE);
  EXPECT_EQ(routes_[3].status, 410);
  EXPECT_EQ(routes_[3].content, "");
}

struct BadFile {
  const char* name;
  const char* text;
  const char* says;  // in the message, after the position
  const char* at;    // "line:column" expected in the message
};

class BadRoutesFileTest : public RoutesFileTest, public ::testing::WithParamInterface<BadFile> {};

TEST_P(BadRoutesFileTest, IsOneLineWithThePositionAndTheReason) {
  const BadFile& bad = GetParam();
  EXPECT_FALSE(load(bad.text));
  EXPECT_EQ(error_.find('\n'), std::string::npos) << error_;
  EXPECT_EQ(error_.rfind(path_ + ":", 0), 0u) << error_;
  EXPECT_NE(error_.find(bad.says), std::string::npos) << error_;
  EXPECT_NE(error_.find(path_ + ":" + bad.at + ":"), std::string::npos) << error_;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadRoutesFileTest,
    ::testing::Values(
        // simdjson's messages, at the token where parsing stopped.
        BadFile{"MissingComma", "{\"routes\": [\n  {\"method\": \"GET\" \"path\": \"/\"}]}",
                "improper structure", "2:20"},
        BadFile{"BadLiteral", "{\"routes\": [\n  {\"method\": tru}]}",
                "atom starting with the letter 't'", "2:14"},
        BadFile{"TrailingText", "{\"routes\": []} x", "", "1:16"},
        BadFile{"DelayWithoutUnit",
                "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\", \"body\": \"\", "
                "\"delay\": \"5\"}]}",
                "bad \"delay\" \"5\": no unit (us, ms or s)", "2:46"},
        BadFile{
            "NegativeDelay",
            "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\", \"body\": \"\", \"delay\": "
            "\"-1ms\"}]}",
            "bad \"delay\" \"-1ms\": negative", "2:46"},
        BadFile{"DelayNotAString",
                "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\", \"body\": \"\", "
                "\"delay\": 5}]}",
                "\"delay\" must be a string", "2:46"},
        BadFile{
            "DelayOverTheMaximum",
            "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\", \"body\": \"\", \"delay\": "
            "\"60.000001s\"}]}",
            "\"delay\" 60.000001s is over --max-delay 60s", "2:46"},
        BadFile{"ByteOrderMark", "\xef\xbb\xbf{\"routes\": []}", "byte order mark", "1:1"},
        BadFile{"UnclosedArray", "{\"routes\": [\n", "improper structure", "1:13"},
        BadFile{"UnclosedString", "{\"routes\": [\n  {\"method\": \"GET}]}\n", "never closed",
                "2:14"},
        BadFile{"ControlCharInString", "{\"routes\": [\n  {\"path\": \"/a\tb\"}]}",
                "must be escaped", "2:15"},
        BadFile{"BadUtf8", "{\"routes\": [\n  {\"path\": \"/\xff\"}]}", "UTF-8", "2:14"},
        BadFile{"NotAnObject", "[1, 2]", "must hold a JSON object", "1:1"},
        BadFile{"UnknownTopKey", "{\"routes\": [], \"extra\": 1}", "unknown key \"extra\"", "1:16"},
        BadFile{"NoRoutes", "{}", "missing key \"routes\"", "1:1"},
        BadFile{"RoutesTwice", "{\"routes\": [], \"routes\": []}", "given twice", "1:16"},
        BadFile{"KeyTwice",
                "{\"routes\": [{\"method\": \"GET\", \"method\": \"PUT\", \"path\": \"/\", "
                "\"body\": \"\"}]}",
                "key \"method\" given twice", "1:31"},
        BadFile{"UnknownKey",
                "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\",\n   \"bdy\": \"x\"}]}",
                "unknown key \"bdy\"", "3:4"},
        BadFile{"MissingPath", "{\"routes\": [\n  {\"method\": \"GET\", \"body\": \"x\"}]}",
                "missing key \"path\"", "2:3"},
        BadFile{"MissingMethod", "{\"routes\": [{\"path\": \"/\", \"body\": \"x\"}]}",
                "missing key \"method\"", "1:13"},
        BadFile{
            "TwoContents",
            "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"x\", \"json\": 1}]}",
            "exactly one of", "1:13"},
        BadFile{"NoContent", "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\"}]}",
                "exactly one of", "1:13"},
        BadFile{"StatusTooLow",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": 99, \"body\": "
                "\"\"}]}",
                "bad status 99", "1:44"},
        BadFile{"StatusTooHigh",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": 600, \"body\": "
                "\"\"}]}",
                "bad status 600", "1:44"},
        BadFile{"StatusNoBody",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": 204, \"body\": "
                "\"\"}]}",
                "bad status 204", "1:44"},
        BadFile{"StatusAsString",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": \"200\", "
                "\"body\": \"\"}]}",
                "must be an integer", "1:44"},
        BadFile{"Duplicate",
                "{\"routes\": [\n {\"method\": \"GET\", \"path\": \"/a\", \"body\": \"1\"},\n"
                " {\"method\": \"GET\", \"path\": \"/a\", \"body\": \"2\"}]}",
                "duplicate route GET /a", "3:2"},
        BadFile{"HeaderWithCrLf",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"X-A\", \"1\\r\\nX-B: 2\"]]}]}",
                "has CR or LF", "2:2"},
        BadFile{"HeaderWithLf",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"X-A\", \"a\\nb\"]]}]}",
                "has CR or LF", "2:2"},
        BadFile{"HeaderNameNotAToken",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"X A\", \"1\"]]}]}",
                "bad header name", "2:2"},
        BadFile{"HeaderTheServerSends",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"content-length\", \"1\"]]}]}",
                "is the server's to send", "2:2"},
        BadFile{"HeaderThePersonaSends",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"server\", \"x\"]]}]}",
                "persona already sends", "2:2"},
        BadFile{"ContentTypeTwice",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"Content-Type\", \"a/b\"], [\"content-type\", \"c/d\"]]}]}",
                "header \"content-type\" given twice", "2:2"},
        BadFile{"UnknownMethod",
                "{\"routes\": [{\"method\": \"get\", \"path\": \"/\", \"body\": \"\"}]}",
                "HTTP method", "1:14"},
        BadFile{"PathWithQuery",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/a?b\", \"body\": \"\"}]}",
                "plain path", "1:31"},
        BadFile{"EchoOnGet",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/e\", \"echo\": \"json\"}]}",
                "POST, PUT or PATCH", "1:13"},
        BadFile{"Status199",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": 199, \"body\": "
                "\"\"}]}",
                "bad status 199", "1:44"},
        BadFile{"Status304",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"status\": 304, \"body\": "
                "\"\"}]}",
                "bad status 304", "1:44"},
        BadFile{"PathWithSpace",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/a b\", \"body\": \"\"}]}",
                "plain path", "1:31"},
        BadFile{"PathWithFragment",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/a#b\", \"body\": \"\"}]}",
                "plain path", "1:31"},
        BadFile{"PathWithDel",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/a\\u007fb\", \"body\": \"\"}]}",
                "plain path", "1:31"},
        BadFile{"HeaderWithControlChar",
                "{\"routes\": [{\"method\": \"GET\", \"path\": \"/\", \"body\": \"\",\n"
                " \"headers\": [[\"X-A\", \"a\\u0001b\"]]}]}",
                "header \"X-A\" has a control character in its value", "2:2"},
        BadFile{"EchoOfText",
                "{\"routes\": [{\"method\": \"POST\", \"path\": \"/e\", \"echo\": \"text\"}]}",
                "\"echo\" must be \"json\"", "1:46"}),
    [](const ::testing::TestParamInfo<BadFile>& info) { return std::string(info.param.name); });

// One list of the headers the server sends itself (common/http/field_syntax.h)
// serves the route file and shaping's `header=`: each refuses every name on
// it, the framing and connection headers, Date and the shaping decision.
TEST_F(RoutesFileTest, NoRouteSetsAHeaderTheServerSendsItself) {
  for (const char* name : {"Content-Length", "transfer-encoding", "Connection", "Keep-Alive",
                           "DATE", "X-Hello-Shape-Decision"}) {
    EXPECT_FALSE(load(std::string(R"({"routes": [{"method": "GET", "path": "/", "body": "",
      "headers": [[")") +
                      name + R"(", "x"]]}]})"))
        << name;
    EXPECT_NE(error_.find("header \"" + std::string(name) + "\" is the server's to send"),
              std::string::npos)
        << error_;
  }
  EXPECT_TRUE(load(R"({"routes": [{"method": "GET", "path": "/", "body": "",
    "headers": [["X-Date", "x"], ["X-Hello-Shape", "x"]]}]})"))
      << error_;
}

TEST_F(RoutesFileTest, ADelayIsKeptInMicroseconds) {
  ASSERT_TRUE(load(R"({"routes": [
    {"method": "GET", "path": "/a", "body": "", "delay": "250us"},
    {"method": "GET", "path": "/b", "body": "", "delay": "1.5s"},
    {"method": "POST", "path": "/c", "echo": "json", "delay": "0"},
    {"method": "GET", "path": "/d", "body": ""}]})"))
      << error_;
  ASSERT_EQ(routes_.size(), 4u);
  EXPECT_EQ(routes_[0].delay_us, 250u);
  EXPECT_EQ(routes_[1].delay_us, 1500000u);
  EXPECT_EQ(routes_[2].delay_us, 0u);
  EXPECT_EQ(routes_[3].delay_us, 0u);
}

// Each limit's last good value is taken: statuses 200 and 599, a path of
// kMaxPath bytes, a delay of exactly --max-delay, an echo on PUT and
// PATCH, a tab in a header value, one path under two methods.
TEST_F(RoutesFileTest, TheEdgesOfEachLimitAreAccepted) {
  const std::string longest = "/" + std::string(kMaxPath - 1, 'p');
  ASSERT_TRUE(load(R"({"routes": [
    {"method": "GET", "path": "/a", "status": 200, "body": ""},
    {"method": "POST", "path": "/a", "status": 599, "body": ""},
    {"method": "GET", "path": ")" +
                   longest + R"(", "body": ""},
    {"method": "PUT", "path": "/e", "echo": "json", "delay": "60s"},
    {"method": "PATCH", "path": "/e", "echo": "json",
     "headers": [["X-Tab", "a\tb"]]}]})"))
      << error_;
  ASSERT_EQ(routes_.size(), 5u);
  EXPECT_EQ(routes_[0].status, 200);
  EXPECT_EQ(routes_[1].status, 599);
  EXPECT_EQ(routes_[2].path, longest);
  EXPECT_EQ(routes_[3].delay_us, 60000000u);
  EXPECT_EQ(routes_[4].headers[0].second, "a\tb");
}

// One byte over kMaxPath, the first step past each edge above.
TEST_F(RoutesFileTest, APathOneByteOverTheLimitIsRefused) {
  EXPECT_FALSE(load(R"({"routes": [{"method": "GET", "path": "/)" + std::string(kMaxPath, 'p') +
                    R"(", "body": ""}]})"));
  EXPECT_NE(error_.find("\"path\" is longer than " + std::to_string(kMaxPath) + " bytes"),
            std::string::npos)
      << error_;
}

// A persona's template line may start with a slot ({extra}); the header
// named after it is still one the persona sends.
TEST_F(RoutesFileTest, AHeaderThePersonaSendsAfterASlotIsRefused) {
  std::ofstream(path_) << R"({"routes": [{"method": "GET", "path": "/", "body": "",
    "headers": [["X-Powered-By", "me"]]}]})";
  EXPECT_FALSE(load_routes(path_, "text/plain", "{extra}{connection}X-Powered-By: Express\r\n",
                           routes_, error_, ShapeLimits{60000000}));
  EXPECT_NE(error_.find("header \"X-Powered-By\" is one the persona already sends"),
            std::string::npos)
      << error_;
  EXPECT_TRUE(load_routes(path_, "text/plain", "{extra}X-Other: 1\r\n", routes_, error_,
                          ShapeLimits{60000000}))
      << error_;
}

TEST_F(RoutesFileTest, AMissingFileSaysSo) {
  std::vector<FileRoute> routes;
  std::string error;
  EXPECT_FALSE(load_routes("/nonexistent/routes.json", "text/plain", kHead, routes, error));
  EXPECT_NE(error.find("/nonexistent/routes.json: cannot read"), std::string::npos) << error;
}

}  // namespace
}  // namespace hello

namespace hello {
namespace {

// "echo": "websocket" (docs/websocket.md): a GET alone, with nothing that
// shapes an HTTP answer.
class WsRoutesFileTest : public RoutesFileTest {};

TEST_F(WsRoutesFileTest, AWebSocketEchoIsAGetRoute) {
  ASSERT_TRUE(load(R"({"routes": [{"method": "GET", "path": "/chat", "echo": "websocket"}]})"))
      << error_;
  ASSERT_EQ(routes_.size(), 1u);
  EXPECT_EQ(routes_[0].kind, FileRoute::Kind::websocket);
  EXPECT_EQ(routes_[0].path, "/chat");
}

TEST_F(WsRoutesFileTest, AWebSocketEchoTakesNoOtherMethodNorAnythingOfAnHttpAnswer) {
  for (const char* route :
       {R"({"method": "POST", "path": "/c", "echo": "websocket"})",
        R"({"method": "GET", "path": "/c", "echo": "websocket", "status": 201})",
        R"({"method": "GET", "path": "/c", "echo": "websocket", "delay": "1ms"})",
        R"({"method": "GET", "path": "/c", "echo": "websocket", "shape": "size=1"})",
        R"({"method": "GET", "path": "/c", "echo": "websocket",
                                "headers": [["X-A", "1"]]})"}) {
    EXPECT_FALSE(load(std::string(R"({"routes": [)") + route + "]}")) << route;
    EXPECT_NE(error_.find("a WebSocket echo is a GET"), std::string::npos) << error_;
  }
  EXPECT_FALSE(load(R"({"routes": [{"method": "GET", "path": "/c", "echo": "sse"}]})"));
  EXPECT_NE(error_.find("\"echo\" must be \"json\" or \"websocket\""), std::string::npos) << error_;
}

}  // namespace
}  // namespace hello
