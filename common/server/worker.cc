#include "server/worker.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "base/check.h"
#include "net/listener.h"
#include "server/connection.h"

namespace hello {

namespace {

// While draining for shutdown, a connection that read nothing, owes
// nothing and is between requests for this long is idle and is closed.
// Requests a client sent before the signal are in our socket buffer well
// within it (loopback or LAN).
constexpr uint64_t kDrainCheckMs = 50;

constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kNsPerSecond = 1000000000;

}  // namespace

struct WorkerCallbacks {
  static Worker* of(void* h) { return static_cast<Worker*>(static_cast<uv_handle_t*>(h)->data); }
  static void date_timer(uv_timer_t* t) { of(t)->on_date_timer(); }
  static void command(uv_async_t* a) { of(a)->on_command(); }
  static void closed(uv_handle_t*) {}
  static void drain_timer(uv_timer_t* t) { of(t)->on_drain_timer(); }
  static void stall(Timer* t) { static_cast<Worker*>(t->data)->on_stall(t); }
  static Worker* self(void* w) { return static_cast<Worker*>(w); }
  static std::unique_ptr<Heart> make_heart(void* w, Protocol p) { return self(w)->make_heart(p); }
  static void release(void* w, Connection* c) { self(w)->release(c); }
  static void connection(void* w, uv_stream_t* server) { self(w)->on_connection(server); }
  static void socket(void* w, uv_os_sock_t fd) { self(w)->on_socket(fd); }
  static void accept_error(void* w, int status) { self(w)->on_accept_error(status); }
  static constexpr Listener::Events kListenerEvents = {connection, socket, accept_error};
};

Worker::Worker(const Persona& persona, const TableOptions& table_options,
               const WorkerOptions& options, int id, LogWriter* log)
    : id_(id),
      table_(persona, table_options),
      options_(options),
      dice_(options.seed + static_cast<uint64_t>(id)),
      access_log_(log != nullptr ? std::make_unique<AccessLog>(*log, id, stats_.log_lines_dropped)
                                 : nullptr),
      accounting_(stats_, &service_time_, access_log_.get()),
      protocol_(protocol_at_accept(table_)),
      context_(&loop_, timers_, accounting_,
               {options.header_timeout_ms, options.keep_alive_timeout_ms, options.send_timeout_ms},
               {this, WorkerCallbacks::make_heart, WorkerCallbacks::release},
               uv_buf_init(read_buffer_, sizeof read_buffer_)) {
  if (options.tls != nullptr) {
    tls_ = std::make_unique<TlsShared>(options.tls->ctx(static_cast<size_t>(id)), accounting_);
    context_.use_tls(tls_.get());
  }
  if (options.h2) {
    h2_answers_ = std::make_unique<H2Answers>(table_);
    h2_setup_.answers = h2_answers_.get();
    h2_setup_.dice = &dice_;
    h2_setup_.streams = &h2_streams_;
    h2_setup_.header_timeout_ns = options.header_timeout_ms * 1000000;
    h2_setup_.send_timeout_ns = options.send_timeout_ms * 1000000;
    h2_setup_.max_body_bytes = options_.limits.max_body_bytes;
    h2_setup_.max_header_list_bytes = options_.limits.max_header_bytes;
    h2_setup_.max_concurrent_streams = options_.h2_max_streams;
    h2_setup_.h2c_upgrade = options.tls == nullptr;  // h2c is HTTP/2 in clear
    h2_setup_.tomcat = persona.h2_tomcat;
    context_.use_h2(true);
  }
  stall_timers_.resize(options_.stalls.size());
  for (Timer& t : stall_timers_) {
    t.on_fire = WorkerCallbacks::stall;
    t.data = this;
  }
}

int Worker::init() {
  int rc = uv_loop_init(&loop_);
  if (rc != 0) return rc;
  loop_ready_ = true;
  if (options_.loop_metrics) HELLO_CHECK_UV(uv_loop_configure(&loop_, UV_METRICS_IDLE_TIME));
  // Cannot fail: a uv_timer_t needs no descriptor.
  HELLO_CHECK_UV(uv_timer_init(&loop_, &date_timer_));
  HELLO_CHECK_UV(uv_timer_init(&loop_, &drain_timer_));
  date_timer_.data = drain_timer_.data = this;
  listener_.init(&loop_, &WorkerCallbacks::kListenerEvents, this);
  // Cannot fail either: a uv_check_t needs no descriptor.
  HELLO_CHECK_UV(read_turns_.init(&loop_));
  if ((rc = timers_.init(&loop_)) != 0 ||
      (rc = uv_async_init(&loop_, &command_async_, WorkerCallbacks::command)) != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&date_timer_), WorkerCallbacks::closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&drain_timer_), WorkerCallbacks::closed);
    listener_.close();
    timers_.close();
    read_turns_.close();
    HELLO_CHECK_UV(uv_run(&loop_, UV_RUN_DEFAULT));
    HELLO_CHECK_UV(uv_loop_close(&loop_));
    loop_ready_ = false;
    return rc;
  }
  command_async_.data = this;
  schedule_date_timer();
  // Every worker counts from the same epoch, so they all stall together.
  for (size_t i = 0; i < stall_timers_.size(); ++i)
    timers_.start_at(&stall_timers_[i],
                     options_.stall_epoch_ns + options_.stalls[i].at_us * kNsPerUs);
  return 0;
}

Worker::~Worker() {
  join();
  if (!loop_ready_) return;
  if (!finished_) {
    // Never started, or startup failed: close what init() opened.
    command_ = 2;
    on_command();
    HELLO_CHECK_UV(uv_run(&loop_, UV_RUN_DEFAULT));
  }
  // The command handle outlives the loop, so that stop() from the main
  // thread never touches a closed handle; it is closed only now.
  uv_close(reinterpret_cast<uv_handle_t*>(&command_async_), WorkerCallbacks::closed);
  HELLO_CHECK_UV(uv_run(&loop_, UV_RUN_DEFAULT));
  HELLO_CHECK(live_ == nullptr);
  HELLO_CHECK_UV(uv_loop_close(&loop_));  // every handle is closed
}

int Worker::listen(const struct sockaddr* addr) {
  return listener_.listen(addr, options_.defer_accept);
}

int Worker::port() const {
  return listener_.port();
}

void Worker::start(int cpu, uv_async_t* done) {
  done_ = done;
  thread_ = std::thread([this] {
    // uv_run returns once stop() has closed every handle; its result (the
    // number of handles still active) is then zero.
    HELLO_CHECK_UV(uv_run(&loop_, UV_RUN_DEFAULT));
    finished_ = true;
    if (done_ != nullptr) HELLO_CHECK_UV(uv_async_send(done_));
  });
  if (cpu >= 0) {
    // Pinned from here, so the pinning is in place when start() returns.
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set);
    if (rc != 0)
      fmt::print(stderr, "worker {}: cannot pin to CPU {}: {}\n", id_, cpu, strerror(rc));
  }
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::stop(bool force) {
  int level = force ? 2 : 1;
  if (command_.load() < level) command_.store(level);
  HELLO_CHECK_UV(uv_async_send(&command_async_));
}

void Worker::on_command() {
  int level = command_.load();
  if (level >= 1 && !stopping_) {
    stopping_ = true;
    stop_stalls();
    listener_.stop();
    for (Connection* c = live_; c != nullptr; c = c->next) c->drain();
    HELLO_CHECK_UV(
        uv_timer_start(&drain_timer_, WorkerCallbacks::drain_timer, kDrainCheckMs, kDrainCheckMs));
  }
  if (level >= 2)
    for (Connection* c = live_; c != nullptr; c = c->next)
      c->close(Connection::CloseReason::shutdown);
  finish_if_done();
}

// Once stopping and every connection is closed, close the worker's own
// handles so the loop ends.
void Worker::finish_if_done() {
  if (!stopping_ || live_ != nullptr || uv_is_closing(reinterpret_cast<uv_handle_t*>(&date_timer_)))
    return;
  accounting_.flush_final();
  uv_close(reinterpret_cast<uv_handle_t*>(&date_timer_), WorkerCallbacks::closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&drain_timer_), WorkerCallbacks::closed);
  listener_.close();
  timers_.close();
  read_turns_.close();
  // Unreferenced, the command handle no longer keeps the loop running.
  uv_unref(reinterpret_cast<uv_handle_t*>(&command_async_));
}

// The stall timers stop with the worker: a stall in progress when the stop
// came has ended by now, and no other begins.
void Worker::stop_stalls() {
  for (Timer& t : stall_timers_) timers_.stop(&t);
}

// A stall of options_.stalls[i]: the thread sleeps and the loop does
// nothing, like a stop-the-world collection, until the end of the window
// [due, due + DURATION). The window is fixed in time rather than counted
// from when the timer fired, so every worker stalls over the same window,
// periodic stalls do not drift, and stalls of two specs that overlap stall
// once, over both windows.
void Worker::on_stall(Timer* t) {
  size_t i = static_cast<size_t>(t - stall_timers_.data());
  HELLO_CHECK(i < stall_timers_.size() && !stopping_);
  const Stall& stall = options_.stalls[i];
  uint64_t now = uv_hrtime();
  uint64_t due = t->due_ns;
  if (stall.every_us != 0) {
    // A stall whose time came while the loop was stalled already (by another
    // spec) is skipped: the window now is the latest one begun. The next
    // begins after it ends, since EVERY is longer than DURATION.
    uint64_t every_ns = stall.every_us * kNsPerUs;
    due += (now - due) / every_ns * every_ns;
    timers_.start_at(t, due + every_ns);
  }
  // A stop asked for from another thread, not yet seen by on_command(), must
  // not wait for a stall that has not begun.
  if (command_.load() != 0) return;
  uint64_t end = due + stall.duration_us * kNsPerUs;
  if (end <= now) return;  // the window passed while the loop was stalled already
  accounting_.stalled();
  struct timespec until;
  until.tv_sec = static_cast<time_t>(end / kNsPerSecond);
  until.tv_nsec = static_cast<long>(end % kNsPerSecond);
  // To an absolute deadline: a signal that interrupts the sleep cannot lengthen it.
  int rc;
  while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr)) == EINTR) {
  }
  HELLO_CHECK(rc == 0);
  // libuv read the time once for this turn of the loop, before the stall;
  // the callbacks still to come in it set deadlines from uv_now(), which
  // would otherwise be early by the whole stall.
  uv_update_time(&loop_);
}

// Takes a connection from the pool and links it into the live list.
Connection* Worker::acquire() {
  Connection* c = connections_.acquire([this] { return std::make_unique<Connection>(context_); });
  c->prev = nullptr;
  c->next = live_;
  if (live_) live_->prev = c;
  live_ = c;
  accounting_.opened();
  return c;
}

// At shutdown: a connection the listener took from its queue, drained
// like the rest.
void Worker::on_socket(uv_os_sock_t fd) {
  accounting_.accepted();
  Connection* c = acquire();
  c->adopt(fd, protocol_);
  if (options_.defer_accept) c->read_now();
}

void Worker::on_accept_error(int) {
  accounting_.accept_failed();
}

void Worker::on_connection(uv_stream_t* server) {
  // Over the limit the connection is accepted only to be closed at once:
  // libuv stops watching the listener until the pending one is accepted.
  bool over_limit = accounting_.open() >= options_.max_connections;
  Connection* c = acquire();
  c->accept(server, protocol_);
  if (over_limit) {
    c->close(Connection::CloseReason::limit);  // counted as rejected
    return;
  }
  accounting_.accepted();
  if (options_.defer_accept) c->read_now();
}

void Worker::release(Connection* c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    live_ = c->next;
  if (c->next) c->next->prev = c->prev;
  connections_.release(c);
  finish_if_done();
}

std::unique_ptr<Heart> Worker::make_heart(Protocol protocol) {
  return hello::make_heart(protocol, table_, accounting_, options_.limits, &dice_,
                           h2_answers_ ? &h2_setup_ : nullptr);
}

void Worker::on_drain_timer() {
  uint64_t now_ms = uv_now(&loop_);
  for (Connection* c = live_; c != nullptr; c = c->next) c->check_drain(now_ms);
}

// Once a second, just after the second begins: the Date value, the
// deadlines, the access log's second and its flush, and the next tick.
void Worker::on_date_timer() {
  time_t now = time(nullptr);
  refresh_date(now);
  sweep_deadlines();
  accounting_.tick(now);
  schedule_date_timer();
}

void Worker::refresh_date(time_t now) {
  table_.set_date(now);
}

// Deadlines are checked here, once a second, rather than with a timer per
// request: a request costs a timestamp, and a deadline fires at most a
// second late.
void Worker::sweep_deadlines() {
  uint64_t now_ms = uv_now(&loop_);
  for (Connection* c = live_; c != nullptr; c = c->next) c->check_deadlines(now_ms);
}

// Fires just after the next wall-clock second begins, so the Date value
// changes within a millisecond of the second it names.
void Worker::schedule_date_timer() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  uint64_t ms = 1000 - static_cast<uint64_t>(tv.tv_usec / 1000) + 1;
  HELLO_CHECK_UV(uv_timer_start(&date_timer_, WorkerCallbacks::date_timer, ms, 0));
  // The clock alone must not keep the loop alive once the rest is closed.
  uv_unref(reinterpret_cast<uv_handle_t*>(&date_timer_));
}

}  // namespace hello
