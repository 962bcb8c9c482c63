#include "net/transport.h"

#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "base/check.h"

namespace hello {

struct TcpCallbacks {
  static TcpTransport* of(void* data) { return static_cast<TcpTransport*>(data); }
  static void alloc(uv_handle_t* h, size_t, uv_buf_t* buf) { *buf = of(h->data)->buffer_; }
  static void read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
    of(s->data)->on_read(nread, buf);
  }
  static void write(uv_write_t* req, int status) { of(req->data)->report_written(status); }
  static void close(uv_handle_t* h) { of(h->data)->report_closed(); }
  static void check(uv_check_t* c) { static_cast<ReadTurns*>(c->data)->on_check(); }
};

int ReadTurns::init(uv_loop_t* loop) {
  int rc = uv_check_init(loop, &check_);
  if (rc != 0) return rc;
  check_.data = this;
  loop->data = this;
  return 0;
}

void ReadTurns::close() {
  HELLO_CHECK(head_ == nullptr);  // every connection has closed
  check_.loop->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
}

void ReadTurns::yield(TcpTransport* t) {
  // The handle runs only while some transport waits: an idle worker, or
  // one whose clients each take less than a share, never runs it.
  if (head_ == nullptr) HELLO_CHECK_UV(uv_check_start(&check_, TcpCallbacks::check));
  t->prev_ = nullptr;
  t->next_ = head_;
  if (head_ != nullptr) head_->prev_ = t;
  head_ = t;
}

void ReadTurns::remove(TcpTransport* t) {
  if (t->prev_ != nullptr)
    t->prev_->next_ = t->next_;
  else
    head_ = t->next_;
  if (t->next_ != nullptr) t->next_->prev_ = t->prev_;
  t->prev_ = t->next_ = nullptr;
  if (head_ == nullptr) HELLO_CHECK_UV(uv_check_stop(&check_));
}

// After the poll's callbacks: every connection that was ready has had its
// turn, and the ones that yielded read again from the next poll on.
void ReadTurns::on_check() {
  while (head_ != nullptr) {
    TcpTransport* t = head_;
    remove(t);
    t->resume();
  }
}

void TcpTransport::open(uv_loop_t* loop) {
  HELLO_CHECK_UV(uv_tcp_init(loop, &tcp_));  // cannot fail without a socket
  tcp_.data = this;
  reading_ = drained_ = yielded_ = false;
  share_.renew();
  turns_ = ReadTurns::of(loop);
}

int TcpTransport::accept(uv_loop_t* loop, uv_stream_t* server) {
  open(loop);
  return uv_accept(server, stream());
}

int TcpTransport::adopt(uv_loop_t* loop, uv_os_sock_t fd) {
  open(loop);
  int rc = uv_tcp_open(&tcp_, fd);
  if (rc != 0) ::close(fd);
  return rc;
}

// The descriptor: the handle has one from accept until close().
uv_os_fd_t TcpTransport::socket() {
  uv_os_fd_t fd;
  HELLO_CHECK_UV(uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd));
  return fd;
}

int TcpTransport::start_reading() {
  HELLO_CHECK(!yielded_);  // reading() is true while it waits for its turn
  share_.renew();
  int rc = uv_read_start(stream(), TcpCallbacks::alloc, TcpCallbacks::read);
  if (rc == 0) reading_ = true;
  return rc;
}

void TcpTransport::stop_reading() {
  if (!reading_) return;
  if (yielded_) {
    turns_->remove(this);  // libuv's reading is stopped already
    yielded_ = false;
  } else {
    HELLO_CHECK_UV(uv_read_stop(stream()));
  }
  reading_ = false;
}

void TcpTransport::on_read(ssize_t nread, const uv_buf_t* buf) {
  // A read shorter than the buffer emptied the socket: while it is
  // reported, nothing waits unread behind it (see unread_input()).
  drained_ = nread > 0 && static_cast<size_t>(nread) < buf->len;
  bool spent = share_.spend(nread, buf->len);
  report_read(nread, buf);
  drained_ = false;
  // Its share is spent and more waits: the others have their turn first.
  // Unless the connection stopped reading or closed meanwhile.
  if (spent && reading_ && turns_ != nullptr && !yielded_) {
    HELLO_CHECK_UV(uv_read_stop(stream()));
    yielded_ = true;
    turns_->yield(this);
  }
}

// Its next turn (ReadTurns::on_check()).
void TcpTransport::resume() {
  yielded_ = false;
  share_.renew();
  int rc = uv_read_start(stream(), TcpCallbacks::alloc, TcpCallbacks::read);
  if (rc != 0) report_read(rc, &buffer_);  // the connection closes
}

// For a connection accepted once its first bytes came (TCP_DEFER_ACCEPT):
// its request is read now, as libuv would read it a loop turn later, so a
// connection answered and closed at once never reaches epoll. EAGAIN (a
// client silent past the kernel's deferral) leaves it to libuv.
void TcpTransport::read_now() {
  ssize_t n;
  do n = ::read(socket(), buffer_.base, buffer_.len);
  while (n < 0 && errno == EINTR);
  if (n > 0)
    on_read(n, &buffer_);
  else if (n == 0)
    on_read(UV_EOF, &buffer_);
  else if (errno != EAGAIN && errno != EWOULDBLOCK)
    on_read(uv_translate_sys_error(errno), &buffer_);
}

// The last bytes go with MSG_MORE: the kernel holds them for the FIN that
// shutdown() or close() sends next, and both leave in one segment instead
// of two. A rest that did not fit goes by write(), which pushes the held
// part with it.
int TcpTransport::try_write(const uv_buf_t* bufs, unsigned n, bool last) {
  if (!last) return uv_try_write(stream(), bufs, n);
  ssize_t sent;
  if (n == 1) {
    // The usual last answer: one buffer, and send() is a cheaper system
    // call than sendmsg() (no message header to copy in).
    do sent = ::send(socket(), bufs[0].base, bufs[0].len, MSG_MORE | MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
  } else {
    // uv_buf_t has the layout of struct iovec on Unix (libuv's uv-unix.h).
    struct msghdr msg = {};
    msg.msg_iov = reinterpret_cast<struct iovec*>(const_cast<uv_buf_t*>(bufs));
    msg.msg_iovlen = n;
    do sent = ::sendmsg(socket(), &msg, MSG_MORE | MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
  }
  if (sent >= 0) return static_cast<int>(sent);
  return errno == EAGAIN || errno == EWOULDBLOCK ? UV_EAGAIN : uv_translate_sys_error(errno);
}

int TcpTransport::write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) {
  req->data = this;
  return uv_write(req, stream(), bufs, n, TcpCallbacks::write);
}

// Closing a socket with unread input sends a reset, which can destroy the
// last answer before the client reads it.
bool TcpTransport::unread_input() {
  if (drained_) return false;  // the read being reported emptied the socket
  int pending = 0;
  return ioctl(socket(), FIONREAD, &pending) != 0 || pending > 0;
}

int TcpTransport::shutdown() {
  return ::shutdown(socket(), SHUT_WR) == 0 ? 0 : uv_translate_sys_error(errno);
}

void TcpTransport::close(bool abort) {
  if (abort) {
    struct linger abortive = {1, 0};
    setsockopt(socket(), SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
  }
  if (yielded_) turns_->remove(this);
  reading_ = yielded_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), TcpCallbacks::close);
}

uint16_t TcpTransport::peer_name(char* out, size_t size) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  out[0] = '\0';
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<struct sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<struct sockaddr_in6*>(&ss);
    uv_ip6_name(a, out, size);
    return ntohs(a->sin6_port);
  }
  auto* a = reinterpret_cast<struct sockaddr_in*>(&ss);
  uv_ip4_name(a, out, size);
  return ntohs(a->sin_port);
}

}  // namespace hello
