// The admin port's live page (docs/observability.md): / answers the page
// compiled from common/observe/live_page.html, byte for byte, with headers
// that keep a browser from caching it or loading anything else; /stats has
// the fields the page draws from. Chromium drives the page itself in
// tests/observability/live_page_test.py.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <simdjson.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

const std::string kPageFile = std::string(HELLO_SOURCE_DIR) + "/common/observe/live_page.html";

std::string admin(int port, std::string_view method, std::string_view target) {
  Client c(port);
  c.send(std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: a\r\n\r\n");
  return c.read_to_eof(2s).value_or("");
}

std::string head_of(const std::string& r) {
  return r.substr(0, r.find("\r\n\r\n") + 2);
}

std::string body_of(const std::string& r) {
  size_t at = r.find("\r\n\r\n");
  return at == std::string::npos ? "" : r.substr(at + 4);
}

// The CSP hash source of the page's one element `tag` (its text between
// the tags), as a browser computes it: 'sha256-' and the base64 digest.
std::string hash_source(const std::string& page, const std::string& tag) {
  size_t begin = page.find("<" + tag + ">") + tag.size() + 2;
  std::string text = page.substr(begin, page.find("</" + tag + ">") - begin);
  unsigned char digest[32];
  size_t length = 0;
  if (EVP_Q_digest(nullptr, "SHA256", nullptr, text.data(), text.size(), digest, &length) != 1)
    return "(no digest)";
  unsigned char base64[45];
  EVP_EncodeBlock(base64, digest, static_cast<int>(length));
  return "'sha256-" + std::string(reinterpret_cast<char*>(base64)) + "'";
}

class LivePageTest : public ::testing::Test {
 protected:
  LivePageTest()
      : admin_port_(free_port()),
        server_("sanic", {"-w", "2", "--admin", "127.0.0.1:" + std::to_string(admin_port_)}) {}

  // /stats, parsed into `doc` (which `parser_` owns).
  bool stats(simdjson::dom::element& doc) {
    json_ = body_of(admin(admin_port_, "GET", "/stats"));
    return parser_.parse(json_).get(doc) == simdjson::SUCCESS;
  }

  int admin_port_;
  ServerProcess server_;
  std::string json_;
  simdjson::dom::parser parser_;
};

TEST_F(LivePageTest, TheRootIsThePageWithItsHeaders) {
  std::string r = admin(admin_port_, "GET", "/");
  std::string page = read_file(kPageFile);
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(body_of(r), page) << "the page is the file, compiled in";
  EXPECT_LT(page.size(), 20u * 1024) << "the page is small";
  std::string head = head_of(r);
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_NE(head.find("\r\nContent-Type: text/html; charset=utf-8\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Length: " + std::to_string(page.size()) + "\r\n"),
            std::string::npos)
      << head;
  EXPECT_NE(head.find("\r\nCache-Control: no-store\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Security-Policy: default-src 'none'; script-src " +
                      hash_source(page, "script") + "; style-src " + hash_source(page, "style") +
                      "; connect-src 'self'; img-src data:; base-uri 'none'; "
                      "form-action 'none'; frame-ancestors 'none'\r\n"),
            std::string::npos)
      << head;
  EXPECT_NE(head.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos) << head;

  // HEAD: the same head, no body; another method: 405.
  std::string h = admin(admin_port_, "HEAD", "/");
  EXPECT_EQ(h, head + "\r\n");
  std::string post = admin(admin_port_, "POST", "/");
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 ")) << post;
  EXPECT_NE(post.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << post;
  EXPECT_EQ(post.find("Content-Security-Policy"), std::string::npos) << post;
  EXPECT_TRUE(admin(admin_port_, "GET", "/?x=1").starts_with("HTTP/1.1 200 OK\r\n"));
}

// The page names nothing outside itself: no URL, and every src or href a
// data: URL. (The browser's own requests are checked by the Chromium test.)
TEST_F(LivePageTest, ThePageRefersToNothingElsewhere) {
  std::string page = read_file(kPageFile);
  EXPECT_EQ(page.find("://"), std::string::npos);
  std::regex reference(R"((src|href|action)\s*=\s*["']?([^"' >]*))", std::regex::icase);
  int references = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), reference);
       it != std::sregex_iterator(); ++it, ++references)
    EXPECT_TRUE((*it)[2].str().starts_with("data:")) << (*it)[0];
  EXPECT_EQ(references, 1) << "the one reference: the empty icon, so no /favicon.ico";
  // Its one request: /stats, from its own origin.
  EXPECT_NE(page.find("fetch(\"/stats\""), std::string::npos);
  EXPECT_NE(page.find("id: \"rps\""), std::string::npos) << "the request rate's element id";
}

TEST_F(LivePageTest, StatsHasTheClockOpenConnectionsLoopIdleAndTheLastSecond) {
  simdjson::dom::element doc;
  ASSERT_TRUE(stats(doc)) << json_;
  EXPECT_EQ(std::string_view(doc["persona"]), "sanic");
  double uptime = doc["uptime_s"];
  EXPECT_GT(uptime, 0);
  Client c(server_.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(stats(doc)) << json_;
  double later = doc["uptime_s"];
  EXPECT_GE(later - uptime, 0.09) << json_;
  EXPECT_EQ(int64_t(doc["total"]["open"]), 1) << json_;
  EXPECT_EQ(int64_t(doc["workers"].at(0)["open"]) + int64_t(doc["workers"].at(1)["open"]), 1);
  for (size_t w = 0; w < 2; ++w) {
    double idle = doc["workers"].at(w)["loop_idle_s"];
    EXPECT_GT(idle, 0) << json_;
    EXPECT_LE(idle, later) << json_;
  }

  // The window starts again at a reset; the clock goes on.
  ASSERT_TRUE(admin(admin_port_, "POST", "/stats/reset").starts_with("HTTP/1.1 200"));
  ASSERT_TRUE(stats(doc)) << json_;
  EXPECT_LT(double(doc["window_s"]), 0.5) << json_;
  EXPECT_GE(double(doc["uptime_s"]), later) << json_;
  EXPECT_LT(double(doc["total"]["loop_idle_s"]), 1.0) << json_;

  // A second holds one request, then the next second none.
  auto recent = [&](int64_t& count, double& seconds) {
    if (!stats(doc)) return false;
    count = doc["recent"]["service_time_us"]["count"];
    seconds = doc["recent"]["seconds"];
    return true;
  };
  int64_t count = 0;
  double seconds = 0;
  auto deadline = std::chrono::steady_clock::now() + scaled(8s);
  // First a quiet second (not the first, which has no figures yet), so
  // that the next holds only the request below.
  while (recent(count, seconds) && (count != 0 || seconds == 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  ASSERT_EQ(count, 0) << json_;
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
  while (recent(count, seconds) && count == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  EXPECT_EQ(count, 1) << json_;
  EXPECT_NEAR(seconds, 1.0, 0.5) << json_;
  while (recent(count, seconds) && count != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  EXPECT_EQ(count, 0) << "a quiet second: " << json_;
}

}  // namespace
}  // namespace hello::test
