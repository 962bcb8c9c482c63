// One event loop, one listening socket and the connections it accepted.
// Each worker has its own copy of the response table so that refreshing the
// Date value never races with another thread.
#pragma once

#include <uv.h>

#include <string>
#include <vector>

#include "response_table.h"
#include "session.h"

namespace hello {

class Connection;

class Worker {
 public:
  Worker(const Persona& persona, const TableOptions& options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Binds `addr` with SO_REUSEPORT and listens. Returns 0 or a libuv error.
  int listen(const struct sockaddr* addr);
  // The port the listener is bound to (useful after binding port 0).
  int port() const;
  // Runs the loop until stop() has closed every handle.
  void run();
  // Stops accepting, closes every connection and ends run(). Loop thread only.
  void stop();

  uv_loop_t* loop() { return &loop_; }
  const ResponseTable& table() const { return table_; }
  SessionStats& stats() { return stats_; }
  uv_buf_t read_buffer() { return uv_buf_init(read_buffer_, sizeof read_buffer_); }
  // Scratch space for the responses of one read; empty on return.
  std::string& output() { return output_; }

  // Called by a connection from its close callback.
  void release(Connection* c);

 private:
  friend struct WorkerCallbacks;

  void on_connection(int status);
  void on_date_timer();
  void schedule_date_timer();

  // One read of this size holds hundreds of pipelined requests, and the
  // kernel's default receive buffer on loopback rarely hands over more.
  static constexpr size_t kReadBufferSize = 64 * 1024;

  uv_loop_t loop_;
  uv_tcp_t listener_;
  uv_timer_t date_timer_;
  ResponseTable table_;
  SessionStats stats_;
  bool listening_ = false;
  bool stopping_ = false;
  Connection* live_ = nullptr;      // intrusive list of open connections
  std::vector<Connection*> spare_;  // closed connections, ready for reuse
  std::string output_;
  char read_buffer_[kReadBufferSize];
};

}  // namespace hello
