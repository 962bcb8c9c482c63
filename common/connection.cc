#include "connection.h"

#include <unistd.h>

#include <cassert>
#include <utility>

#include "worker.h"

namespace hello {

namespace {

// Stop reading from a client while this much output waits for it, so a
// client that sends but never reads cannot make us buffer without bound.
constexpr size_t kMaxQueuedBytes = 1 << 20;

// Pooled connections keep at most this much queue capacity.
constexpr size_t kPooledCapacity = 64 * 1024;

// After our last response and FIN, wait this long for the client's FIN so
// it reads the answer instead of a reset, then close anyway.
constexpr uint64_t kLingerMs = 2000;

// While draining for shutdown, a connection that read nothing, owes
// nothing and is between requests for this long is idle and is closed.
// Requests a client sent before the signal are in our socket buffer well
// within it (loopback or LAN).
constexpr uint64_t kDrainCheckMs = 50;

// During shutdown the wait for the client's FIN is shorter: everything owed
// has been sent, and the process should not outlive its clients' manners.
constexpr uint64_t kDrainLingerMs = 200;

// Fills `out` with the numeric address of the peer of `tcp`, or leaves it empty.
void peer_name(const uv_tcp_t* tcp, char* out, size_t size) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  out[0] = '\0';
  if (uv_tcp_getpeername(tcp, reinterpret_cast<struct sockaddr*>(&ss), &len) != 0) return;
  if (ss.ss_family == AF_INET6)
    uv_ip6_name(reinterpret_cast<struct sockaddr_in6*>(&ss), out, size);
  else
    uv_ip4_name(reinterpret_cast<struct sockaddr_in*>(&ss), out, size);
}

}  // namespace

struct ConnectionCallbacks {
  template <typename Handle>
  static Connection* of(Handle* h) {
    return static_cast<Connection*>(h->data);
  }
  static void alloc(uv_handle_t* h, size_t, uv_buf_t* buf) { *buf = of(h)->worker_.read_buffer(); }
  static void read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
    of(s)->on_read(nread, buf);
  }
  static void write(uv_write_t* req, int status) { of(req)->on_write(status); }
  static void shutdown(uv_shutdown_t* req, int status) { of(req)->on_shutdown(status); }
  static void timer(uv_timer_t* t) { of(t)->on_timer(); }
  static void close(uv_handle_t* h) { of(h)->on_close(); }
};

Connection::Connection(Worker& worker)
    : worker_(worker),
      session_(worker.table(), worker.stats(), worker.access_log(), worker.options().limits) {}

void Connection::start(uv_stream_t* server) {
  init_handles();
  if (uv_accept(server, stream()) != 0) {
    close();
    return;
  }
  begin();
}

void Connection::adopt(uv_os_sock_t fd) {
  init_handles();
  if (uv_tcp_open(&tcp_, fd) != 0) {
    ::close(fd);
    close();
    return;
  }
  begin();
}

void Connection::init_handles() {
  writing_ = reading_ = peer_done_ = shut_down_ = closing_ = draining_ = false;
  queued_.clear();
  backlog_.clear();
  int rc = uv_tcp_init(worker_.loop(), &tcp_);
  assert(rc == 0);  // uv_tcp_init without a socket cannot fail on Unix
  rc = uv_timer_init(worker_.loop(), &timer_);
  assert(rc == 0);
  (void)rc;
  tcp_.data = timer_.data = write_req_.data = shutdown_req_.data = this;
  open_handles_ = 2;
}

void Connection::begin() {
  if (worker_.access_log() != nullptr) peer_name(&tcp_, peer_, sizeof peer_);
  session_.reset(peer_);
  // Responses are complete when written; Nagle would only delay them. If
  // the option cannot be set the connection still works, only slower.
  (void)uv_tcp_nodelay(&tcp_, 1);
  if (uv_read_start(stream(), ConnectionCallbacks::alloc, ConnectionCallbacks::read) != 0) {
    close();
    return;
  }
  reading_ = true;
  // A new connection has the header timeout to send its first request.
  deadline_request_ = session_.requests_begun();
  read_deadline_ = uv_now(worker_.loop()) + worker_.options().header_timeout_ms;
}

void Connection::close() {
  if (closing_) return;
  closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ConnectionCallbacks::close);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), ConnectionCallbacks::close);
}

void Connection::drain() {
  if (closing_ || draining_) return;
  draining_ = true;
  read_since_check_ = false;
  if (!shut_down_ &&
      uv_timer_start(&timer_, ConnectionCallbacks::timer, kDrainCheckMs, kDrainCheckMs) != 0)
    close();
}

void Connection::on_close() {
  if (--open_handles_ > 0) return;
  // A connection that once queued a lot for a slow client gives the memory
  // back before it waits in the pool.
  if (queued_.capacity() > kPooledCapacity) std::string().swap(queued_);
  if (backlog_.capacity() > kPooledCapacity) std::string().swap(backlog_);
  worker_.release(this);
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (closing_) return;
  if (nread > 0) {
    read_since_check_ = true;
    worker_.stats().bytes_in.add(static_cast<uint64_t>(nread));
    // Once the session has closed, the client's remaining bytes are drained
    // and ignored while our last response goes out.
    if (session_.closing()) return;
    std::string& out = worker_.output();
    session_.feed(buf->base, static_cast<size_t>(nread), out);
    set_read_deadline(false);
    send_output();
    if (closing_) return;
    if (writing_ && queued_.size() + backlog_.size() > kMaxQueuedBytes) {
      uv_read_stop(stream());
      reading_ = false;
    }
    finish_if_done();
    return;
  }
  if (nread == 0) return;  // EAGAIN: nothing this time
  if (nread != UV_EOF) {
    close();  // reset or another hard error: nobody is left to answer
    return;
  }
  peer_done_ = true;
  uv_read_stop(stream());
  reading_ = false;
  finish_if_done();
}

// Sends what the session appended to the worker's output buffer, which is
// empty again afterwards.
void Connection::send_output() {
  std::string& out = worker_.output();
  if (!out.empty()) send(out);
  out.clear();
}

void Connection::send(const std::string& out) {
  worker_.stats().bytes_out.add(out.size());
  if (writing_) {
    backlog_.append(out);
    return;
  }
  uv_buf_t buf = uv_buf_init(const_cast<char*>(out.data()), static_cast<unsigned>(out.size()));
  int n = uv_try_write(stream(), &buf, 1);
  if (n == static_cast<int>(out.size())) return;
  if (n < 0 && n != UV_EAGAIN) {
    close();
    return;
  }
  if (n < 0) n = 0;
  queued_.assign(out, static_cast<size_t>(n));
  write_queued();
}

void Connection::write_queued() {
  write_deadline_ = uv_now(worker_.loop()) + worker_.options().send_timeout_ms;
  uv_buf_t buf = uv_buf_init(queued_.data(), static_cast<unsigned>(queued_.size()));
  if (uv_write(&write_req_, stream(), &buf, 1, ConnectionCallbacks::write) != 0) {
    close();
    return;
  }
  writing_ = true;
}

void Connection::on_write(int status) {
  writing_ = false;
  if (closing_) return;  // cancelled by close()
  if (status < 0) {
    close();
    return;
  }
  if (!backlog_.empty()) {
    std::swap(queued_, backlog_);
    backlog_.clear();
    write_queued();
    return;
  }
  queued_.clear();
  if (!reading_ && !peer_done_ && !shut_down_) {
    if (uv_read_start(stream(), ConnectionCallbacks::alloc, ConnectionCallbacks::read) != 0) {
      close();
      return;
    }
    reading_ = true;
    // The client's bytes waited in the socket while we did not read: its
    // deadlines and the drain check start over from now.
    read_since_check_ = true;
    set_read_deadline(true);
  } else {
    // Idle from the moment the last answer was out, not from the last read.
    set_read_deadline(false);
  }
  finish_if_done();
}

// Ends the connection once nothing more will be sent: straight away if the
// client is gone, else with a FIN and a bounded wait for the client's own.
void Connection::finish_if_done() {
  if (closing_ || writing_) return;
  if (peer_done_) {
    close();
    return;
  }
  if (!session_.closing() || shut_down_) return;
  shut_down_ = true;
  // The drain check has done its part; the linger timer starts in on_shutdown.
  uv_timer_stop(&timer_);
  if (uv_shutdown(&shutdown_req_, stream(), ConnectionCallbacks::shutdown) != 0) close();
}

void Connection::on_shutdown(int status) {
  if (closing_) return;
  if (status < 0) {
    close();
    return;
  }
  if (uv_timer_start(&timer_, ConnectionCallbacks::timer, draining_ ? kDrainLingerMs : kLingerMs,
                     0) != 0)
    close();
}

void Connection::on_timer() {
  if (shut_down_ || !draining_) {
    close();  // the linger after our FIN is over
    return;
  }
  if (!read_since_check_ && !writing_ && !session_.mid_request()) {
    uv_timer_stop(&timer_);
    session_.stop();
    finish_if_done();
  }
  read_since_check_ = false;
}

// A request in progress must be complete within the header timeout of its
// first byte; between requests the keep-alive timeout runs from the last read.
void Connection::set_read_deadline(bool restart) {
  uint64_t now = uv_now(worker_.loop());
  if (!session_.mid_request()) {
    read_deadline_ = now + worker_.options().keep_alive_timeout_ms;
  } else if (restart || session_.requests_begun() != deadline_request_) {
    deadline_request_ = session_.requests_begun();
    read_deadline_ = now + worker_.options().header_timeout_ms;
  }
}

void Connection::check_deadlines(uint64_t now_ms) {
  if (closing_ || shut_down_) return;  // the linger timer owns the end
  if (writing_) {
    if (now_ms >= write_deadline_) close();  // the client does not read
    return;
  }
  if (now_ms < read_deadline_) return;
  if (session_.mid_request()) {
    session_.time_out(worker_.output());
    send_output();
  } else {
    session_.stop();
  }
  finish_if_done();
}

}  // namespace hello
