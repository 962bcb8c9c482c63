#include "net/listener.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "net/tcp_port.h"

namespace hello {

namespace {

// The kernel clamps this to net.core.somaxconn (4096 on current kernels);
// ab -c 1000 opens its connections at once and needs room for all of them.
constexpr int kListenBacklog = 4096;

// How long a listener out of descriptors stops accepting before it tries again.
constexpr uint64_t kRelistenMs = 250;

// Accepting pauses for one loop turn after every kAcceptBatch connections,
// so no turn accepts more. libuv would accept for as long as clients keep
// connecting, and a connection answered and closed at accept
// (Connection::read_now) is given back to the pool only when the turn ends;
// the connections already open would wait meanwhile.
constexpr int kAcceptBatch = 64;

}  // namespace

struct ListenerCallbacks {
  static Listener* of(void* h) {
    return static_cast<Listener*>(static_cast<uv_handle_t*>(h)->data);
  }
  static void connection(uv_stream_t* s, int status) { of(s)->on_connection(status); }
  static void closed(uv_handle_t*) {}
  static void listener_closed(uv_handle_t* h) { of(h)->on_closed(); }
  static void relisten(uv_timer_t* t) { of(t)->on_relisten(); }
  static void resume(uv_idle_t* i) { of(i)->resume(); }
};

void Listener::init(uv_loop_t* loop, const Events* events, void* data) {
  loop_ = loop;
  events_ = events;
  data_ = data;
  // Cannot fail: neither needs a descriptor.
  HELLO_CHECK_UV(uv_timer_init(loop, &relisten_timer_));
  HELLO_CHECK_UV(uv_idle_init(loop, &accept_idle_));
  relisten_timer_.data = accept_idle_.data = tcp_.data = this;
}

Listener::~Listener() {
  drop_kept_socket();
}

int Listener::listen(const struct sockaddr* addr, bool defer_accept) {
  memcpy(&address_, addr,
         addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  defer_accept_ = defer_accept;
  return open();
}

int Listener::open() {
  const struct sockaddr* addr = reinterpret_cast<const struct sockaddr*>(&address_);
  int rc = uv_tcp_init_ex(loop_, &tcp_, addr->sa_family);
  if (rc != 0) return rc;
  tcp_.data = this;
  listening_ = true;
  // libuv 1.44 has no UV_TCP_REUSEPORT: set it on the fd before binding so
  // every worker can own a listener on the same address.
  uv_os_fd_t fd;
  if ((rc = uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd)) != 0) return rc;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0)
    return uv_translate_sys_error(errno);
  // Responses are complete when written; Nagle would only delay them.
  // Accepted sockets inherit the option, which saves a system call per
  // connection.
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    return uv_translate_sys_error(errno);
  // The kernel hands over a connection once its first bytes are in (or,
  // for a silent client, after its first SYN-ACK retransmission, about a
  // second): one wake-up per connection instead of two, and the request is
  // read at accept (Connection::read_now).
  if (defer_accept_ && setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one) != 0)
    return uv_translate_sys_error(errno);
  if ((rc = uv_tcp_bind(&tcp_, addr, 0)) != 0) return rc;
  if ((rc = uv_listen(reinterpret_cast<uv_stream_t*>(&tcp_), kListenBacklog,
                      ListenerCallbacks::connection)) != 0)
    return rc;
  keep_socket(fd);
  return 0;
}

// A second descriptor of the listening socket keeps it bound and listening
// while the libuv handle is closed (see pause()).
void Listener::keep_socket(uv_os_fd_t fd) {
  if (kept_socket_ < 0) kept_socket_ = fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

void Listener::drop_kept_socket() {
  if (kept_socket_ >= 0) ::close(kept_socket_);
  kept_socket_ = -1;
}

// Out of descriptors, libuv's accept loop spins calling us with EMFILE once
// its reserve descriptor is gone (another worker's thread can take the one
// it frees). Closing the handle is the only way to end that loop. The
// socket itself stays open through kept_socket_, so the port stays ours and
// new connections wait in its accept queue, as nginx does when it disables
// accepting on EMFILE; a moment later the listener watches it again.
void Listener::pause() {
  if (!listening_ || stopped_) return;
  HELLO_CHECK(!accept_deferred_);  // libuv does not watch the listener meanwhile
  listening_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ListenerCallbacks::listener_closed);
}

void Listener::on_closed() {
  if (stopped_) return;
  HELLO_CHECK_UV(uv_timer_start(&relisten_timer_, ListenerCallbacks::relisten, kRelistenMs, 0));
}

void Listener::on_relisten() {
  if (stopped_) return;
  int rc;
  if (kept_socket_ >= 0) {
    // The handle takes over the kept descriptor and a new copy is kept.
    if ((rc = uv_tcp_init(loop_, &tcp_)) != 0) return on_closed();
    tcp_.data = this;
    listening_ = true;
    uv_os_fd_t fd = kept_socket_;
    kept_socket_ = -1;
    if ((rc = uv_tcp_open(&tcp_, fd)) != 0) {
      ::close(fd);
    } else if ((rc = uv_listen(reinterpret_cast<uv_stream_t*>(&tcp_), kListenBacklog,
                               ListenerCallbacks::connection)) == 0) {
      keep_socket(fd);
      return;
    }
  } else if ((rc = open()) == 0) {
    return;  // the socket was lost (no descriptor to keep it); bound anew
  }
  if (listening_) {
    pause();  // the half-made listener closes and the timer rearms
  } else {
    on_closed();
  }
}

int Listener::port() const {
  return bound_port(&tcp_);
}

void Listener::on_connection(int status) {
  // Out of descriptors (EMFILE) or a connection reset before accept: libuv
  // has already dropped it; the connections already open are served on.
  if (status < 0) {
    events_->on_accept_error(data_, status);
    if (status == UV_EMFILE || status == UV_ENFILE) pause();
    return;
  }
  if (++accepted_in_batch_ > kAcceptBatch) {
    // Left with libuv, which stops watching the listener until it is
    // accepted: on the next turn, once this one's closed connections are back.
    accept_deferred_ = true;
    HELLO_CHECK_UV(uv_idle_start(&accept_idle_, ListenerCallbacks::resume));
    return;
  }
  events_->on_connection(data_, reinterpret_cast<uv_stream_t*>(&tcp_));
}

void Listener::resume() {
  HELLO_CHECK_UV(uv_idle_stop(&accept_idle_));
  accepted_in_batch_ = 0;
  if (std::exchange(accept_deferred_, false)) on_connection(0);
}

// At stop: connections whose handshake the kernel finished are in the
// queue, and their requests may already be in their buffers. Closing the
// socket would reset them, so they are accepted first.
void Listener::accept_queued() {
  uv_os_fd_t fd;
  if (!listening_ || uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd) != 0) return;
  resume();  // first the one libuv holds, if any
  // Bounded by the listen backlog: the queue holds no more than that.
  for (int i = 0; i < kListenBacklog; ++i) {
    int client = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) break;  // EAGAIN: the queue is empty (or out of descriptors)
    events_->on_socket(data_, client);
  }
}

void Listener::stop() {
  if (stopped_) return;
  accept_queued();
  stopped_ = true;
  if (listening_) uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ListenerCallbacks::closed);
  listening_ = false;
  drop_kept_socket();
  HELLO_CHECK_UV(uv_timer_stop(&relisten_timer_));
}

void Listener::close() {
  stopped_ = true;
  if (listening_) uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ListenerCallbacks::closed);
  listening_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&relisten_timer_), ListenerCallbacks::closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&accept_idle_), ListenerCallbacks::closed);
}

}  // namespace hello
