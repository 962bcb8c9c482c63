// Counts heap allocations on the request path after warm-up: none are
// allowed, in the heart alone and in a real worker over loopback. malloc
// and operator new are replaced in this binary only (it is not built with
// sanitizers, which replace them too).
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

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

void note() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  note();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void free(void* p) {
  __libc_free(p);
}
// simdjson's buffers are aligned; aligned operator new comes here too.
int posix_memalign(void** p, size_t align, size_t n) {
  note();
  *p = __libc_memalign(align, n);
  return *p != nullptr || n == 0 ? 0 : ENOMEM;
}
void* aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
}

void* operator new(size_t n) {
  note();
  if (void* p = __libc_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  __libc_free(p);
}
void operator delete[](void* p) noexcept {
  __libc_free(p);
}
void operator delete(void* p, size_t) noexcept {
  __libc_free(p);
}
void operator delete[](void* p, size_t) noexcept {
  __libc_free(p);
}

namespace hello {
namespace {

constexpr std::string_view kRequest = test::kWrkRequest;

// Counts the allocations `work` makes.
template <typename Work>
uint64_t allocations_in(Work work) {
  allocations = 0;
  counting = true;
  work();
  counting = false;
  return allocations.load();
}

struct Rounds {
  int singles;  // exchanges of one request
  int batches;  // exchanges of 16 pipelined requests (or streams)
};

// The steady state the tests judge: `warm_up` rounds of exchange(1) and
// exchange(16) (each true if every answer came back), then `counted` ones,
// whose allocations are returned and recorded for scripts/bench
// --performance, which reads the JSON report.
template <typename Exchange>
uint64_t steady_state_allocations(Exchange exchange, Rounds warm_up, Rounds counted) {
  auto run = [&](Rounds r) {
    for (int i = 0; i < r.singles; ++i)
      if (!exchange(1)) return false;
    for (int i = 0; i < r.batches; ++i)
      if (!exchange(16)) return false;
    return true;
  };
  EXPECT_TRUE(run(warm_up));
  bool answered = false;
  uint64_t n = allocations_in([&] { answered = run(counted); });
  EXPECT_TRUE(answered);
  ::testing::Test::RecordProperty("allocations", std::to_string(n));
  return n;
}

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

// Sends `request` and reads until `expected` bytes of answers have arrived.
bool round_trip(int fd, const char* request, size_t length, size_t expected, char* buf,
                size_t size) {
  if (send(fd, request, length, MSG_NOSIGNAL) != static_cast<ssize_t>(length)) return false;
  size_t got = 0;
  while (got < expected) {
    ssize_t n = recv(fd, buf, size, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return got == expected;
}

// `rounds` times: sends `in` on every connection of `fds`, then reads
// `expected` bytes of answers from each.
void pipeline_rounds(const std::vector<int>& fds, const std::string& in, size_t expected,
                     int rounds, char* buf, size_t size) {
  for (int r = 0; r < rounds; ++r) {
    for (int fd : fds)
      ASSERT_EQ(send(fd, in.data(), in.size(), MSG_NOSIGNAL), static_cast<ssize_t>(in.size()));
    for (int fd : fds) {
      size_t got = 0;
      while (got < expected) {
        ssize_t n = recv(fd, buf, size, 0);
        ASSERT_GT(n, 0);
        got += static_cast<size_t>(n);
      }
      ASSERT_EQ(got, expected);
    }
  }
}

// Starts `worker` on its own thread, listening on a free loopback port;
// returns the address to connect to.
struct sockaddr_in start_on_loopback(Worker& worker) {
  struct sockaddr_in sa {};
  EXPECT_EQ(worker.init(), 0);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(worker.listen(reinterpret_cast<struct sockaddr*>(&sa)), 0);
  sa.sin_port = htons(static_cast<uint16_t>(worker.port()));
  worker.start(-1, nullptr);
  return sa;
}

// `n` client sockets connected to `sa`.
std::vector<int> connect_all(const struct sockaddr_in& sa, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    fds.push_back(socket(AF_INET, SOCK_STREAM, 0));
    EXPECT_EQ(connect(fds.back(), reinterpret_cast<const struct sockaddr*>(&sa), sizeof sa), 0);
  }
  return fds;
}

// Sends `in` on `fd` and reads its `answers` answers, the last of them the
// root's ("Hello!!!"): the length of one round's answers, learnt from the
// first; 0 if they did not come in 1,000 reads.
size_t first_round_length(int fd, const std::string& in, size_t answers, char* buf, size_t size) {
  if (send(fd, in.data(), in.size(), 0) != static_cast<ssize_t>(in.size())) return 0;
  size_t got = 0;
  auto whole = [&] {
    std::string_view seen(buf, got);
    size_t count = 0;
    for (size_t at = 0; (at = seen.find("HTTP/1.1 ", at)) != std::string_view::npos; ++at) ++count;
    return count == answers && seen.ends_with("Hello!!!");
  };
  for (int i = 0; i < 1000 && !whole(); ++i) {
    ssize_t n = recv(fd, buf + got, size - got, 0);
    if (n <= 0) return 0;
    got += static_cast<size_t>(n);
  }
  return whole() ? got : 0;
}

TEST(Allocation, AWorkerAllocatesNothingPerRequestOverLoopback) {
  Worker worker(test::kTestPersona, {}, {}, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  // The length of one answer, learnt from the first.
  char buf[65536];
  ASSERT_EQ(send(fd, kRequest.data(), kRequest.size(), 0), static_cast<ssize_t>(kRequest.size()));
  ssize_t one = recv(fd, buf, sizeof buf, 0);
  ASSERT_GT(one, 0);
  const std::string pipeline = test::repeat(kRequest, 16);
  auto exchange = [&](int n) {
    std::string_view in = n == 1 ? kRequest : pipeline;
    return round_trip(fd, in.data(), in.size(), n * one, buf, sizeof buf);
  };
  EXPECT_EQ(steady_state_allocations(exchange, {1000, 100}, {10000, 1000}), 0u);
  close(fd);
  worker.stop(false);
  worker.join();
}

// As the servers do first thing in main: OpenSSL's blocks recycled.
const bool kRecycled = recycle_tls_memory();

// The same over TLS: once the handshake is done, a request and its answer
// cost no allocation, on the server or in OpenSSL (the client's side is
// counted too: the same process, and OpenSSL's blocks recycled for both).
// What the handshake itself allocates is reported, not judged.
bool tls_round_trip(SSL* ssl, const char* request, size_t length, size_t expected, char* buf,
                    size_t size) {
  size_t written = 0;
  if (SSL_write_ex(ssl, request, length, &written) != 1 || written != length) return false;
  size_t got = 0;
  while (got < expected) {
    size_t n = 0;
    if (SSL_read_ex(ssl, buf, size, &n) != 1) return false;
    got += n;
  }
  return got == expected;
}

TEST(Allocation, TlsAllocatesNothingPerRequestAfterTheHandshake) {
  ASSERT_TRUE(kRecycled);
  std::string error;
  TlsOptions tls_options;
  tls_options.enabled = true;
  std::unique_ptr<TlsContext> tls = TlsContext::create(tls_options, "", {"localhost"}, error);
  ASSERT_TRUE(tls) << error;
  WorkerOptions options;
  options.tls = tls.get();
  Worker worker(test::kTestPersona, {}, options, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);

  SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, nullptr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  SSL* ssl = SSL_new(client_ctx);
  SSL_set_fd(ssl, fd);
  uint64_t handshake = allocations_in([&] { ASSERT_EQ(SSL_connect(ssl), 1); });
  RecordProperty("handshake_allocations", std::to_string(handshake));
  char buf[65536];
  size_t written = 0;
  ASSERT_EQ(SSL_write_ex(ssl, kRequest.data(), kRequest.size(), &written), 1);
  size_t one = 0;
  ASSERT_EQ(SSL_read_ex(ssl, buf, sizeof buf, &one), 1);
  ASSERT_GT(one, 0u);
  const std::string pipeline = test::repeat(kRequest, 16);
  auto exchange = [&](int n) {
    std::string_view in = n == 1 ? kRequest : pipeline;
    return tls_round_trip(ssl, in.data(), in.size(), n * one, buf, sizeof buf);
  };
  EXPECT_EQ(steady_state_allocations(exchange, {1000, 100}, {5000, 500}), 0u);
  SSL_free(ssl);
  close(fd);
  SSL_CTX_free(client_ctx);
  worker.stop(false);
  worker.join();
}

// Answers that wait, over loopback: many connections each pipeline a
// waiting request and 15 others. Once the pools (hearts, held input, timer
// heap) have grown to the peak, nothing is allocated per request.
TEST(Allocation, WaitingAnswersAllocateNothingPerRequest) {
  std::vector<FileRoute> routes{test::text_route("/slow", "slow", 200)};
  Worker worker(test::kTestPersona, TableOptions{.routes = &routes}, {}, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);

  constexpr int kConnections = 32;
  std::vector<int> fds = connect_all(sa, kConnections);
  std::string in = "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n" + test::repeat(kRequest, 15);
  char buf[65536];
  const size_t expected = first_round_length(fds[0], in, 16, buf, sizeof buf);
  ASSERT_GT(expected, 0u);
  auto run = [&](int rounds) { pipeline_rounds(fds, in, expected, rounds, buf, sizeof buf); };
  run(50);  // warm-up
  uint64_t allocations = allocations_in([&] { run(200); });
  RecordProperty("allocations", std::to_string(allocations));
  EXPECT_EQ(allocations, 0u) << "over " << 200 * kConnections * 16 << " requests";
  for (int fd : fds) close(fd);
  worker.stop(false);
  worker.join();
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

// Shaped answers over loopback: a delayed 503 whose 100,000-byte body goes
// out by reference (more than the kernel takes at once, so pending writes
// of pieces), a dripped body and a small one, pipelined on 8 connections.
TEST(Allocation, ShapedAnswersAllocateNothingPerRequestOverLoopback) {
  TableOptions options;
  options.shape = true;
  Worker worker(test::kTestPersona, options, {}, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  constexpr int kConnections = 8;
  std::vector<int> fds = connect_all(sa, kConnections);
  std::string in =
      "GET /?delay=200us&status=503&size=100000&header=X-A:b HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /?drip=2ms&size=50 HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /?size=3 HTTP/1.1\r\nHost: a\r\n\r\n" +
      std::string(kRequest);
  static char buf[1 << 20];
  const size_t expected = first_round_length(fds[0], in, 4, buf, sizeof buf);
  ASSERT_GT(expected, 100000u);
  auto run = [&](int rounds) { pipeline_rounds(fds, in, expected, rounds, buf, sizeof buf); };
  run(20);  // warm-up
  uint64_t allocations = allocations_in([&] { run(100); });
  RecordProperty("allocations", std::to_string(allocations));
  EXPECT_EQ(allocations, 0u) << "over " << 100 * kConnections * 4 << " requests";
  for (int fd : fds) close(fd);
  worker.stop(false);
  worker.join();
}

// The access log on, in each format, into a pipe: pipelined requests of a
// mix (a shaped answer, whose decision the JSON line carries, a 404 with
// quotes, braces and a backslash in its target, a HEAD and the root) over 8
// connections. The pipe is first left unread until the worker's backlog is
// full and lines are dropped: then all of its kMaxBuffers buffers exist,
// the only allocations a log makes. Read from then on, formatting,
// escaping and handing whole buffers to the writer allocate nothing, and
// every line is either read from the pipe or counted as dropped.
void expect_logging_allocates_nothing(LogFormat format) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  auto writer = std::make_unique<LogWriter>(pipe_fds[1], true, 1, format);
  TableOptions options;
  options.shape = true;
  Worker worker(test::kTestPersona, options, {}, 0, writer.get());
  struct sockaddr_in sa = start_on_loopback(worker);
  constexpr int kConnections = 8;
  std::vector<int> fds = connect_all(sa, kConnections);
  std::string in =
      "GET /?status=503&q=%22\\\"x HTTP/1.1\r\nHost: a\r\n\r\n"
      "GET /nope/\"{\\}%ff HTTP/1.1\r\nHost: a\r\n\r\n"
      "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n" +
      std::string(kRequest);
  static char buf[65536];
  const size_t expected = first_round_length(fds[0], in, 4, buf, sizeof buf);
  ASSERT_GT(expected, 0u);
  ASSERT_NE(std::string_view(buf, expected).find(" 503 "), std::string_view::npos);
  auto run = [&](int rounds) { pipeline_rounds(fds, in, expected, rounds, buf, sizeof buf); };
  uint64_t requests = 4;
  // Fill the backlog (4 MiB: some 60,000 CLF lines at most).
  const Counter& dropped = worker.stats().log_lines_dropped;
  for (int i = 0; i < 4000 && dropped.get() == 0; ++i, requests += kConnections * 4) run(1);
  ASSERT_GT(dropped.get(), 0u) << "the backlog never filled";
  // From now on the pipe is read, and its lines counted.
  uint64_t lines = 0, json_lines = 0;
  std::thread reader([&] {
    static char in_pipe[65536];
    bool line_start = true;
    for (ssize_t n; (n = read(pipe_fds[0], in_pipe, sizeof in_pipe)) > 0;)
      for (ssize_t i = 0; i < n; ++i) {
        if (line_start && in_pipe[i] == '{') ++json_lines;
        line_start = in_pipe[i] == '\n';
        if (line_start) ++lines;
      }
  });
  // Until the reader has caught up (bounded): the backlog written, its
  // buffers back. The counted rounds go in steps of 100 (3,200 lines, well
  // under the 4 MiB backlog), each waited out, so that a reader slower than
  // the worker (a loaded machine) cannot make lines drop.
  auto drained = [&] {
    const auto until = std::chrono::steady_clock::now() + test::scaled(std::chrono::seconds(10));
    while (writer->backlog(0) != 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return writer->backlog(0) == 0;
  };
  run(200);  // warm-up: the backlog is written, the buffers come back
  ASSERT_TRUE(drained()) << "the reader never caught up with the backlog";
  uint64_t dropped_before = dropped.get();
  bool caught_up = true;
  uint64_t allocations = allocations_in([&] {
    for (int step = 0; step < 20; ++step) {
      run(100);
      caught_up = drained() && caught_up;
    }
  });
  EXPECT_TRUE(caught_up) << "the reader fell behind by 4 MiB";
  requests += (200 + 2000) * kConnections * 4;
  testing::Test::RecordProperty("allocations", std::to_string(allocations));
  EXPECT_EQ(allocations, 0u) << "over " << 2000 * kConnections * 4 << " requests";
  for (int fd : fds) close(fd);
  worker.stop(false);
  worker.join();
  EXPECT_EQ(dropped.get(), dropped_before) << "lines dropped after the backlog was read";
  ASSERT_TRUE(writer->stop());
  EXPECT_EQ(writer->lines_lost(0), 0u);
  writer.reset();  // closes the pipe: the reader sees its end
  reader.join();
  close(pipe_fds[0]);
  // Nothing lost: every request's line was read, or counted as dropped.
  EXPECT_EQ(lines + dropped.get(), requests);
  EXPECT_EQ(json_lines, format == LogFormat::json ? lines : 0u);
}

TEST(Allocation, TheClfAccessLogAllocatesNothingPerRequest) {
  expect_logging_allocates_nothing(LogFormat::clf);
}

TEST(Allocation, TheJsonAccessLogAllocatesNothingPerRequest) {
  expect_logging_allocates_nothing(LogFormat::json);
}

// nghttp2's client over a socket, its memory recycled as the server's is
// (h2_memory()), so that the client side counted with the server adds
// nothing once warm.
// It sends batches of GET / and reads until each batch's streams ended.
class H2SocketClient {
 public:
  explicit H2SocketClient(int fd, SSL* ssl = nullptr) : fd_(fd), ssl_(ssl) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, void* self) {
          if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
              (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0)
            ++static_cast<H2SocketClient*>(self)->ended_;
          return 0;
        });
    nghttp2_session_callbacks_set_on_header_callback(
        cb, [](nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t name_length,
               const uint8_t* value, size_t value_length, uint8_t, void* self) {
          if (std::string_view(reinterpret_cast<const char*>(name), name_length) == "date")
            static_cast<H2SocketClient*>(self)->saw_date(
                std::string_view(reinterpret_cast<const char*>(value), value_length));
          return 0;
        });
    nghttp2_session_client_new3(&session_, cb, this, nullptr, h2_memory());
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
    buf_.resize(65536);
    out_.reserve(65536);
  }
  ~H2SocketClient() { nghttp2_session_del(session_); }

  // How often the server's Date has changed in the answers read so far.
  uint64_t date_changes() const { return date_changes_; }

  bool batch(int n) {
    auto fields = test::h2_request("GET", "/");
    for (int i = 0; i < n; ++i)
      nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr, nullptr);
    uint64_t want = ended_ + static_cast<uint64_t>(n);
    while (ended_ < want) {
      if (!flush()) return false;
      ssize_t got;
      if (ssl_ != nullptr) {
        size_t m = 0;
        got = SSL_read_ex(ssl_, buf_.data(), buf_.size(), &m) == 1 ? static_cast<ssize_t>(m) : -1;
      } else {
        got = recv(fd_, buf_.data(), buf_.size(), 0);
      }
      if (got <= 0) return false;
      if (nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(buf_.data()),
                                   static_cast<size_t>(got)) < 0)
        return false;
    }
    return flush();  // its WINDOW_UPDATEs
  }

 private:
  bool flush() {
    out_.clear();
    const uint8_t* data = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(session_, &data)) > 0;)
      out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    if (out_.empty()) return true;
    if (ssl_ != nullptr) {
      size_t written = 0;
      return SSL_write_ex(ssl_, out_.data(), out_.size(), &written) == 1;
    }
    return send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out_.size());
  }

  void saw_date(std::string_view date) {
    if (date == std::string_view(date_.data(), date_length_)) return;
    ++date_changes_;
    date_length_ = std::min(date.size(), date_.size());
    std::copy_n(date.begin(), date_length_, date_.begin());
  }

  int fd_;
  SSL* ssl_;
  nghttp2_session* session_ = nullptr;
  uint64_t ended_ = 0;
  std::array<char, 64> date_{};
  size_t date_length_ = 0;
  uint64_t date_changes_ = 0;
  std::string buf_;
  std::string out_;
};

// HTTP/2's steady state over a socket, judged slice by slice: after
// `warm_up`, `slices` slices of `slice` rounds each. Nothing is allocated
// per request: a slice in which the server's Date stayed the same (as the
// client read it) allocates nothing. Once a second the Date changes, and
// HPACK adds the new value to both sides' dynamic tables (a new entry, and
// now and then a larger ring of them, on each side) until the 4,096-byte
// tables are full, a minute into a connection: a slice that saw the Date
// change may allocate at most kPerDateChange per change. Returns the
// allocations of the slices without a change, and checks that those
// slices are at least half of them.
constexpr uint64_t kPerDateChange = 4;
uint64_t h2_steady_state_allocations(H2SocketClient& client, Rounds warm_up, Rounds slice,
                                     int slices) {
  auto run = [&](Rounds r) {
    for (int i = 0; i < r.singles; ++i)
      if (!client.batch(1)) return false;
    for (int i = 0; i < r.batches; ++i)
      if (!client.batch(16)) return false;
    return true;
  };
  EXPECT_TRUE(run(warm_up));
  uint64_t steady = 0, at_changes = 0, changes = 0;
  int steady_slices = 0;
  for (int i = 0; i < slices; ++i) {
    const uint64_t changes_before = client.date_changes();
    bool answered = false;
    uint64_t n = allocations_in([&] { answered = run(slice); });
    EXPECT_TRUE(answered);
    const uint64_t changed = client.date_changes() - changes_before;
    if (changed == 0) {
      steady += n;
      ++steady_slices;
    } else {
      at_changes += n;
      changes += changed;
    }
  }
  EXPECT_LE(at_changes, kPerDateChange * changes) << "over " << changes << " Date changes";
  EXPECT_GE(steady_slices, slices / 2) << "too few slices without a Date change to judge";
  ::testing::Test::RecordProperty("allocations", std::to_string(steady));
  ::testing::Test::RecordProperty("allocations_at_date_changes", std::to_string(at_changes));
  return steady;
}

// HTTP/2 over loopback, h2c by prior knowledge: a worker with --h2 and its
// client, batches of 16 streams and single ones on one connection. (With
// the client on plain malloc it counts 52,003.)
TEST(Allocation, AnH2cWorkerAllocatesNothingPerRequestOverLoopback) {
  WorkerOptions options;
  options.h2 = true;
  Worker worker(test::kTestPersona, {}, options, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  H2SocketClient client(fd);
  EXPECT_EQ(h2_steady_state_allocations(client, {500, 100}, {250, 25}, 20), 0u);
  close(fd);
  worker.stop(false);
  worker.join();
}

// The same over TLS, h2 by ALPN, once the handshake is done.
TEST(Allocation, AnH2WorkerOverTlsAllocatesNothingPerRequest) {
  ASSERT_TRUE(kRecycled);
  std::string error;
  TlsOptions tls_options;
  tls_options.enabled = true;
  tls_options.h2 = true;
  std::unique_ptr<TlsContext> tls = TlsContext::create(tls_options, "", {"localhost"}, error);
  ASSERT_TRUE(tls) << error;
  WorkerOptions options;
  options.tls = tls.get();
  options.h2 = true;
  Worker worker(test::kTestPersona, {}, options, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, nullptr);
  static const unsigned char kAlpn[] = "\x02h2";
  SSL_CTX_set_alpn_protos(client_ctx, kAlpn, 3);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  SSL* ssl = SSL_new(client_ctx);
  SSL_set_fd(ssl, fd);
  ASSERT_EQ(SSL_connect(ssl), 1);
  const unsigned char* alpn = nullptr;
  unsigned alpn_length = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_length);
  ASSERT_EQ(std::string_view(reinterpret_cast<const char*>(alpn), alpn_length), "h2");
  {
    H2SocketClient client(fd, ssl);
    EXPECT_EQ(h2_steady_state_allocations(client, {500, 100}, {150, 15}, 20), 0u);
  }
  SSL_free(ssl);
  close(fd);
  SSL_CTX_free(client_ctx);
  worker.stop(false);
  worker.join();
}

}  // namespace
}  // namespace hello
