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

#include "h2_frames.h"
#include "test_persona.h"

namespace hello {
namespace {

// What the client heard on one stream.
struct Heard {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;
  int data_frames = 0;
  bool ended = false;
  uint32_t reset = 0xffffffff;  // RST_STREAM's code, if one came
};

// nghttp2's client: requests out as bytes, the server's bytes in.
class H2Client {
 public:
  H2Client() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~H2Client() { nghttp2_session_del(session_); }

  int32_t request(const char* method, const char* path) {
    auto fields = test::h2_request(method, path);
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr,
                                  nullptr);
  }
  // The preface and every frame queued, as bytes.
  std::string output() { return test::h2_queued(session_); }
  bool input(const std::string& bytes) {
    return nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                    bytes.size()) == static_cast<ssize_t>(bytes.size());
  }
  std::map<int32_t, Heard> streams;
  bool goaway = false;
  uint32_t max_concurrent = 0;

 private:
  static H2Client& of(void* p) { return *static_cast<H2Client*>(p); }
  static int on_header(nghttp2_session*, const nghttp2_frame* f, const uint8_t* n, size_t nl,
                       const uint8_t* v, size_t vl, uint8_t, void* p) {
    of(p).streams[f->hd.stream_id].fields.emplace_back(
        std::string(reinterpret_cast<const char*>(n), nl),
        std::string(reinterpret_cast<const char*>(v), vl));
    return 0;
  }
  static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* d, size_t n, void* p) {
    of(p).streams[id].body.append(reinterpret_cast<const char*>(d), n);
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* f, void* p) {
    H2Client& c = of(p);
    if (f->hd.type == NGHTTP2_GOAWAY) c.goaway = true;
    if (f->hd.type == NGHTTP2_RST_STREAM)
      c.streams[f->hd.stream_id].reset = f->rst_stream.error_code;
    if (f->hd.type == NGHTTP2_SETTINGS && (f->hd.flags & NGHTTP2_FLAG_ACK) == 0)
      for (size_t i = 0; i < f->settings.niv; ++i)
        if (f->settings.iv[i].settings_id == NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
          c.max_concurrent = f->settings.iv[i].value;
    if (f->hd.type == NGHTTP2_DATA) ++c.streams[f->hd.stream_id].data_frames;
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0)
      c.streams[f->hd.stream_id].ended = true;
    return 0;
  }
  nghttp2_session* session_ = nullptr;
};

class H2SessionTest : public ::testing::Test {
 protected:
  explicit H2SessionTest(const Persona& p = test::kTestPersona)
      : table_(p, {}), answers_(table_), session_(table_, answers_, sink_) {}

  // The client's queued bytes to the session, and its answer back.
  bool exchange() {
    std::string out;
    std::string in = client_.output();
    bool open = session_.feed(in.data(), in.size(), out);
    EXPECT_TRUE(client_.input(out));
    return open;
  }

  ResponseTable table_;
  H2Answers answers_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  H2Session session_;
  H2Client client_;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

// The test persona's head, "Date, Content-Type, Content-Length", in HTTP/2 form.
Fields fields_of(const Heard& h) {
  Fields f = h.fields;
  for (auto& [n, v] : f)
    if (n == "date") v = "DATE";
  return f;
}

TEST_F(H2SessionTest, AnswersAGetWithThePersonasFieldsInHttp2Form) {
  int32_t id = client_.request("GET", "/");
  EXPECT_TRUE(exchange());
  const Heard& h = client_.streams[id];
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
  const Heard& h = client_.streams[id];
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
  EXPECT_FALSE(session_.feed(garbage.data(), garbage.size(), out));
}

class H2FramedTest : public H2SessionTest {
 protected:
  H2FramedTest() : H2SessionTest(test::kTestFramedPersona) {}
};

TEST_F(H2FramedTest, AChunkedBodyIsSentWholeWithoutTransferEncoding) {
  int32_t id = client_.request("GET", "/chunked");
  EXPECT_TRUE(exchange());
  const Heard& h = client_.streams[id];
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
