// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_session.cc), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
// The session's nghttp2 side: its callbacks, the bytes in and out, and the
// times it waits for. What a stream is answered with is in h2_session_answer.cc.
#include "reference/h2_session.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "base/recycled.h"
#include "persona/routes_file.h"

namespace hello::reference {

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

std::string_view view(const uint8_t* p, size_t n) {
  return {reinterpret_cast<const char*>(p), n};
}

int method_of(std::string_view m) {
  if (m == "GET") return kGet;
  if (m == "HEAD") return kHead;
  return http_method_of(m);
}

constexpr std::string_view kShapeField = "x-hello-shape";

}  // namespace

nghttp2_mem* h2_memory() {
  return kRecycling ? &kMem : nullptr;
}

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

struct H2Callbacks {
  static H2Session& of(void* user) { return *static_cast<H2Session*>(user); }

  static int begin_headers(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    H2Session& self = of(user);
    H2Stream* s = self.streams_->acquire([] { return std::make_unique<H2Stream>(); });
    s->begin(frame->hd.stream_id, 0);  // stamped once the feed is over (step())
    self.link(*s);
    ++self.incomplete_;
    self.guard_.stream_opened();
    nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, s);
    return 0;
  }

  static int header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                    size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    H2Session& self = of(user);
    H2Stream* s = self.stream(frame->hd.stream_id);
    if (s == nullptr) return 0;
    // Counted whatever the stream's state (one refused for its
    // Content-Length goes on), and the rest is neither checked nor seen.
    if (!self.guard_.field_fits(namelen, valuelen)) return self.refuse_fields(*s);
    if (s->state != H2Stream::State::receiving) return 0;
    std::string_view n = view(name, namelen);
    std::string_view v = view(value, valuelen);
    if (n == "content-length" && !self.guard_.length_fits(value, valuelen)) {
      self.refuse_body(*s);  // at once, without waiting for the DATA
      return 0;
    }
    if (n == ":method") {
      s->method = method_of(v);
    } else if (n == ":path") {
      s->path.assign(v);
      size_t q = v.find('?');
      if (q != std::string_view::npos && self.table_.shape_requests())
        keep_shape(*s, v.substr(q + 1));
    } else if (n == kShapeField && self.table_.shape_requests()) {
      if (!s->shape_text.empty()) keep_shape(*s, "&");
      keep_shape(*s, v);
    }
    return 0;
  }

  static void keep_shape(H2Stream& s, std::string_view text) {
    if (s.shape_text.size() + text.size() > H2Stream::kMaxShapeText)
      s.shape_overflow = true;
    else
      s.shape_text.append(text);
  }

  static int data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data,
                        size_t len, void* user) {
    H2Session& self = of(user);
    H2Stream* s = self.stream(stream_id);
    if (s == nullptr || s->state != H2Stream::State::receiving) return 0;
    s->body_bytes += len;
    if (s->body_bytes > self.setup_.max_body_bytes) {
      self.refuse_body(*s);
      return 0;
    }
    if (s->echo) s->body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    H2Session& self = of(user);
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
    H2Stream* s = self.stream(frame->hd.stream_id);
    if (s == nullptr || s->state != H2Stream::State::receiving) return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      // The request's head: its route, which decides whether its body is kept.
      std::string_view path = s->path;
      s->match = self.table_.match(path.substr(0, path.find('?')), s->method);
      s->echo = s->match.route >= 0 && self.table_.echo(s->match.route);
    }
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) self.request_ended(*s);
    return 0;
  }

  // RST_STREAM and GOAWAY counted; Tomcat's way only: once the ACK of the
  // client's first SETTINGS is out.
  static int frame_sent(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    of(user).guard_.on_frame_sent(*frame);
    if (of(user).setup_.tomcat && frame->hd.type == NGHTTP2_SETTINGS &&
        (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0)
      of(user).after_first_settings();
    return 0;
  }

  static int begin_frame(nghttp2_session* session, const nghttp2_frame_hd* hd, void* user) {
    return of(user).guard_.on_begin_frame(session, *hd);
  }
  static int invalid_frame(nghttp2_session*, const nghttp2_frame*, int lib_error, void* user) {
    of(user).guard_.on_invalid_frame(lib_error);
    return 0;
  }

  static int stream_close(nghttp2_session* session, int32_t stream_id, uint32_t, void* user) {
    H2Session& self = of(user);
    H2Stream* s = self.stream(stream_id);
    if (s == nullptr) return 0;
    nghttp2_session_set_stream_user_data(session, stream_id, nullptr);
    if (s->state == H2Stream::State::receiving) --self.incomplete_;  // reset before its end
    self.guard_.stream_closed();
    // A shape's `close`: GOAWAY once its stream is done.
    if (s->closes)
      nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE,
                            nghttp2_session_get_last_proc_stream_id(session), NGHTTP2_NO_ERROR,
                            nullptr, 0);
    self.unlink(*s);
    return 0;
  }

  // The body's last DATA; a refused request's stream is then reset.
  static void end(H2Session& self, H2Stream& s, uint32_t* flags) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (s.refused)
      nghttp2_submit_rst_stream(self.session_, NGHTTP2_FLAG_NONE, s.id, NGHTTP2_NO_ERROR);
  }

  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void* user) {
    H2Session& self = of(user);
    H2Stream* s = self.stream(stream_id);
    if (s == nullptr) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    const BodySource& src = s->source;
    if (s->sent == s->due) {
      if (s->sent < src.length) return NGHTTP2_ERR_DEFERRED;  // a drip's next piece
      end(self, *s, flags);                                   // the empty DATA that ends it
      return 0;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(length, s->due - s->sent));
    for (size_t at = 0; at < n;) {
      size_t offset = static_cast<size_t>((s->sent + at) % src.period);
      size_t piece = std::min(n - at, src.period - offset);
      memcpy(buf + at, src.base + offset, piece);
      at += piece;
    }
    s->sent += n;
    self.progress_ns_ = 0;  // stamped once the drain is over
    if (s->sent == src.length && !self.setup_.tomcat) end(self, *s, flags);
    return static_cast<ssize_t>(n);
  }
};

ssize_t h2_read_body(nghttp2_session* session, int32_t stream_id, uint8_t* buf, size_t length,
                     uint32_t* flags, nghttp2_data_source* source, void* user) {
  return H2Callbacks::read_body(session, stream_id, buf, length, flags, source, user);
}

void H2Stream::begin(int32_t stream_id, uint64_t now_ns) {
  state = State::receiving;
  id = stream_id;
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
  fields = nullptr;
  field_count = 0;
  status = 0;
  source = {};
  sent = due = 0;
  drip = {};
}

H2Session::H2Session(const ResponseTable& table, const H2Setup& setup, Accounting& accounting)
    : table_(table),
      setup_(setup),
      accounting_(accounting),
      guard_(setup_, accounting),
      streams_(setup.streams != nullptr ? setup.streams : &own_streams_) {
  HELLO_CHECK(setup_.answers != nullptr && (setup_.dice != nullptr || !table.shaping()));
  nghttp2_session_callbacks* cb = nullptr;
  HELLO_CHECK(nghttp2_session_callbacks_new(&cb) == 0);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, H2Callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, H2Callbacks::header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, H2Callbacks::data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, H2Callbacks::frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, H2Callbacks::stream_close);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, H2Callbacks::frame_sent);
  nghttp2_session_callbacks_set_on_begin_frame_callback(cb, H2Callbacks::begin_frame);
  nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, H2Callbacks::invalid_frame);
  nghttp2_option* opt = H2Guard::options();
  nghttp2_mem* memory = setup.memory != nullptr ? setup.memory : h2_memory();
  int rc = nghttp2_session_server_new3(&session_, cb, this, opt, memory);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  HELLO_CHECK(rc == 0);
  guard_.submit_settings(session_);
}

int H2Session::refuse_fields(H2Stream& s) {
  if (s.state == H2Stream::State::receiving) --incomplete_;
  s.state = H2Stream::State::done;
  return guard_.refuse_header_list(session_, s.id);
}

H2Session::~H2Session() {
  nghttp2_session_del(session_);  // closes no stream through the callbacks
  while (live_ != nullptr) unlink(*live_);
}

H2Stream* H2Session::stream(int32_t id) const {
  return static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session_, id));
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

// Tomcat pings once its ACK of the client's SETTINGS is out, and answers an
// upgraded request only then (tests/fixtures/personas/spring/h2/README.md).
void H2Session::after_first_settings() {
  if (!pinged_) {
    pinged_ = true;
    uint8_t opaque[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, opaque);
  }
  if (upgraded_ != nullptr) request_ended(*std::exchange(upgraded_, nullptr));
}

Fed H2Session::upgraded(const Upgrade& u, std::string& out) {
  static constexpr std::string_view kSwitching =
      "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
  static constexpr std::string_view kTomcatSwitching =
      "HTTP/1.1 101 \r\nConnection: Upgrade\r\nUpgrade: h2c\r\nDate: ";
  uint32_t before = answered_;
  Fed fed;
  bool head = u.method == kHead && !setup_.tomcat;
  if (!H2Guard::settings_valid(u.settings) ||
      nghttp2_session_upgrade2(session_, reinterpret_cast<const uint8_t*>(u.settings.data()),
                               u.settings.size(), head, nullptr) != 0) {
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
  H2Stream* s = streams_->acquire([] { return std::make_unique<H2Stream>(); });
  s->begin(1, setup_.clock());
  link(*s);
  ++incomplete_;
  guard_.stream_opened();
  nghttp2_session_set_stream_user_data(session_, 1, s);
  s->method = u.method == kHead && setup_.tomcat ? kGet : u.method;
  s->path.assign(u.path);
  s->shape_text.assign(u.shape);
  s->match = table_.match(u.path, s->method);
  s->echo = s->match.route >= 0 && table_.echo(s->match.route);
  if (setup_.tomcat)
    upgraded_ = s;
  else
    request_ended(*s);
  fed = step(drain(out));
  fed.answered = answered_ - before;
  return fed;
}

void H2Session::go_away(std::string& out) {
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
  drain(out);
}

// Sends what nghttp2 has queued, up to about kMaxOutput. False once both
// sides are done (GOAWAY and no stream left) or the session failed.
bool H2Session::drain(std::string& out) {
  size_t start = out.size();
  more_ = false;
  for (;;) {
    if (out.size() - start >= kMaxOutput) {
      more_ = nghttp2_session_want_write(session_) != 0;
      break;
    }
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return false;
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0;
}

Fed H2Session::feed(const char* data, size_t len, std::string& out) {
  uint32_t before = answered_;
  ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(data), len);
  // On a bad frame nghttp2 has queued the GOAWAY it gets; a flood or a bad
  // preface gets ours.
  if (n < 0) guard_.recv_failed(session_, n);
  bool open = drain(out) && n >= 0;
  Fed fed = step(open);
  fed.consumed = len;
  fed.answered = answered_ - before;
  return fed;
}

Fed H2Session::resume(std::string& out) {
  uint32_t before = answered_;
  wake_due(setup_.clock());
  bool open = drain(out) && timed_out_ == Fed::Timeout::none;
  Fed fed = step(open);
  fed.answered = answered_ - before;
  return fed;
}

// What the connection does next, and when the session wants resume().
Fed H2Session::step(bool open) {
  Fed fed;
  if (!open) {
    fed.next = Fed::Next::close;
    // Never a clean end: a GOAWAY for an error (a flood, a bad frame) is
    // read by the client only if the close waits for its FIN, since a
    // client that floods is still writing (a close with its bytes unread
    // is a reset).
    fed.clean_end = false;
    fed.timeout = timed_out_;
    return fed;
  }
  fed.partial = live_count_ > 0;
  if (more_) {
    fed.wake_us = 0;
    return fed;
  }
  if (live_count_ == 0) {
    progress_ns_ = 0;  // a stream held back later is timed from then
    return fed;        // and no clock is read for the common case
  }
  uint64_t now = setup_.clock();
  if (progress_ns_ == 0) progress_ns_ = now;
  uint64_t wake = UINT64_MAX;
  for (H2Stream* s = live_; s != nullptr; s = s->next) {
    switch (s->state) {
      case H2Stream::State::receiving:
        if (s->begun_ns == 0) s->begun_ns = now;
        wake = std::min(wake, s->begun_ns + setup_.header_timeout_ns);
        break;
      case H2Stream::State::waiting:
        wake = std::min(wake, s->due_ns);
        break;
      case H2Stream::State::sending:
        if (s->sent < s->due)  // the peer's window holds it back
          wake = std::min(wake, progress_ns_ + setup_.send_timeout_ns);
        else if (s->sent < s->source.length)  // a drip between pieces
          wake = std::min(wake, s->due_ns);
        break;
      case H2Stream::State::done:
        break;
    }
  }
  if (wake != UINT64_MAX) fed.wake_us = wake > now ? (wake - now + 999) / 1000 : 0;
  return fed;
}

// Whatever has come due by `now`: answers, drips' pieces; a deadline
// passed ends the session with GOAWAY.
void H2Session::wake_due(uint64_t now) {
  for (H2Stream* s = live_; s != nullptr;) {
    H2Stream* next = s->next;  // answering may close the stream
    switch (s->state) {
      case H2Stream::State::receiving:
        if (s->begun_ns != 0 && now >= s->begun_ns + setup_.header_timeout_ns)
          timed_out_ = Fed::Timeout::header;
        break;
      case H2Stream::State::waiting:
        if (now >= s->due_ns) answer(*s);
        break;
      case H2Stream::State::sending:
        if (s->sent < s->due) {
          if (progress_ns_ != 0 && now >= progress_ns_ + setup_.send_timeout_ns)
            timed_out_ = Fed::Timeout::send;
        } else if (s->sent < s->source.length && now >= s->due_ns) {
          // Due at due_ns: at least one more piece is due now.
          s->due = s->drip.advance(now, s->source.length);
          s->due_ns = s->drip.next_due_ns();
          nghttp2_session_resume_data(session_, s->id);
        }
        break;
      case H2Stream::State::done:
        break;
    }
    s = next;
  }
  if (timed_out_ != Fed::Timeout::none)
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                          nullptr, 0);
}

}  // namespace hello::reference
