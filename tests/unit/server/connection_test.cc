// Connection over a fake transport: no socket, a real loop only for the
// timer queue (waiting answers). The fake plays the kernel and the client:
// it takes as many bytes per write as a test allows, queues the rest like
// uv_write, and delivers the client's bytes, EOF and reset.
#include "server/connection.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "http1/session.h"
#include "http_bytes.h"
#include "shaping/shape.h"
#include "test_persona.h"

namespace hello {
namespace {

class FakeTransport final : public Transport {
 public:
  // The kernel takes at most this many bytes of each try_write.
  size_t room = SIZE_MAX;
  bool unread = false;  // the client sent bytes nobody read
  int fail = 0;         // what try_write returns instead, if not 0

  std::string received;  // what reached the client
  int try_writes = 0;
  bool last_write_held = false;  // the last try_write was the connection's last bytes
  uv_write_t* queued_req = nullptr;
  std::string queued;  // a write in flight
  bool fin = false;
  bool close_asked = false;
  bool aborted = false;

  int start_reading() override {
    EXPECT_FALSE(reading_) << "started twice";
    reading_ = true;
    return 0;
  }
  void stop_reading() override {
    EXPECT_TRUE(reading_) << "stopped twice";
    reading_ = false;
  }
  void read_now() override {}
  int try_write(const uv_buf_t* bufs, unsigned n, bool last) override {
    EXPECT_EQ(queued_req, nullptr) << "a write jumped the queue";
    ++try_writes;
    last_write_held = last;
    if (fail != 0) return fail;
    size_t taken = 0;
    for (unsigned i = 0; i < n && taken < room; ++i) {
      size_t k = std::min(bufs[i].len, room - taken);
      received.append(bufs[i].base, k);
      taken += k;
    }
    return taken == 0 ? UV_EAGAIN : static_cast<int>(taken);
  }
  int write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) override {
    EXPECT_EQ(queued_req, nullptr) << "two writes in flight";
    queued_req = req;
    for (unsigned i = 0; i < n; ++i) queued.append(bufs[i].base, bufs[i].len);
    return 0;
  }
  bool unread_input() override { return unread; }
  int shutdown() override {
    fin = true;
    return 0;
  }
  void close(bool abort) override {
    EXPECT_FALSE(close_asked) << "closed twice";
    close_asked = true;
    aborted = abort;
  }
  uint16_t peer_name(char* out, size_t size) override {
    snprintf(out, size, "192.0.2.7");
    return 4242;
  }

  // The client sends `bytes` (in reads of at most the buffer's size).
  void send(std::string_view bytes) {
    while (!bytes.empty() && !close_asked) {
      size_t n = std::min(bytes.size(), buffer_.len);
      memcpy(buffer_.base, bytes.data(), n);
      report_read(static_cast<ssize_t>(n), &buffer_);
      bytes.remove_prefix(n);
    }
  }
  void eof() { report_read(UV_EOF, &buffer_); }
  void client_reset() { report_read(UV_ECONNRESET, &buffer_); }
  // The kernel takes the write in flight.
  void complete_write() {
    ASSERT_NE(queued_req, nullptr);
    queued_req = nullptr;
    received += std::exchange(queued, {});
    report_written(0);
  }
  // libuv's close callback: a write in flight is cancelled first.
  void finish_close() {
    ASSERT_TRUE(close_asked);
    if (queued_req != nullptr) {
      queued_req = nullptr;
      queued.clear();
      report_written(UV_ECANCELED);
    }
    report_closed();
  }
};

std::vector<FileRoute> routes() {
  return {test::text_route("/slow", "slow", 20000)};  // 20 ms
}

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest()
      : table_(test::kTestPersona, options()),
        sink_(stats_),
        context_(&loop_, timers_, sink_, {}, {this, make_heart, release},
                 uv_buf_init(buffer_, sizeof buffer_)) {}

  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    o.shape = true;
    return o;
  }
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    ASSERT_EQ(timers_.init(&loop_), 0);
    connection_.start(fake_, Protocol::http1);
  }
  void TearDown() override {
    if (!fake_.close_asked) connection_.close();
    if (released_ == 0) fake_.finish_close();
    EXPECT_EQ(released_, 1);
    timers_.close();
    ASSERT_EQ(uv_run(&loop_, UV_RUN_DEFAULT), 0);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle is still open";
  }

  // The context's owner.
  static std::unique_ptr<Heart> make_heart(void* test, Protocol) {
    auto* t = static_cast<ConnectionTest*>(test);
    return std::make_unique<Session>(t->table_, t->sink_, Limits{}, &t->dice_);
  }
  static void release(void* test, Connection* c) {
    auto* t = static_cast<ConnectionTest*>(test);
    EXPECT_EQ(c, &t->connection_);
    ++t->released_;
  }

  std::string answer(std::string_view path, Variant v = Variant::keep_alive_11) {
    return table_.route(table_.find_route(path), v).bytes;
  }
  // Runs the loop until `done()` or `limit_ms` have passed. The timer queue
  // does not keep a loop alive (a worker's connections do), so a guard
  // timer does meanwhile.
  template <typename Done>
  void run_until(Done done, uint64_t limit_ms = 1000) {
    uv_timer_t guard;
    ASSERT_EQ(uv_timer_init(&loop_, &guard), 0);
    ASSERT_EQ(uv_timer_start(
                  &guard, [](uv_timer_t*) {}, limit_ms, 0),
              0);
    uint64_t end = uv_hrtime() + limit_ms * 1000000;
    while (!done() && uv_hrtime() < end) uv_run(&loop_, UV_RUN_ONCE);
    uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
    uv_run(&loop_, UV_RUN_NOWAIT);
  }

  static inline const std::vector<FileRoute> kRoutes = routes();
  uv_loop_t loop_;
  TimerQueue timers_;
  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_;
  Dice dice_{1};
  char buffer_[64 * 1024];
  ConnectionContext context_;
  FakeTransport fake_;
  Connection connection_{context_};
  int released_ = 0;
};

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetJson = "GET /json HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetSlow = "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetClose = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

TEST_F(ConnectionTest, PipelinedAnswersLeaveInOrderInOneWrite) {
  fake_.send(std::string(kGet) + std::string(kGetJson) + std::string(kGet));
  EXPECT_EQ(fake_.received, answer("/") + answer("/json") + answer("/"));
  EXPECT_EQ(fake_.try_writes, 1);
  EXPECT_FALSE(fake_.last_write_held);
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  EXPECT_EQ(stats_.requests.get(), 3u);
  EXPECT_EQ(stats_.bytes_out.get(), fake_.received.size());
}

TEST_F(ConnectionTest, AnAnswerThatWaitsKeepsTheOrder) {
  fake_.send(std::string(kGet) + std::string(kGetSlow) + std::string(kGetJson));
  // The answer before the waiting one goes at once; the one after waits with it.
  EXPECT_EQ(fake_.received, answer("/"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::waiting);
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/") + answer("/slow") + answer("/json"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_EQ(fake_.try_writes, 2);  // one per read, one when the wait ended
}

TEST_F(ConnectionTest, OutputOverTheHighWaterMarkStopsReading) {
  fake_.room = 0;  // a client that reads nothing
  std::string burst;
  for (int i = 0; i < 2000; ++i) burst += kGet;
  size_t sent = 0;
  // Bounded: each burst adds about 200 KB of answers.
  for (int i = 0; i < 20 && fake_.reading(); ++i) {
    fake_.send(burst);
    sent += 2000;
  }
  EXPECT_FALSE(fake_.reading());
  EXPECT_EQ(connection_.phase(), Connection::Phase::writing);
  // Reading stopped with the first read that took the output over 1 MiB.
  size_t one = answer("/").size();
  EXPECT_GT(sent * one, size_t{1} << 20);
  EXPECT_LE((sent - 2000) * one, size_t{1} << 20);
  // The client reads: everything arrives, in order, and reading resumes.
  while (fake_.queued_req != nullptr) fake_.complete_write();
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  EXPECT_EQ(fake_.received.size(), sent * one);
  EXPECT_EQ(fake_.received.substr(0, 2 * one), answer("/") + answer("/"));
}

TEST_F(ConnectionTest, AClosingAnswerWithUnreadInputSendsFinAndDrains) {
  fake_.unread = true;
  fake_.send(kGetClose);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_TRUE(fake_.last_write_held);  // held for the FIN
  EXPECT_TRUE(fake_.fin);
  EXPECT_FALSE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  // What the client still sends is read and ignored; its FIN ends it.
  fake_.send(kGet);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  fake_.eof();
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_FALSE(fake_.aborted);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_answered.get(), 1u);
}

TEST_F(ConnectionTest, AClosingAnswerWithNothingUnreadClosesAtOnce) {
  fake_.send(kGetClose);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_FALSE(fake_.fin);
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_FALSE(fake_.aborted);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
}

TEST_F(ConnectionTest, AClosingAnswerQueuedIsWrittenBeforeTheEnd) {
  fake_.room = 10;
  fake_.unread = true;
  fake_.send(kGetClose);
  EXPECT_EQ(connection_.phase(), Connection::Phase::ending);
  EXPECT_FALSE(fake_.fin);  // not before the answer is out
  fake_.complete_write();
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_TRUE(fake_.fin);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
}

TEST_F(ConnectionTest, AShapedResetAbortsAfterTheAnswersBeforeIt) {
  fake_.send(std::string(kGet) + "GET /?reset=100 HTTP/1.1\r\nHost: a\r\n\r\n" + std::string(kGet));
  EXPECT_EQ(fake_.received, answer("/"));
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_TRUE(fake_.aborted);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_reset.get(), 1u);
  EXPECT_EQ(stats_.resets.get(), 1u);
}

TEST_F(ConnectionTest, AClientResetClosesAtOnce) {
  fake_.send("GET / HTTP/1.1\r\nHo");  // a request in progress
  fake_.client_reset();
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_client.get(), 1u);
}

TEST_F(ConnectionTest, AWriteFailedByTheClientsResetCountsAsTheClients) {
  fake_.fail = UV_EPIPE;
  fake_.send(kGet);
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_client.get(), 1u);
  EXPECT_EQ(stats_.closed_error.get(), 0u);
}

TEST_F(ConnectionTest, AWriteFailedOtherwiseIsAnError) {
  fake_.fail = UV_EIO;
  fake_.send(kGet);
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_error.get(), 1u);
}

TEST_F(ConnectionTest, AClientThatLeavesWhileItsAnswerWaitsGetsNothing) {
  fake_.send(kGetSlow);
  EXPECT_EQ(connection_.phase(), Connection::Phase::waiting);
  fake_.eof();
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  // The wait was cancelled: nothing fires on the closed connection.
  run_until([] { return false; }, 40);  // twice the delay
  EXPECT_EQ(fake_.received, "");
  EXPECT_EQ(stats_.closed_client.get(), 1u);
  EXPECT_EQ(stats_.requests.get(), 0u);
}

TEST_F(ConnectionTest, APartialWriteQueuesOnlyTheRest) {
  fake_.room = 7;
  fake_.send(std::string(kGet) + std::string(kGet));
  EXPECT_EQ(fake_.received.size(), 7u);
  EXPECT_EQ(fake_.queued.size(), 2 * answer("/").size() - 7);
  // Answers produced while the write is in flight go behind it.
  fake_.send(kGetJson);
  fake_.complete_write();
  fake_.complete_write();
  EXPECT_EQ(fake_.received, answer("/") + answer("/") + answer("/json"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
}

}  // namespace
}  // namespace hello
