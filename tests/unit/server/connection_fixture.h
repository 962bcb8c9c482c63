// Connection over a fake transport (tests/unit/server): no socket, a real
// loop only for the timer queue (waiting answers, HTTP/2 wake-ups). The
// fake plays the kernel and the client: it takes as many bytes per write as
// a test allows, queues the rest like uv_write, delivers the client's
// bytes (only while the connection reads), EOF, reset and other errors,
// and fails a write or the FIN when told.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http1/session.h"
#include "http2/h2_answer_fields.h"
#include "http2/h2_stream.h"
#include "http_bytes.h"
#include "server/connection.h"
#include "server/protocol.h"
#include "shaping/shape.h"
#include "test_persona.h"

namespace hello::test {

class FakeTransport final : public Transport {
 public:
  // The kernel takes at most this many bytes of each try_write.
  size_t room = SIZE_MAX;
  bool unread = false;     // the client sent bytes nobody read
  int fail = 0;            // what try_write returns instead, if not 0
  int write_error = 0;     // what write returns instead, if not 0
  int shutdown_error = 0;  // what shutdown returns instead, if not 0

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
    if (write_error != 0) return write_error;
    queued_req = req;
    for (unsigned i = 0; i < n; ++i) queued.append(bufs[i].base, bufs[i].len);
    return 0;
  }
  bool unread_input() override { return unread; }
  int shutdown() override {
    if (shutdown_error != 0) return shutdown_error;
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

  // The client sends `bytes` (in reads of at most the buffer's size)
  // while the connection reads; the bytes read.
  size_t send(std::string_view bytes) {
    size_t sent = 0;
    while (!bytes.empty() && !close_asked && reading_) {
      size_t n = std::min(bytes.size(), buffer_.len);
      memcpy(buffer_.base, bytes.data(), n);
      report_read(static_cast<ssize_t>(n), &buffer_);
      bytes.remove_prefix(n);
      sent += n;
    }
    return sent;
  }
  void eof() { report_read(UV_EOF, &buffer_); }
  void client_reset() { report_read(UV_ECONNRESET, &buffer_); }
  void read_error(ssize_t error) { report_read(error, &buffer_); }
  // A TLS transport heard plain HTTP.
  void misdirect() { report_misdirected(); }
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

inline std::vector<FileRoute> routes() {
  return {test::text_route("/slow", "slow", 20000)};  // 20 ms
}

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest()
      : table_(test::kTestPersona, options()),
        sink_(stats_),
        context_(&loop_, timers_, sink_, {}, {this, make_heart, release},
                 uv_buf_init(buffer_, sizeof buffer_)),
        h2_answers_(table_) {
    h2_.answers = &h2_answers_;
    h2_.dice = &dice_;
  }

  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    o.shape = true;
    return o;
  }
  void SetUp() override {
    init_loop();
    connection_.start(fake_, Protocol::http1);
  }
  void init_loop() {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    ASSERT_EQ(timers_.init(&loop_), 0);
  }
  void TearDown() override {
    if (!fake_.close_asked) connection_.close();
    if (released_ == 0) fake_.finish_close();
    EXPECT_EQ(released_, 1);
    timers_.close();
    ASSERT_EQ(uv_run(&loop_, UV_RUN_DEFAULT), 0);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle is still open";
  }

  // The context's owner: HTTP/1 hearts, with h2c as h2_ says, and HTTP/2 ones.
  static std::unique_ptr<Heart> make_heart(void* test, Protocol p) {
    auto* t = static_cast<ConnectionTest*>(test);
    return hello::make_heart(p, t->table_, t->sink_, Limits{}, &t->dice_, &t->h2_);
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
  H2Answers h2_answers_;
  H2Setup h2_;  // the HTTP/2 hearts' setup (a test may change it before the first)
  FakeTransport fake_;
  Connection connection_{context_};
  int released_ = 0;
};

}  // namespace hello::test
