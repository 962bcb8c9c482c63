// Counts heap allocations on the request path after warm-up, in the heart
// alone (no sockets): none are allowed, for HTTP/1, HTTP/2, the JSON echo
// and shaped answers. The counter: allocation_count.cc.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "h2_frames.h"
#include "http1/session.h"
#include "http2/h2_session.h"
#include "http_bytes.h"
#include "observe/access_log.h"
#include "server/worker.h"
#include "test_persona.h"
#include "test_time.h"
#include "tls/tls_context.h"
#include "tls/tls_memory.h"

#include "allocation_count.h"

namespace hello {
namespace {

TEST(Allocation, TheHeartAllocatesNothingPerRequest) {
  ResponseTable table(test::kTestPersona, {});
  WorkerStats stats;
  Accounting sink(stats);
  Session session(table, sink);
  std::string out;
  out.reserve(64 * 1024);
  const std::string pipeline = test::repeat(kRequest, 16);
  auto exchange = [&](int n) {
    std::string_view in = n == 1 ? kRequest : pipeline;
    out.clear();
    return session.feed(in.data(), in.size(), out).next == Fed::Next::read;
  };
  EXPECT_EQ(steady_state_allocations(exchange, {1000, 100}, {10000, 1000}), 0u);
  EXPECT_EQ(stats.requests.get(), 1000u + 1600u + 10000u + 16000u);
}

// nghttp2's client, outside the counting: requests out as bytes, the
// server's frames in (its WINDOW_UPDATEs keep the server's windows open).
struct H2TestClient {
  nghttp2_session* session = nullptr;
  H2TestClient() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_client_new(&session, cb, nullptr);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~H2TestClient() { nghttp2_session_del(session); }
  std::string requests(int n, const char* path = "/") {
    auto fields = test::h2_request("GET", path);
    for (int i = 0; i < n; ++i)
      nghttp2_submit_request(session, nullptr, fields.data(), fields.size(), nullptr, nullptr);
    return test::h2_queued(session);
  }
  void input(const std::string& bytes) {
    nghttp2_session_mem_recv(session, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
};

// The HTTP/2 session, the heart alone: batches of streams on one
// connection, nghttp2's memory recycled (base/recycled.h).
TEST(Allocation, TheHttp2SessionAllocatesNothingPerRequest) {
  ResponseTable table(test::kTestPersona, {});
  H2Answers answers(table);
  WorkerStats stats;
  Accounting sink(stats);
  H2Session session(table, answers, sink);
  H2TestClient client;
  std::string out;
  out.reserve(256 * 1024);
  uint64_t counted = 0;
  auto run = [&](int batches, int per_batch, bool count) {
    for (int b = 0; b < batches; ++b) {
      std::string in = client.requests(per_batch);
      out.clear();
      bool open = true;
      uint64_t n = allocations_in(
          [&] { open = session.feed(in.data(), in.size(), out).next != Fed::Next::close; });
      ASSERT_TRUE(open);
      if (count) counted += n;
      client.input(out);
    }
  };
  run(200, 16, false);  // warm-up
  run(500, 16, true);
  run(500, 1, true);
  RecordProperty("allocations", std::to_string(counted));
  EXPECT_EQ(counted, 0u);
  EXPECT_EQ(stats.requests.get(), 3200u + 8000u + 500u);
  EXPECT_EQ(stats.responses_2xx.get(), stats.requests.get());
}

// Shaped answers in the HTTP/2 session: fields made per request from the
// persona's templates (status, length, a shape's fields, the decision),
// pattern bodies, and 400s for a bad parameter.
TEST(Allocation, ShapedAnswersAllocateNothingPerRequestInTheHttp2Session) {
  TableOptions options;
  options.shape = true;
  ResponseTable table(test::kTestPersona, options);
  H2Answers answers(table);
  WorkerStats stats;
  Accounting sink(stats);
  Dice dice(1);
  H2Setup setup{&answers, &dice};
  H2Session session(table, setup, sink);
  H2TestClient client;
  std::string out;
  out.reserve(256 * 1024);
  const char* kPaths[] = {
      "/?status=503:20,404:5,204:5&size=2000:50,64:10&close=0&header=X-A:b&header=X-C:d%20e",
      "/json?status=201&size=10:50", "/?status=99"};
  uint64_t counted = 0;
  auto run = [&](int rounds, bool count) {
    for (int r = 0; r < rounds; ++r)
      for (const char* path : kPaths) {
        std::string in = client.requests(4, path);
        out.clear();
        bool open = true;
        uint64_t n = allocations_in(
            [&] { open = session.feed(in.data(), in.size(), out).next != Fed::Next::close; });
        ASSERT_TRUE(open);
        if (count) counted += n;
        client.input(out);
      }
  };
  run(100, false);  // warm-up
  run(1000, true);
  RecordProperty("allocations", std::to_string(counted));
  EXPECT_EQ(counted, 0u);
  EXPECT_EQ(stats.shaped.get(), 2u * 4u * 1100u);
  EXPECT_EQ(stats.shape_errors.get(), 4u * 1100u);
}

// The JSON echo of a route file: a ~1 KiB document, with Content-Length and
// chunked, parsed and minified per request.
TEST(Allocation, TheJsonEchoAllocatesNothingPerRequest) {
  std::vector<FileRoute> routes{test::echo_route()};
  TableOptions options;
  options.routes = &routes;
  ResponseTable table(test::kTestPersona, options);
  WorkerStats stats;
  Accounting sink(stats);
  Session session(table, sink);
  std::string doc = "{\"items\": [";
  for (int i = 0; i < 40; ++i)
    doc += (i ? ", " : "") + std::string("{\"id\": ") + std::to_string(i) + "}";
  doc += "], \"note\": \"x y z\"}";
  std::string request = test::post(doc) + test::chunked_post({doc});
  std::string out;
  out.reserve(64 * 1024);
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      out.clear();
      ASSERT_EQ(session.feed(request.data(), request.size(), out).next, Fed::Next::read);
    }
  };
  run(100);  // warm-up: the parser and buffers grow to this document
  uint64_t allocations = allocations_in([&] { run(5000); });
  RecordProperty("allocations", std::to_string(allocations));
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(stats.responses_2xx.get(), 2u * 5100u);
  EXPECT_NE(out.find("{\"id\":39}],\"note\":\"x y z\"}"), std::string::npos) << out;
}

// Shaped answers in the heart: a query with every parameter (mixes,
// headers, a drip), and the same in X-Hello-Shape, with their delays resumed
// as a connection would. Parsing, deciding and assembling allocate nothing.
TEST(Allocation, ShapedAnswersAllocateNothingPerRequestInTheHeart) {
  TableOptions options;
  options.shape = true;
  ResponseTable table(test::kTestPersona, options);
  WorkerStats stats;
  Accounting sink(stats);
  Dice dice(1);
  Session session(table, sink, {}, &dice);
  std::string out;
  out.reserve(64 * 1024);
  std::string request =
      "GET /?delay=100us:30,2ms:5&status=503:20,404:5,204:5&size=2000:50,64:10&close=0"
      "&header=X-A:b&header=X-C:d%20e&drip=1ms&unknown=1 HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /json HTTP/1.1\r\nHost: a\r\nX-Hello-Shape: status=201&size=10:50\r\n\r\n"
      "GET /?status=99 HTTP/1.1\r\nHost: a\r\n\r\n";
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      std::string_view in = request;
      while (!in.empty()) {
        out.clear();
        Fed fed = session.feed(in.data(), in.size(), out);
        size_t parsed = fed.consumed;
        if (fed.next == Fed::Next::later) fed = session.resume(out);
        ASSERT_EQ(fed.next, Fed::Next::read);
        in.remove_prefix(parsed);
      }
    }
  };
  run(200);  // warm-up
  uint64_t allocations = allocations_in([&] { run(5000); });
  RecordProperty("allocations", std::to_string(allocations));
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(stats.shaped.get(), 2u * 5200u);
  EXPECT_EQ(stats.shape_errors.get(), 5200u);
}

}  // namespace
}  // namespace hello
