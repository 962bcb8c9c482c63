// The HTTP/2 session over bytes, against nghttp2's own client session: the
// persona's answers in HTTP/2 form (lower-case names in the persona's
// order, no connection-specific fields, a chunked body sent whole), 404
// and 405, streams answered in one feed, HEAD without DATA, and a bad
// preface ending the session with GOAWAY.
#include "http2/h2_session.h"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "h2_client.h"
#include "test_persona.h"

namespace hello {
namespace {

class H2SessionTest : public ::testing::Test {
 protected:
  explicit H2SessionTest(const Persona& p = test::kTestPersona)
      : table_(p, {}), answers_(table_), session_(table_, answers_, sink_) {}

  // The client's queued bytes to the session, and its answer back.
  bool exchange() {
    std::string out;
    std::string in = client_.output();
    bool open = session_.feed(in.data(), in.size(), out).next != Fed::Next::close;
    EXPECT_TRUE(client_.input(out));
    return open;
  }

  ResponseTable table_;
  H2Answers answers_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  H2Session session_;
  test::H2Client client_;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

// The test persona's head, "Date, Content-Type, Content-Length", in HTTP/2 form.
Fields fields_of(const test::Heard& h) {
  Fields f = h.fields;
  for (auto& [n, v] : f)
    if (n == "date") v = "DATE";
  return f;
}

TEST_F(H2SessionTest, AnswersAGetWithThePersonasFieldsInHttp2Form) {
  int32_t id = client_.request("GET", "/");
  EXPECT_TRUE(exchange());
  const test::Heard& h = client_.streams[id];
  EXPECT_EQ(fields_of(h), (Fields{{":status", "200"},
                                  {"date", "DATE"},
                                  {"content-type", "text/plain"},
                                  {"content-length", "8"}}));
  EXPECT_EQ(h.body, "Hello!!!");
  EXPECT_TRUE(h.ended);
  EXPECT_EQ(client_.max_concurrent, H2Session::kMaxConcurrentStreams);
  EXPECT_EQ(stats_.requests.get(), 1u);
  EXPECT_EQ(stats_.responses_2xx.get(), 1u);
}

TEST_F(H2SessionTest, TheDateIsTheTablesCurrentOne) {
  table_.set_date(0);  // Thu, 01 Jan 1970 00:00:00 GMT
  int32_t id = client_.request("GET", "/");
  EXPECT_TRUE(exchange());
  ASSERT_GE(client_.streams[id].fields.size(), 2u);
  EXPECT_EQ(client_.streams[id].fields[1],
            (std::pair<std::string, std::string>{"date", "Thu, 01 Jan 1970 00:00:00 GMT"}));
}

TEST_F(H2SessionTest, HeadGetsTheFieldsAndNoData) {
  int32_t id = client_.request("HEAD", "/json");
  EXPECT_TRUE(exchange());
  const test::Heard& h = client_.streams[id];
  ASSERT_FALSE(h.fields.empty());
  EXPECT_EQ(h.fields[0].second, "200");
  EXPECT_EQ(h.data_frames, 0);
  EXPECT_TRUE(h.ended) << "END_STREAM on the HEADERS";
}

TEST_F(H2SessionTest, AnUnknownPathIs404AndAKnownOneWithAnotherMethod405) {
  int32_t missing = client_.request("GET", "/nope");
  int32_t post = client_.request("DELETE", "/");
  EXPECT_TRUE(exchange());
  ASSERT_FALSE(client_.streams[missing].fields.empty());
  EXPECT_EQ(client_.streams[missing].fields[0].second, "404");
  EXPECT_EQ(client_.streams[missing].body, "404 Not Found");
  ASSERT_FALSE(client_.streams[post].fields.empty());
  EXPECT_EQ(client_.streams[post].fields[0].second, "405");
  Fields f = client_.streams[post].fields;
  EXPECT_NE(
      std::find(f.begin(), f.end(), std::pair<std::string, std::string>{"allow", "GET, HEAD"}),
      f.end());
  EXPECT_EQ(stats_.responses_4xx.get(), 2u);
}

TEST_F(H2SessionTest, ManyStreamsInOneReadAreAllAnswered) {
  std::vector<int32_t> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(client_.request("GET", i % 2 ? "/" : "/json"));
  EXPECT_TRUE(exchange());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(client_.streams[ids[i]].ended) << i;
    EXPECT_EQ(client_.streams[ids[i]].body, i % 2 ? "Hello!!!" : "{\"hello\":\"world\"}") << i;
  }
  EXPECT_EQ(stats_.requests.get(), 50u);
}

TEST_F(H2SessionTest, ABadPrefaceEndsTheSession) {
  std::string out;
  std::string garbage = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  EXPECT_EQ(session_.feed(garbage.data(), garbage.size(), out).next, Fed::Next::close);
}

class H2FramedTest : public H2SessionTest {
 protected:
  H2FramedTest() : H2SessionTest(test::kTestFramedPersona) {}
};

TEST_F(H2FramedTest, AChunkedBodyIsSentWholeWithoutTransferEncoding) {
  int32_t id = client_.request("GET", "/chunked");
  EXPECT_TRUE(exchange());
  const test::Heard& h = client_.streams[id];
  EXPECT_EQ(h.body, "{\"hello\":\"world\"}");
  for (const auto& [name, value] : h.fields) {
    EXPECT_NE(name, "transfer-encoding");
    EXPECT_NE(name, "connection");
  }
}

TEST(H2Answers, ConnectionSpecificFieldsAreLeftOutAndNamesLowerCased) {
  PreparedResponse r;
  r.bytes =
      "HTTP/1.1 200 OK\r\nServer: x\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
      "Transfer-Encoding: chunked\r\nX-Mixed-Case: v\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  r.head_length = static_cast<uint32_t>(r.bytes.find("\r\n\r\n") + 4);
  r.date_offset = -1;
  r.status = 200;
  H2Answer a = H2Answers::convert(r);
  a.bind();
  EXPECT_TRUE(a.ready);
  EXPECT_EQ(a.names, (std::vector<std::string>{"server", "x-mixed-case"}));
  EXPECT_EQ(a.body, "abcde");
  ASSERT_EQ(a.fields.size(), 3u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(a.fields[0].name), a.fields[0].namelen),
            ":status");
}

}  // namespace
}  // namespace hello
