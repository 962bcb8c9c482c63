// The transport under a connection: the one object that owns its socket.
// It alone reads, writes (at once or queued), sends the last answer with
// the FIN, tells whether unread input waits, resets and shuts down; the
// connection above it only hands it bytes and hears back through Events.
// TcpTransport is plain TCP; a TLS transport fits behind the same
// interface (it hands up plaintext and takes plaintext, as h2o's
// h2o_socket_t does with its ssl member), and the connection does not
// change. A test drives a connection over a fake one, with no socket.
#pragma once

#include <uv.h>

#include <cstddef>

namespace hello {

class Transport {
 public:
  // What the transport reports to the connection above it: plain callbacks
  // with their `data`, as libuv's own are, so that the connection is no
  // polymorphic type (UBSan's vptr check of a type seen first while
  // descriptors are exhausted needs a pipe, and reports a false error).
  struct Events {
    // Bytes read (nread > 0, in buf->base), the client's EOF (UV_EOF) or
    // an error (another negative libuv code). Called from the loop while
    // reading, or from read_now().
    void (*on_read)(void* data, ssize_t nread, const uv_buf_t* buf);
    // A write() has completed (0) or failed or was cancelled (negative).
    void (*on_written)(void* data, int status);
    // close() has finished: nothing of the transport is in use any more.
    void (*on_closed)(void* data);
    // The client spoke plain HTTP to a TLS port: the answer is written in
    // clear (try_write and write pass it through), then the connection
    // closes. Nothing more is read.
    void (*on_misdirected)(void* data);
  };

  virtual ~Transport() = default;

  // Reads into `buffer` (shared by a worker's connections) and reports to
  // `events` (a table that outlives it) with `data` from now on; set
  // before anything else.
  void attach(const Events* events, void* data, uv_buf_t buffer) {
    events_ = events;
    data_ = data;
    buffer_ = buffer;
  }

  // Starts or stops reporting reads; 0 or a libuv error. Only called
  // when not reading() or reading() respectively.
  virtual int start_reading() = 0;
  virtual void stop_reading() = 0;
  bool reading() const { return reading_; }
  // Reads what has arrived now, without waiting for the loop, and reports
  // it; nothing if nothing has arrived.
  virtual void read_now() = 0;
  // Writes what the kernel takes now: the bytes taken, or a negative
  // libuv error (UV_EAGAIN: none). `last`: nothing follows but the FIN,
  // so the bytes may be held for it and leave in the same segment.
  virtual int try_write(const uv_buf_t* bufs, unsigned n, bool last) = 0;
  // Queues a write that completes later (on_written); `req` is the
  // caller's until then. One at a time. 0 or a libuv error.
  virtual int write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) = 0;
  // True if closing now could reset the connection before the client has
  // read what it was sent: it has sent bytes nobody has read yet (TCP), or
  // it is to answer our close_notify (TLS). Then the connection ends with
  // shutdown() and waits for the client's end.
  virtual bool unread_input() = 0;
  // Sends the FIN; reading goes on. 0 or a libuv error.
  virtual int shutdown() = 0;
  // Closes; on_closed() follows, asynchronously. `abort`: with a reset
  // (RST) instead of the FIN, whatever is still unsent.
  virtual void close(bool abort = false) = 0;
  // The peer's numeric address into `out` (NUL-terminated), or "";
  // returns its port (0 if unknown).
  virtual uint16_t peer_name(char* out, size_t size) = 0;
  // True if the transport's handshake agreed on HTTP/2 (TLS's ALPN "h2").
  virtual bool negotiated_h2() const { return false; }

 protected:
  void report_read(ssize_t nread, const uv_buf_t* buf) { events_->on_read(data_, nread, buf); }
  void report_written(int status) { events_->on_written(data_, status); }
  void report_closed() { events_->on_closed(data_); }
  void report_misdirected() { events_->on_misdirected(data_); }

  const Events* events_ = nullptr;
  void* data_ = nullptr;
  uv_buf_t buffer_{};
  bool reading_ = false;  // kept by start_reading() and stop_reading()
};

// Plain TCP on a libuv handle.
class TcpTransport final : public Transport {
 public:
  // Accepts the pending connection of `server`, or takes over `fd`, a
  // socket accepted outside libuv (which is closed if that fails). 0 or a
  // libuv error; close() must follow either way.
  int accept(uv_loop_t* loop, uv_stream_t* server);
  int adopt(uv_loop_t* loop, uv_os_sock_t fd);

  int start_reading() override;
  void stop_reading() override;
  void read_now() override;
  int try_write(const uv_buf_t* bufs, unsigned n, bool last) override;
  int write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) override;
  bool unread_input() override;
  int shutdown() override;
  void close(bool abort) override;
  uint16_t peer_name(char* out, size_t size) override;

 private:
  friend struct TcpCallbacks;

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  uv_os_fd_t socket();
  void on_read(ssize_t nread, const uv_buf_t* buf);

  uv_tcp_t tcp_;
  // While a read is reported: it was shorter than the buffer, so it
  // emptied the socket and nothing waits unread behind it.
  bool drained_ = false;
};

}  // namespace hello
