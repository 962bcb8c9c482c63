// A worker's listening socket: SO_REUSEPORT so that every worker has its
// own on one address, TCP_NODELAY for the sockets it accepts to inherit,
// TCP_DEFER_ACCEPT unless asked otherwise, accepting in batches, pausing
// while descriptors run out, and taking what waits in its queue at stop.
#pragma once

#include <uv.h>

#include <sys/socket.h>

namespace hello {

class Listener {
 public:
  // What the listener reports to its owner: plain callbacks with their
  // `data` (see Transport::Events for why).
  struct Events {
    // A connection waits on `server`: accept it (uv_accept) now.
    void (*on_connection)(void* data, uv_stream_t* server);
    // A connection accepted outside libuv, at stop(): its socket.
    void (*on_socket)(void* data, uv_os_sock_t fd);
    // An accept failed (a libuv error: EMFILE, a reset before accept).
    void (*on_accept_error)(void* data, int status);
  };

  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Its timer and idle handle on `loop` (cannot fail); reports to
  // `events` (a table that outlives it) with `data`.
  void init(uv_loop_t* loop, const Events* events, void* data);
  // Binds `addr` with SO_REUSEPORT and listens; `defer_accept`: the kernel
  // hands a connection over once its first bytes are in. 0 or a libuv error.
  int listen(const struct sockaddr* addr, bool defer_accept);
  // The port it is bound to (useful after binding port 0), or -1.
  int port() const;
  // Stops accepting for good: first every connection already in the
  // queue (on_socket), since closing the socket would reset them.
  void stop();
  // Closes its handles once stopped (or if listen() was never called).
  void close();

 private:
  friend struct ListenerCallbacks;

  int open();
  void keep_socket(uv_os_fd_t fd);
  void drop_kept_socket();
  void pause();
  void on_closed();
  void on_relisten();
  void on_connection(int status);
  void resume();
  void accept_queued();

  uv_loop_t* loop_ = nullptr;
  const Events* events_ = nullptr;
  void* data_ = nullptr;
  uv_tcp_t tcp_;
  uv_timer_t relisten_timer_;
  // Accepting goes on here, the next loop turn, after a full batch.
  uv_idle_t accept_idle_;
  int accepted_in_batch_ = 0;
  bool accept_deferred_ = false;  // libuv holds an accepted socket for us
  struct sockaddr_storage address_;
  bool defer_accept_ = true;
  int kept_socket_ = -1;  // a second descriptor of the listening socket
  bool listening_ = false;
  bool stopped_ = false;
};

}  // namespace hello
