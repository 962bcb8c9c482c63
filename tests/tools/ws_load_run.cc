// One ws_load run: see ws_load_run.h.
#include "ws_load_run.h"

#include <openssl/rand.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>

#include "ws_load_tls.h"

namespace ws_load {
namespace {

Run* of(void* data) {
  return static_cast<Run*>(data);
}

void on_timer(uv_timer_t* timer) {
  of(timer->data)->on_timer();
}

void on_check(uv_check_t* check) {
  of(check->data)->on_check();
}

void on_handle_closed(uv_handle_t*) {}

uint64_t random_seed() {
  uint64_t seed = 0;
  expect(RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof seed) == 1,
         "RAND_bytes failed");
  return seed;
}

// This process's user and system CPU time so far, in seconds.
double cpu_seconds() {
  rusage usage{};
  expect(getrusage(RUSAGE_SELF, &usage) == 0, "getrusage failed");
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

uint64_t to_ms(double seconds) {
  return static_cast<uint64_t>(std::llround(seconds * 1000));
}

}  // namespace

Run::Run(const Options& opt, const sockaddr* address)
    : opt_(opt),
      session_(opt, random_seed()),
      read_buffer_(new uint8_t[kReadBufferSize]),
      plain_buffer_(new uint8_t[kPlainBufferSize]) {
  shared_.loop = &loop_;
  shared_.address = address;
  shared_.session = &session_;
  shared_.owner = this;
  shared_.read_buffer = read_buffer_.get();
  shared_.plain_buffer = plain_buffer_.get();
}

Run::~Run() {
  // Every handle is closed when run() returns; the connections go first,
  // as their sessions hold references into session_.
  conns_.clear();
  if (loop_ready_) expect(uv_loop_close(&loop_) == 0, "the loop still has handles at the end");
  SSL_CTX_free(tls_);
}

std::string Run::init() {
  if (opt_.tls) {
    std::string error;
    if ((tls_ = make_tls_context(error)) == nullptr) return error;
    shared_.tls = tls_;
  }
  if (int rc = uv_loop_init(&loop_); rc < 0)
    return fmt::format("uv_loop_init: {}", uv_strerror(rc));
  loop_ready_ = true;
  expect(uv_timer_init(&loop_, &timer_) == 0, "uv_timer_init failed");
  expect(uv_check_init(&loop_, &check_) == 0, "uv_check_init failed");
  timer_.data = this;
  check_.data = this;
  expect(uv_check_start(&check_, ws_load::on_check) == 0, "uv_check_start failed");
  conns_.reserve(opt_.connections);
  for (size_t i = 0; i < opt_.connections; ++i)
    conns_.push_back(std::make_unique<Connection>(shared_));
  dirty_.reserve(opt_.connections);
  return {};
}

Result Run::run() {
  start_timer(to_ms(opt_.timeout));
  start_connects();
  // The timer ends each phase, so this returns within --timeout, --warmup,
  // --seconds and kCloseWaitMs of its start.
  int rc = uv_run(&loop_, UV_RUN_DEFAULT);
  expect(rc == 0 && phase_ == Phase::kDone, "the loop stopped before the run was done");
  return collect();
}

void Run::on_open(Connection&) {
  expect(phase_ == Phase::kConnecting, "a connection opened after connecting ended");
  --connecting_;
  ++open_;
  start_connects();
  maybe_connected();
}

void Run::on_closed(Connection& c) {
  if (c.outcome() == Connection::Outcome::kHandshakeFailed)
    --connecting_;
  else
    --open_;
  switch (phase_) {
    case Phase::kConnecting:
      start_connects();
      maybe_connected();
      break;
    case Phase::kWarmup:
    case Phase::kMeasuring:
      // Nothing is left to measure.
      if (open_ == 0) end_measure();
      break;
    case Phase::kClosing:
      if (open_ == 0) finish();
      break;
    case Phase::kDone:
      internal_error("a connection closed after the run was done");
  }
}

void Run::queue_flush(Connection& c) {
  dirty_.push_back(&c);
}

void Run::on_timer() {
  switch (phase_) {
    case Phase::kConnecting:
      connect_timed_out();
      break;
    case Phase::kWarmup:
      begin_measure();
      break;
    case Phase::kMeasuring:
      end_measure();
      break;
    case Phase::kClosing:
      close_unanswered();
      break;
    case Phase::kDone:
      break;
  }
  // Timers run before the loop polls, and it would sleep in the poll with
  // what the phase just framed still unsent.
  on_check();
}

void Run::on_check() {
  // flush() queues nothing itself, so the list does not grow under us.
  for (size_t i = 0; i < dirty_.size(); ++i) dirty_[i]->flush();
  dirty_.clear();
}

// Starts connections until kMaxConnecting are under way.
void Run::start_connects() {
  while (phase_ == Phase::kConnecting && connecting_ < kMaxConnecting &&
         next_start_ < conns_.size()) {
    if (conns_[next_start_++]->start()) ++connecting_;
  }
}

void Run::connect_timed_out() {
  std::string why =
      fmt::format("timed out before the WebSocket opened (--timeout {})", opt_.timeout);
  for (; next_start_ < conns_.size(); ++next_start_) conns_[next_start_]->abandon(why);
  for (auto& c : conns_) {
    if (c->phase() < Connection::Phase::kOpen && c->phase() != Connection::Phase::kClosed)
      c->close(Connection::Outcome::kHandshakeFailed, why);
  }
  // Those closing count in on_closed; when none was, warm-up begins now.
  maybe_connected();
}

// Warm-up begins once every connection is open or has failed.
void Run::maybe_connected() {
  if (phase_ == Phase::kConnecting && connecting_ == 0 && next_start_ == conns_.size())
    begin_warmup();
}

void Run::begin_warmup() {
  phase_ = Phase::kWarmup;
  uv_timer_stop(&timer_);
  if (open_ == 0) return finish();
  for (auto& c : conns_) {
    if (c->phase() == Connection::Phase::kOpen) c->start_sending();
  }
  start_timer(to_ms(opt_.warmup));
}

void Run::begin_measure() {
  phase_ = Phase::kMeasuring;
  echoes_start_ = session_.echoes;
  start_ns_ = uv_hrtime();
  cpu_start_s_ = cpu_seconds();
  start_timer(to_ms(opt_.seconds));
}

void Run::end_measure() {
  end_ns_ = uv_hrtime();
  cpu_end_s_ = cpu_seconds();
  echoes_end_ = session_.echoes;
  if (phase_ == Phase::kWarmup) {
    // Every connection ended during the warm-up: an empty window.
    start_ns_ = end_ns_, cpu_start_s_ = cpu_end_s_, echoes_start_ = echoes_end_;
  }
  phase_ = Phase::kClosing;
  if (open_ == 0) return finish();
  for (auto& c : conns_) c->send_close();
  start_timer(kCloseWaitMs);
}

void Run::close_unanswered() {
  std::string why = fmt::format("no close from the server within {} ms", kCloseWaitMs);
  for (auto& c : conns_) {
    if (c->phase() == Connection::Phase::kOpen) c->close(Connection::Outcome::kFailed, why);
  }
}

void Run::finish() {
  phase_ = Phase::kDone;
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), on_handle_closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), on_handle_closed);
}

void Run::start_timer(uint64_t ms) {
  expect(uv_timer_start(&timer_, ws_load::on_timer, ms, 0) == 0, "uv_timer_start failed");
}

Result Run::collect() const {
  Result r;
  r.seconds = static_cast<double>(end_ns_ - start_ns_) / kNsPerSecond;
  r.messages = echoes_end_ - echoes_start_;
  r.rate = r.seconds > 0 ? static_cast<double>(r.messages) / r.seconds : 0;
  r.tool_cpu_s = cpu_end_s_ - cpu_start_s_;
  for (const auto& c : conns_) {
    switch (c->outcome()) {
      case Connection::Outcome::kHandshakeFailed:
        ++r.handshake_failures;
        ++r.reasons[c->failure()];
        continue;
      case Connection::Outcome::kFailed:
        ++r.errors;
        ++r.reasons[c->failure()];
        break;
      case Connection::Outcome::kClean:
        break;
      case Connection::Outcome::kNone:
        internal_error("a connection neither ended cleanly nor failed at the end");
    }
    ++r.opened;
    if (c->deflate()) ++r.deflated;
  }
  return r;
}

}  // namespace ws_load
