#include "worker.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cassert>

#include "connection.h"

namespace hello {

namespace {

// The kernel clamps this to net.core.somaxconn (4096 on current kernels);
// ab -c 1000 opens its connections at once and needs room for all of them.
constexpr int kListenBacklog = 4096;

}  // namespace

struct WorkerCallbacks {
  static Worker* of(uv_handle_t* h) { return static_cast<Worker*>(h->data); }
  static void connection(uv_stream_t* s, int status) {
    of(reinterpret_cast<uv_handle_t*>(s))->on_connection(status);
  }
  static void date_timer(uv_timer_t* t) { of(reinterpret_cast<uv_handle_t*>(t))->on_date_timer(); }
  static void closed(uv_handle_t*) {}
};

Worker::Worker(const Persona& persona, const TableOptions& options) : table_(persona, options) {
  int rc = uv_loop_init(&loop_);
  assert(rc == 0);
  rc = uv_timer_init(&loop_, &date_timer_);
  assert(rc == 0);
  (void)rc;
  date_timer_.data = this;
  listener_.data = this;
  // A few hundred pipelined responses per read fit without growing.
  output_.reserve(256 * 1024);
  schedule_date_timer();
}

Worker::~Worker() {
  if (!stopping_) {
    // Startup failed before run(): close what the constructor opened.
    stop();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  assert(live_ == nullptr);
  for (Connection* c : spare_) delete c;
  // Every handle is closed by stop(); closing the loop checks that.
  int rc = uv_loop_close(&loop_);
  assert(rc == 0);
  (void)rc;
}

int Worker::listen(const struct sockaddr* addr) {
  int rc = uv_tcp_init_ex(&loop_, &listener_, addr->sa_family);
  if (rc != 0) return rc;
  listening_ = true;
  // libuv 1.44 has no UV_TCP_REUSEPORT: set it on the fd before binding so
  // every worker can own a listener on the same address.
  uv_os_fd_t fd;
  if ((rc = uv_fileno(reinterpret_cast<uv_handle_t*>(&listener_), &fd)) != 0) return rc;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0)
    return uv_translate_sys_error(errno);
  if ((rc = uv_tcp_bind(&listener_, addr, 0)) != 0) return rc;
  return uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), kListenBacklog,
                   WorkerCallbacks::connection);
}

int Worker::port() const {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (uv_tcp_getsockname(&listener_, reinterpret_cast<struct sockaddr*>(&ss), &len) != 0) return -1;
  if (ss.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<struct sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<struct sockaddr_in*>(&ss)->sin_port);
}

void Worker::run() {
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void Worker::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (listening_) uv_close(reinterpret_cast<uv_handle_t*>(&listener_), WorkerCallbacks::closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&date_timer_), WorkerCallbacks::closed);
  for (Connection* c = live_; c != nullptr; c = c->next) c->close();
}

void Worker::on_connection(int status) {
  // Out of descriptors (EMFILE) or a connection reset before accept: libuv
  // has already dropped it; keep serving the connections we have.
  if (status < 0 || stopping_) return;
  Connection* c;
  if (spare_.empty()) {
    c = new Connection(*this);
  } else {
    c = spare_.back();
    spare_.pop_back();
  }
  c->prev = nullptr;
  c->next = live_;
  if (live_) live_->prev = c;
  live_ = c;
  c->start(reinterpret_cast<uv_stream_t*>(&listener_));
}

void Worker::release(Connection* c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    live_ = c->next;
  if (c->next) c->next->prev = c->prev;
  spare_.push_back(c);
}

void Worker::on_date_timer() {
  table_.set_date(time(nullptr));
  schedule_date_timer();
}

// Fires just after the next wall-clock second begins, so the Date value
// changes within a millisecond of the second it names.
void Worker::schedule_date_timer() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  uint64_t ms = 1000 - static_cast<uint64_t>(tv.tv_usec / 1000) + 1;
  uv_timer_start(&date_timer_, WorkerCallbacks::date_timer, ms, 0);
  // The clock alone must not keep the loop alive once stop() closed the rest.
  uv_unref(reinterpret_cast<uv_handle_t*>(&date_timer_));
}

}  // namespace hello
