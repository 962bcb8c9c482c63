// The transport under a connection: the one object that owns its socket.
// It alone reads, writes (at once or queued), sends the last answer with
// the FIN, tells whether unread input waits, resets and shuts down; the
// connection above it only hands it bytes and hears back through Events.
// TcpTransport is plain TCP; a TLS transport fits behind the same
// interface (it hands up plaintext and takes plaintext, as h2o's
// h2o_socket_t does with its ssl member), and the connection does not
// change. A test drives a connection over a fake one, with no socket.
//
// A fair turn: libuv reads a stream up to 32 times in one loop turn while
// each read fills the buffer, so one client that never stops sending
// would have the worker for 32 reads (2 MiB, and whatever work they hold)
// before any other connection is served. A TcpTransport spends a ReadShare
// per turn instead; once it is spent it stops reading and its worker's
// ReadTurns starts it again after the others had their turn. TLS reads
// through a TcpTransport, so the share holds for it too.
#pragma once

#include <uv.h>

#include <cstddef>

namespace hello {

class TcpTransport;

// What one connection may read in one loop turn before it yields to the
// others: socket-free, so that a unit test drives it.
class ReadShare {
 public:
  // One read buffer (Worker::kReadBufferSize): what one read of a busy
  // connection takes anyway, a few hundred pipelined requests or four
  // HTTP/2 frames of 16 KiB, about a millisecond of work; the others wait
  // at most that long for each busy connection. A smaller share would cost
  // a busy connection a loop turn (and two epoll_ctl calls) per read.
  static constexpr size_t kBytesPerTurn = 64 * 1024;

  // A read of `nread` bytes (or an error, nread < 0) into a buffer of
  // `size`: true once the share is spent and more may wait (the read
  // filled the buffer). A read shorter than the buffer emptied the socket,
  // which ends the turn anyway: the share starts again, and the common
  // case (one short read per request) never yields.
  bool spend(ssize_t nread, size_t size) {
    if (nread <= 0 || static_cast<size_t>(nread) < size) {
      spent_ = 0;
      return false;
    }
    spent_ += static_cast<size_t>(nread);
    return spent_ >= kBytesPerTurn;
  }
  // A new turn: reading starts again.
  void renew() { spent_ = 0; }

 private:
  size_t spent_ = 0;  // bytes read in this turn by reads that filled the buffer
};

// The transports of one loop that spent their share and wait for their
// next turn: one uv_check handle, run after the loop has polled and served
// every connection that was ready, starts them reading again, and the next
// poll (epoll is level-triggered) finds their bytes still waiting. The
// worker owns one, and its loop carries it in `data` (as uWebSockets' loop
// carries its LoopData), so that a transport finds it from its loop.
class ReadTurns {
 public:
  ReadTurns() = default;
  ReadTurns(const ReadTurns&) = delete;
  ReadTurns& operator=(const ReadTurns&) = delete;

  // On `loop`, whose `data` it becomes. 0 or a libuv error.
  int init(uv_loop_t* loop);
  // Closes the handle (with the loop's other handles, at the end).
  void close();
  // The loop's, or null (a loop without one: no share is kept).
  static ReadTurns* of(uv_loop_t* loop) { return static_cast<ReadTurns*>(loop->data); }
  // `t` has stopped reading for this turn: it starts again at the next.
  void yield(TcpTransport* t);
  // `t` no longer waits (it stopped reading for good, or closes).
  void remove(TcpTransport* t);

 private:
  friend struct TcpCallbacks;
  void on_check();

  uv_check_t check_;
  TcpTransport* head_ = nullptr;  // the waiting transports, most recent first
};

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
  friend class ReadTurns;

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  uv_os_fd_t socket();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void open(uv_loop_t* loop);
  void resume();

  uv_tcp_t tcp_;
  // While a read is reported: it was shorter than the buffer, so it
  // emptied the socket and nothing waits unread behind it.
  bool drained_ = false;
  // Stopped by its share, not by the connection: reading() stays true.
  bool yielded_ = false;
  ReadShare share_;
  ReadTurns* turns_ = nullptr;    // the loop's, or null
  TcpTransport* prev_ = nullptr;  // in turns_'s list while yielded_
  TcpTransport* next_ = nullptr;
};

}  // namespace hello
