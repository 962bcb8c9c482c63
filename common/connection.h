// One accepted TCP connection: the thin libuv adapter around a Session.
// Reads go through the worker's shared buffer; the responses of one read
// leave in one write, and only what the kernel did not take is copied and
// queued. Connections are recycled by their worker, never freed per request.
//
// An idle connection holds little more than its libuv handle: the parser
// state (a Session) and the state of a write the kernel did not take at
// once (a PendingWrite) are borrowed from the worker's pools while they are
// needed and given back as soon as they are not.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "session.h"

namespace hello {

class Worker;

// A write libuv finishes later: the request and the bytes it owns.
struct PendingWrite {
  uv_write_t req;
  std::string queued;     // bytes owned by the write in flight
  std::string backlog;    // responses produced while that write is in flight
  uint64_t deadline = 0;  // loop time by which the write must complete
};

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
  // Closes the handle; the worker gets the connection back in on_close.
  void close();
  // Graceful stop: answer what the client has sent, then close once the
  // connection has been idle for a moment (see check_drain()).
  void drain();
  // Closes the connection if a deadline has passed: 408 for a request that
  // did not arrive in time, a FIN when idle, a plain close when the client
  // does not read what we send, and the end of the wait after our FIN.
  void check_deadlines(uint64_t now_ms);
  // While draining, called every few tens of milliseconds: a connection
  // that read nothing since the last call and owes nothing is closed.
  void check_drain(uint64_t now_ms);

  // The worker's intrusive list of live connections.
  Connection* prev = nullptr;
  Connection* next = nullptr;

 private:
  friend struct ConnectionCallbacks;

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  bool writing() const { return pending_ != nullptr; }
  bool mid_request() const { return session_ != nullptr && session_->mid_request(); }
  void begin();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void on_write(int status);
  void on_close();
  void start_reading();
  void send_output();
  void send(const std::string& out);
  void write_queued();
  void detach_session();
  void finish_if_done();
  bool ended(uint64_t now_ms);
  bool unread_input();
  // `restart`: a request in progress gets a fresh header deadline too.
  void set_read_deadline(bool restart);

  Worker& worker_;
  Session* session_ = nullptr;       // borrowed while a request is in progress
  PendingWrite* pending_ = nullptr;  // borrowed while a write is in flight
  // Loop time: the header or keep-alive deadline, or once we have sent our
  // FIN, the end of the wait for the client's.
  uint64_t deadline_ = 0;
  uint64_t deadline_request_ = 0;  // the request deadline_ belongs to
  bool reading_ = false;
  bool peer_done_ = false;  // the client sent EOF
  bool ending_ = false;     // nothing more will be answered
  bool shut_down_ = false;  // we sent FIN
  bool closing_ = false;
  bool draining_ = false;
  bool read_since_check_ = false;
  uint8_t peer_length_ = 0;
  uv_tcp_t tcp_;
  // The client's address, for the access log; allocated only with the log.
  std::unique_ptr<char[]> peer_;
};

}  // namespace hello
