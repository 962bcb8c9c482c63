#include "connection.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "check.h"
#include "worker.h"

namespace hello {

namespace {

// Stop reading from a client while this much output waits for it, so a
// client that sends but never reads cannot make us buffer without bound.
constexpr size_t kMaxQueuedBytes = 1 << 20;

// After our last response and FIN, wait this long for the client's FIN so
// it reads the answer instead of a reset, then close anyway. Checked by the
// worker's once-a-second sweep, so the wait is 2 to 3 s.
constexpr uint64_t kLingerMs = 2000;

// During shutdown the wait for the client's FIN is shorter: everything owed
// has been sent, and the process should not outlive its clients' manners.
constexpr uint64_t kDrainLingerMs = 200;

// The longest numeric IPv6 address, with its terminating NUL.
constexpr size_t kPeerSize = 46;

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
  static void close(uv_handle_t* h) { of(h)->on_close(); }
};

Connection::Connection(Worker& worker)
    : worker_(worker), peer_(worker.access_log() != nullptr ? new char[kPeerSize] : nullptr) {}

void Connection::start(uv_stream_t* server) {
  // uv_tcp_init without a socket cannot fail on Unix.
  HELLO_CHECK_UV(uv_tcp_init(worker_.loop(), &tcp_));
  tcp_.data = this;
  if (uv_accept(server, stream()) != 0) {
    close();
    return;
  }
  begin();
}

void Connection::adopt(uv_os_sock_t fd) {
  HELLO_CHECK_UV(uv_tcp_init(worker_.loop(), &tcp_));
  tcp_.data = this;
  if (uv_tcp_open(&tcp_, fd) != 0) {
    ::close(fd);
    close();
    return;
  }
  begin();
}

// The socket inherits TCP_NODELAY from the listener (see Worker).
void Connection::begin() {
  reading_ = peer_done_ = ending_ = shut_down_ = closing_ = draining_ = false;
  if (peer_) {
    peer_name(&tcp_, peer_.get(), kPeerSize);
    peer_length_ = static_cast<uint8_t>(strlen(peer_.get()));
  }
  start_reading();
  if (closing_) return;
  // A new connection has the header timeout to send its first request.
  deadline_ = uv_now(worker_.loop()) + worker_.options().header_timeout_ms;
}

void Connection::start_reading() {
  if (uv_read_start(stream(), ConnectionCallbacks::alloc, ConnectionCallbacks::read) != 0) {
    close();
    return;
  }
  reading_ = true;
}

void Connection::close() {
  if (closing_) return;
  closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ConnectionCallbacks::close);
}

void Connection::drain() {
  if (closing_ || draining_) return;
  draining_ = true;
  read_since_check_ = false;
  // Already waiting for the client's FIN: wait the shorter time.
  uint64_t end = uv_now(worker_.loop()) + kDrainLingerMs;
  if (shut_down_ && deadline_ > end) deadline_ = end;
}

// libuv has called back a cancelled write, if any, before this.
void Connection::on_close() {
  HELLO_CHECK(pending_ == nullptr);
  detach_session();
  worker_.release(this);
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (closing_) return;
  if (nread > 0) {
    read_since_check_ = true;
    worker_.stats().bytes_in.add(static_cast<uint64_t>(nread));
    // Once the connection is ending, the client's remaining bytes are
    // drained and ignored while our last response goes out.
    if (ending_) return;
    if (session_ == nullptr) {
      session_ = worker_.acquire_session();
      session_->reset({peer_.get(), peer_length_});
      deadline_request_ = session_->requests_begun();
    }
    std::string& out = worker_.output();
    if (!session_->feed(buf->base, static_cast<size_t>(nread), out)) ending_ = true;
    set_read_deadline(false);
    // Between requests the parser holds nothing worth keeping.
    if (!ending_ && !session_->mid_request()) detach_session();
    send_output();
    if (closing_) return;
    if (writing() && pending_->queued.size() + pending_->backlog.size() > kMaxQueuedBytes) {
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

void Connection::detach_session() {
  if (session_ == nullptr) return;
  worker_.release_session(session_);
  session_ = nullptr;
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
  if (writing()) {
    pending_->backlog.append(out);
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
  pending_ = worker_.acquire_write();
  pending_->req.data = this;
  pending_->queued.assign(out, static_cast<size_t>(n));
  write_queued();
}

void Connection::write_queued() {
  pending_->deadline = uv_now(worker_.loop()) + worker_.options().send_timeout_ms;
  uv_buf_t buf =
      uv_buf_init(pending_->queued.data(), static_cast<unsigned>(pending_->queued.size()));
  if (uv_write(&pending_->req, stream(), &buf, 1, ConnectionCallbacks::write) != 0) {
    worker_.release_write(std::exchange(pending_, nullptr));
    close();
  }
}

void Connection::on_write(int status) {
  if (closing_ || status < 0) {
    // Cancelled by close(), or the write failed.
    worker_.release_write(std::exchange(pending_, nullptr));
    close();
    return;
  }
  if (!pending_->backlog.empty()) {
    std::swap(pending_->queued, pending_->backlog);
    pending_->backlog.clear();
    write_queued();
    return;
  }
  worker_.release_write(std::exchange(pending_, nullptr));
  if (!reading_ && !peer_done_ && !shut_down_) {
    start_reading();
    if (closing_) return;
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

// True if the client has sent bytes that nobody will read. Closing a
// socket with unread input sends a reset, which can destroy our last answer
// before the client reads it.
bool Connection::unread_input() {
  if (session_ == nullptr || !session_->clean_end()) return true;
  uv_os_fd_t fd;
  int pending = 0;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd) != 0) return true;
  return ioctl(fd, FIONREAD, &pending) != 0 || pending > 0;
}

// Ends the connection once nothing more will be sent: straight away if the
// client is gone or sent nothing we did not read (as nginx does), else with
// a FIN and a bounded wait for the client's own.
void Connection::finish_if_done() {
  if (closing_ || writing()) return;
  if (peer_done_ || (ending_ && !shut_down_ && !unread_input())) {
    close();
    return;
  }
  if (!ending_ || shut_down_) return;
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd) != 0 || ::shutdown(fd, SHUT_WR) != 0) {
    close();
    return;
  }
  shut_down_ = true;
  deadline_ = uv_now(worker_.loop()) + (draining_ ? kDrainLingerMs : kLingerMs);
}

// A request in progress must be complete within the header timeout of its
// first byte; between requests the keep-alive timeout runs from the last read.
void Connection::set_read_deadline(bool restart) {
  uint64_t now = uv_now(worker_.loop());
  if (!mid_request()) {
    deadline_ = now + worker_.options().keep_alive_timeout_ms;
  } else if (restart || session_->requests_begun() != deadline_request_) {
    deadline_request_ = session_->requests_begun();
    deadline_ = now + worker_.options().header_timeout_ms;
  }
}

// True if nothing is left to check: the connection is closing, or it has
// sent its FIN and only waits for the client's (closed here once that wait
// is over).
bool Connection::ended(uint64_t now_ms) {
  if (shut_down_ && !closing_ && now_ms >= deadline_) close();
  return closing_ || shut_down_;
}

void Connection::check_deadlines(uint64_t now_ms) {
  if (ended(now_ms)) return;
  if (writing()) {
    if (now_ms >= pending_->deadline) close();  // the client does not read
    return;
  }
  if (now_ms < deadline_ || ending_) return;
  if (mid_request()) {
    session_->time_out(worker_.output());
    send_output();
    if (closing_) return;
  }
  ending_ = true;
  finish_if_done();
}

void Connection::check_drain(uint64_t now_ms) {
  if (ended(now_ms)) return;
  if (!read_since_check_ && !writing() && !mid_request() && !ending_) {
    ending_ = true;
    finish_if_done();
  }
  read_since_check_ = false;
}

}  // namespace hello
