// The session's side of the connection: its streams as the connection
// tells of them (H2Events), and the bytes in. What a stream is answered
// with is in h2_session_answer.cc; the bytes out and the times it waits
// for in h2_session_output.cc.
#include "http2/h2_session.h"

#include <charconv>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "base/recycled.h"
#include "persona/routes_file.h"

namespace hello {

namespace {

void* mem_malloc(size_t n, void*) {
  return recycled_malloc(n);
}
void mem_free(void* p, void*) {
  recycled_free(p);
}
void* mem_calloc(size_t count, size_t n, void*) {
  void* p = recycled_malloc(count * n);
  if (p != nullptr) memset(p, 0, count * n);
  return p;
}
void* mem_realloc(void* p, size_t n, void*) {
  return recycled_realloc(p, n);
}
nghttp2_mem kMem = {nullptr, mem_malloc, mem_free, mem_calloc, mem_realloc};

int method_of(std::string_view m) {
  if (m == "GET") return kGet;
  if (m == "HEAD") return kHead;
  return http_method_of(m);
}

constexpr std::string_view kShapeField = "x-hello-shape";

void keep_shape(H2Stream& s, std::string_view text) {
  if (s.shape_text.size() + text.size() > H2Stream::kMaxShapeText)
    s.shape_overflow = true;
  else
    s.shape_text.append(text);
}

}  // namespace

nghttp2_mem* h2_memory() {
  return kRecycling ? &kMem : nullptr;
}

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

void H2Stream::begin(uint64_t now_ns) {
  state = State::receiving;
  method = -1;
  match = {-1, false, -1};
  echo = shape_overflow = closes = refused = false;
  path.clear();
  shape_text.clear();
  body.clear();
  body_bytes = 0;
  begun_ns = now_ns;
  due_ns = 0;
  answer.kind = Answer::Kind::usual;
  block = {};
  status = 0;
  source = {};
  sent = due = 0;
  drip = {};
  queue_next = nullptr;
}

H2Session::H2Session(const ResponseTable& table, const H2Setup& setup, Accounting& accounting)
    : table_(table),
      setup_(setup),
      accounting_(accounting),
      connection_(*this, setup_, accounting),
      streams_(setup.streams != nullptr ? setup.streams : &own_streams_) {
  HELLO_CHECK(setup_.answers != nullptr && (setup_.dice != nullptr || !table.shaping()));
}

H2Session::~H2Session() {
  while (live_ != nullptr) unlink(*live_);
}

H2Flow& H2Session::opened(uint32_t) {
  H2Stream* s = streams_->acquire([] { return std::make_unique<H2Stream>(); });
  s->begin(0);  // stamped once the feed is over (step())
  link(*s);
  ++incomplete_;
  return *s;
}

void H2Session::field(H2Flow& f, std::string_view n, std::string_view v) {
  auto& s = static_cast<H2Stream&>(f);
  if (s.state != H2Stream::State::receiving) return;  // refused for its Content-Length
  if (n == ":method") {
    s.method = method_of(v);
  } else if (n == ":path") {
    s.path.assign(v);
    size_t q = v.find('?');
    if (q != std::string_view::npos && table_.shape_requests()) keep_shape(s, v.substr(q + 1));
  } else if (n == kShapeField && table_.shape_requests()) {
    if (!s.shape_text.empty()) keep_shape(s, "&");
    keep_shape(s, v);
  } else if (n == "content-length") {
    // Digits alone, checked: over the limit, 413 without waiting for the DATA.
    if (s.check.content_length() > static_cast<int64_t>(setup_.max_body_bytes)) refuse_body(s);
  }
}

// The request's head: its route, which decides whether its body is kept.
void H2Session::head(H2Flow& f) {
  auto& s = static_cast<H2Stream&>(f);
  if (s.state != H2Stream::State::receiving) return;
  std::string_view path = s.path;
  s.match = table_.match(path.substr(0, path.find('?')), s.method);
  s.echo = s.match.route >= 0 && table_.echo(s.match.route);
}

void H2Session::data(H2Flow& f, const char* bytes, size_t n) {
  auto& s = static_cast<H2Stream&>(f);
  if (s.state != H2Stream::State::receiving) return;
  s.body_bytes += n;
  if (s.body_bytes > setup_.max_body_bytes) {
    refuse_body(s);
    return;
  }
  if (s.echo) s.body.append(bytes, n);
}

void H2Session::ended(H2Flow& f) {
  auto& s = static_cast<H2Stream&>(f);
  if (s.state != H2Stream::State::receiving) return;
  --incomplete_;
  s.state = H2Stream::State::waiting;
  queue(s);
}

void H2Session::closed(H2Flow& f) {
  auto& s = static_cast<H2Stream&>(f);
  if (s.state == H2Stream::State::receiving) --incomplete_;  // reset before its end
  if (s.queued) {                                            // out of the read's queue of answers
    H2Stream* before = nullptr;
    for (H2Stream* q = queue_; q != &s; q = q->queue_next) before = q;
    (before != nullptr ? before->queue_next : queue_) = s.queue_next;
    if (queue_last_ == &s) queue_last_ = before;
  }
  if (upgraded_ == &s) upgraded_ = nullptr;
  // A shape's `close`: GOAWAY once its stream is done.
  if (s.closes) connection_.go_away(h2::kNoError, *out_);
  unlink(s);
}

void H2Session::link(H2Stream& s) {
  s.prev = nullptr;
  s.next = live_;
  if (live_ != nullptr) live_->prev = &s;
  live_ = &s;
  ++live_count_;
}

void H2Session::unlink(H2Stream& s) {
  if (s.prev != nullptr)
    s.prev->next = s.next;
  else
    live_ = s.next;
  if (s.next != nullptr) s.next->prev = s.prev;
  --live_count_;
  // A pooled stream keeps modest buffers, not the largest body ever.
  if (s.body.capacity() > 64 * 1024) std::string().swap(s.body);
  if (s.text.capacity() > 64 * 1024) std::string().swap(s.text);
  streams_->release(&s);
}

Fed H2Session::upgraded(const Upgrade& u, std::string& out) {
  static constexpr std::string_view kSwitching =
      "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
  static constexpr std::string_view kTomcatSwitching =
      "HTTP/1.1 101 \r\nConnection: Upgrade\r\nUpgrade: h2c\r\nDate: ";
  Fed fed;
  if (!H2Connection::settings_valid(u.settings)) {
    // HTTP2-Settings holds a value SETTINGS may not: 400 in HTTP/1.1, and close.
    const PreparedResponse& bad = table_.error(400, Variant::close_11);
    out.append(bad.bytes);
    Answered a;
    a.status = static_cast<uint16_t>(bad.status);
    a.kind = Answered::Kind::malformed;
    accounting_.answered(a);
    fed.next = Fed::Next::close;
    fed.clean_end = true;
    fed.answered = 1;
    return fed;
  }
  if (setup_.tomcat) {
    const PreparedResponse& any = table_.route(0, Variant::keep_alive_11);
    out.append(kTomcatSwitching);
    if (any.date_offset >= 0) out.append(any.bytes, static_cast<size_t>(any.date_offset), 29);
    out.append("\r\n\r\n");
  } else {
    out.append(kSwitching);
  }
  uint32_t before = answered_;
  begin_output(out);
  auto* s = static_cast<H2Stream*>(connection_.upgrade(u.settings));
  HELLO_CHECK(s != nullptr);
  --incomplete_;  // its request has ended: it came whole in HTTP/1.1
  s->begun_ns = setup_.clock();
  s->method = u.method == kHead && setup_.tomcat ? kGet : u.method;
  s->path.assign(u.path);
  s->shape_text.assign(u.shape);
  s->match = table_.match(u.path, s->method);
  s->echo = s->match.route >= 0 && table_.echo(s->match.route);
  s->state = H2Stream::State::waiting;
  if (setup_.tomcat)
    upgraded_ = s;  // answered once the client's preface has come
  else
    request_ended(*s);
  deliver_all();
  fed = step(connection_.open());
  fed.answered = answered_ - before;
  out_ = nullptr;
  return fed;
}

void H2Session::go_away(std::string& out) {
  begin_output(out);
  connection_.go_away(h2::kNoError, out);
  out_ = nullptr;
}

Fed H2Session::feed(const char* data, size_t len, std::string& out) {
  uint32_t before = answered_;
  begin_output(out);
  connection_.feed(data, len, out);
  after_read();
  Fed fed = step(connection_.open());
  fed.consumed = len;
  fed.answered = answered_ - before;
  out_ = nullptr;
  return fed;
}

Fed H2Session::resume(std::string& out) {
  uint32_t before = answered_;
  begin_output(out);
  wake_due(setup_.clock());
  deliver_all();
  Fed fed = step(connection_.open() && timed_out_ == Fed::Timeout::none);
  fed.answered = answered_ - before;
  out_ = nullptr;
  return fed;
}

}  // namespace hello
