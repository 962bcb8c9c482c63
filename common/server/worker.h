// One event loop on its own thread, one listening socket and the
// connections it accepted. Each worker has its own copy of the response
// table so that refreshing the Date value never races with another thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/pool.h"
#include "base/timer_queue.h"
#include "http/limits.h"
#include "http1/session.h"
#include "http2/h2_answer_fields.h"
#include "http2/h2_stream.h"
#include "net/listener.h"
#include "net/transport.h"
#include "observe/access_log.h"
#include "observe/accounting.h"
#include "observe/counter.h"
#include "observe/latency_histogram.h"
#include "persona/response_table.h"
#include "server/connection.h"
#include "server/connection_context.h"
#include "server/protocol.h"
#include "shaping/shape.h"
#include "shaping/stall.h"
#include "tls/tls_context.h"
#include "tls/tls_transport.h"

namespace hello {

// Per-connection limits and deadlines (docs/hardening.md), and the
// worker's stalls.
struct WorkerOptions {
  Limits limits;
  uint64_t header_timeout_ms = 10000;      // first byte of a request to its last
  uint64_t keep_alive_timeout_ms = 60000;  // idle between requests
  uint64_t send_timeout_ms = 30000;        // a queued write that makes no progress
  size_t max_connections = 10000;          // open at once, per worker
  bool defer_accept = true;                // accept at a connection's first bytes, and read them
  uint64_t seed = 0;                       // worker i decides shaped answers from seed + i
  bool loop_metrics = false;               // measure the loop's idle time (--admin)
  std::vector<Stall> stalls;               // --stall, each one on every worker
  uint64_t stall_epoch_ns = 0;             // uv_hrtime() the stalls count from, the same for all
  const TlsContext* tls = nullptr;         // --tls: a context per worker
  bool h2 = false;                         // --h2 (docs/http2.md)
  uint32_t h2_max_streams = 100;           // --h2-max-streams
};

class Worker final {
 public:
  // `log` may be null (no access log); `id` numbers the worker from 0.
  Worker(const Persona& persona, const TableOptions& table_options, const WorkerOptions& options,
         int id, LogWriter* log);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Creates the loop and its handles. Returns 0 or a libuv error (EMFILE...).
  int init();
  // Binds `addr` with SO_REUSEPORT and listens. Returns 0 or a libuv error.
  int listen(const struct sockaddr* addr);
  // The port the listener is bound to (useful after binding port 0).
  int port() const;
  // Runs the loop on a new thread, pinned to `cpu` unless it is negative.
  // `done` is signalled from that thread once the loop has ended.
  void start(int cpu, uv_async_t* done);
  void join();
  // Any thread: stop accepting, answer what was received, close idle
  // connections, then end the loop. With `force`, close everything now.
  void stop(bool force);

  int id() const { return id_; }
  // True once the loop has ended (any thread).
  bool finished() const { return finished_.load(); }
  // Read by the main thread for the live line, the summary and /metrics.
  WorkerStats& stats() { return stats_; }
  // Service time of each answered request (docs/observability.md).
  LatencyHistogram& service_time() { return service_time_; }
  // What counts and logs everything this worker's connections do.
  Accounting& accounting() { return accounting_; }
  uv_loop_t* loop() { return &loop_; }
  // Nanoseconds the loop has waited for events (any thread; 0 without
  // WorkerOptions::loop_metrics).
  uint64_t idle_ns() { return loop_ready_ ? uv_metrics_idle_time(&loop_) : 0; }
  const WorkerOptions& options() const { return options_; }

 private:
  friend struct WorkerCallbacks;

  Connection* acquire();
  // What the connections' context asks of their owner.
  std::unique_ptr<Heart> make_heart(Protocol protocol);
  void release(Connection* c);
  // What the listener reports.
  void on_connection(uv_stream_t* server);
  void on_socket(uv_os_sock_t fd);
  void on_accept_error(int status);
  void on_date_timer();
  void refresh_date(time_t now);
  void sweep_deadlines();
  void on_drain_timer();
  void on_command();
  void on_stall(Timer* t);
  void stop_stalls();
  void schedule_date_timer();
  void finish_if_done();

  // One read of this size holds hundreds of pipelined requests, and the
  // kernel's default receive buffer on loopback rarely hands over more.
  static constexpr size_t kReadBufferSize = 64 * 1024;
  // A TLS read of ciphertext and the partial record before it decrypt into one buffer.
  static_assert(kReadBufferSize >= TlsShared::kCipherBufferSize + 16 * 1024 + 256);

  int id_;
  uv_loop_t loop_;
  Listener listener_;
  uv_timer_t date_timer_;
  uv_timer_t drain_timer_;
  uv_async_t command_async_;
  std::atomic<int> command_{0};  // 1: stop gracefully, 2: force
  uv_async_t* done_ = nullptr;
  std::thread thread_;
  ResponseTable table_;
  WorkerOptions options_;
  WorkerStats stats_;
  LatencyHistogram service_time_;
  Dice dice_;
  std::unique_ptr<AccessLog> access_log_;
  Accounting accounting_;
  bool loop_ready_ = false;
  bool stopping_ = false;
  std::atomic<bool> finished_{false};
  Connection* live_ = nullptr;    // intrusive list of open connections
  Pool<Connection> connections_;  // every connection made; the closed ones ready for reuse
  TimerQueue timers_;
  ReadTurns read_turns_;  // the connections that spent their share of a turn
  // One timer per --stall spec, options_.stalls[i]'s at [i]; sized once, in
  // the constructor, since the queue holds pointers to them.
  std::vector<Timer> stall_timers_;
  // The protocol of every connection it accepts (protocol_at_accept()).
  Protocol protocol_;
  // With --h2: the answers in HTTP/2 form, the streams the sessions lend
  // each other, and what they share. Before the context, whose hearts'
  // sessions use them.
  std::unique_ptr<H2Answers> h2_answers_;
  Pool<H2Stream> h2_streams_;
  H2Setup h2_setup_;
  ConnectionContext context_;
  std::unique_ptr<TlsShared> tls_;  // with --tls
  char read_buffer_[kReadBufferSize];
};

}  // namespace hello
