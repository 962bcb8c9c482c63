// One ws_load run: one thread, one libuv loop, N connections, and the
// phases they go through together: connect, warm up, measure, close.
#pragma once

#include <openssl/ssl.h>
#include <uv.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ws_load.h"
#include "ws_load_connection.h"
#include "ws_load_session.h"

namespace ws_load {

// What a run measured.
struct Result {
  double seconds = 0;                     // the measured window, as it lasted
  uint64_t messages = 0;                  // echoes completed within it
  double rate = 0;                        // messages per second
  size_t opened = 0;                      // connections whose WebSocket opened
  size_t deflated = 0;                    // of those, how many had permessage-deflate
  size_t errors = 0;                      // connections that ended in error after opening
  size_t handshake_failures = 0;          // connections that never opened
  double tool_cpu_s = 0;                  // this process's CPU time within the window
  std::map<std::string, size_t> reasons;  // failure -> connections
};

class Run final : public ConnectionOwner {
 public:
  Run(const Options& opt, const sockaddr* address);
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  ~Run();

  // Makes the loop, its handles, the TLS context and the connections;
  // empty, or why the run cannot start.
  std::string init();
  // Connects, warms up, measures, closes; returns when every handle is
  // closed, which the timer bounds in time.
  Result run();

  void on_open(Connection& c) override;
  void on_closed(Connection& c) override;
  void queue_flush(Connection& c) override;

  // libuv's callbacks, through the trampolines in ws_load_run.cc.
  void on_timer();
  void on_check();

 private:
  // The run's life; each moves forward only.
  enum class Phase : uint8_t { kConnecting, kWarmup, kMeasuring, kClosing, kDone };

  void start_connects();
  void connect_timed_out();
  void maybe_connected();
  void begin_warmup();
  void begin_measure();
  void end_measure();
  void close_unanswered();
  void finish();
  void start_timer(uint64_t ms);
  Result collect() const;

  const Options& opt_;
  Phase phase_ = Phase::kConnecting;
  uv_loop_t loop_{};
  bool loop_ready_ = false;
  uv_timer_t timer_{};  // the one deadline of the current phase
  uv_check_t check_{};  // flushes at the end of each loop turn
  SSL_CTX* tls_ = nullptr;
  SessionShared session_;
  ConnectionShared shared_;
  std::unique_ptr<uint8_t[]> read_buffer_;
  std::unique_ptr<uint8_t[]> plain_buffer_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<Connection*> dirty_;  // queued for flush() this turn

  size_t next_start_ = 0;  // conns_[next_start_] is the next to connect
  size_t connecting_ = 0;  // started, neither open nor closed
  size_t open_ = 0;        // opened, not yet closed

  // The measured window: echoes, monotonic time and CPU time at each end.
  uint64_t echoes_start_ = 0, echoes_end_ = 0;
  uint64_t start_ns_ = 0, end_ns_ = 0;
  double cpu_start_s_ = 0, cpu_end_s_ = 0;
};

}  // namespace ws_load
