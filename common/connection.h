// One accepted TCP connection: the thin libuv adapter around a Session.
// Reads go through the worker's shared buffer; the responses of one read
// leave in one write, and only what the kernel did not take is copied and
// queued. Connections are recycled by their worker, never freed per request.
#pragma once

#include <uv.h>

#include <netinet/in.h>

#include <string>

#include "session.h"

namespace hello {

class Worker;

class Connection {
 public:
  explicit Connection(Worker& worker);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Accepts the pending connection of `server` and starts reading. On
  // failure the connection closes itself and returns to the worker.
  void start(uv_stream_t* server);
  // The same for a socket accepted outside libuv (at shutdown).
  void adopt(uv_os_sock_t fd);
  // Closes both handles; the worker gets the connection back in on_close.
  void close();
  // Graceful stop: answer what the client has sent, then close once the
  // connection has been idle for a moment.
  void drain();
  // Closes the connection if a deadline has passed: 408 for a request that
  // did not arrive in time, a FIN when idle, a plain close when the client
  // does not read what we send.
  void check_deadlines(uint64_t now_ms);

  // The worker's intrusive list of live connections.
  Connection* prev = nullptr;
  Connection* next = nullptr;

 private:
  friend struct ConnectionCallbacks;

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  void init_handles();
  void begin();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void on_write(int status);
  void on_shutdown(int status);
  void on_timer();
  void on_close();
  void send_output();
  void send(const std::string& out);
  void write_queued();
  void finish_if_done();
  // `restart`: a request in progress gets a fresh header deadline too.
  void set_read_deadline(bool restart);

  Worker& worker_;
  Session session_;
  uv_tcp_t tcp_;
  uv_timer_t timer_;
  uv_write_t write_req_;
  uv_shutdown_t shutdown_req_;
  std::string queued_;   // bytes owned by the write in flight
  std::string backlog_;  // responses produced while that write is in flight
  int open_handles_ = 0;
  bool writing_ = false;
  bool reading_ = false;
  bool peer_done_ = false;  // the client sent EOF
  bool shut_down_ = false;  // we sent FIN
  bool closing_ = false;
  bool draining_ = false;
  bool read_since_check_ = false;
  uint64_t read_deadline_ = 0;        // loop time: header or keep-alive deadline
  uint64_t write_deadline_ = 0;       // loop time: send deadline of the write in flight
  uint64_t deadline_request_ = 0;     // the request read_deadline_ belongs to
  char peer_[INET6_ADDRSTRLEN] = "";  // the client's address, for the access log
};

}  // namespace hello
