// Counts heap allocations on the request path after warm-up, in a real
// worker over loopback: none are allowed, in clear and over TLS, for
// waiting and shaped answers, and with the access log on.
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

}  // namespace
}  // namespace hello
