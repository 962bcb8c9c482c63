#include "http2/h2_session.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "base/check.h"
#include "base/recycled.h"

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

std::string_view view(const uint8_t* p, size_t n) {
  return {reinterpret_cast<const char*>(p), n};
}

int method_of(std::string_view m) {
  if (m == "GET") return kGet;
  if (m == "HEAD") return kHead;
  return -1;
}

}  // namespace

struct H2Callbacks {
  static H2Session& of(void* user) { return *static_cast<H2Session*>(user); }

  static int begin_headers(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    H2Session& self = of(user);
    H2Stream* s = self.streams_.acquire([] { return std::make_unique<H2Stream>(); });
    s->method = 0;
    s->path.clear();
    s->answer = nullptr;
    s->sent = 0;
    s->complete = false;
    ++self.incomplete_;
    nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, s);
    return 0;
  }

  static int header(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                    size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void*) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    auto* s =
        static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
    if (s == nullptr) return 0;
    std::string_view n = view(name, namelen);
    if (n == ":method")
      s->method = method_of(view(value, valuelen));
    else if (n == ":path")
      s->path.assign(view(value, valuelen));
    return 0;
  }

  static int frame_recv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
      return 0;
    auto* s =
        static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
    if (s != nullptr && !s->complete) {
      s->complete = true;
      --of(user).incomplete_;
      of(user).answer(frame->hd.stream_id, *s);
    }
    return 0;
  }

  static int stream_close(nghttp2_session* session, int32_t stream_id, uint32_t, void* user) {
    auto* s = static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, stream_id));
    if (s == nullptr) return 0;
    nghttp2_session_set_stream_user_data(session, stream_id, nullptr);
    if (!s->complete) --of(user).incomplete_;  // reset by the client before its end
    of(user).streams_.release(s);
    return 0;
  }

  static ssize_t read_body(nghttp2_session* session, int32_t stream_id, uint8_t* buf, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void*) {
    auto* s = static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, stream_id));
    if (s == nullptr || s->answer == nullptr) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    const std::string& body = s->answer->body;
    size_t n = std::min(length, body.size() - s->sent);
    memcpy(buf, body.data() + s->sent, n);
    s->sent += n;
    if (s->sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

H2Session::H2Session(const ResponseTable& table, const H2Answers& answers, Accounting& accounting)
    : table_(table), answers_(answers), accounting_(accounting) {
  nghttp2_session_callbacks* cb = nullptr;
  HELLO_CHECK(nghttp2_session_callbacks_new(&cb) == 0);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, H2Callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, H2Callbacks::header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, H2Callbacks::frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, H2Callbacks::stream_close);
  int rc = nghttp2_session_server_new3(&session_, cb, this, nullptr, kRecycling ? &kMem : nullptr);
  nghttp2_session_callbacks_del(cb);
  HELLO_CHECK(rc == 0);
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, kMaxConcurrentStreams}};
  HELLO_CHECK(nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1) == 0);
}

H2Session::~H2Session() {
  nghttp2_session_del(session_);
}

void H2Session::answer(int32_t stream_id, H2Stream& s) {
  std::string_view path = s.path;
  RouteMatch m = table_.match(path.substr(0, path.find('?')), s.method);
  const H2Answer* a = m.route >= 0        ? &answers_.route(m.route)
                      : m.path_route >= 0 ? &answers_.not_allowed(m.path_route)
                                          : &answers_.not_found();
  Answered done;
  done.kind = Answered::Kind::request;
  if (!a->ready) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_REFUSED_STREAM);
    accounting_.answered(done);
    accounting_.answered_h2();
    ++answered_;
    return;
  }
  s.answer = a;
  nghttp2_data_provider body{};
  body.read_callback = H2Callbacks::read_body;
  bool with_body = s.method != kHead && !a->body.empty();
  nghttp2_submit_response(session_, stream_id, a->fields.data(), a->fields.size(),
                          with_body ? &body : nullptr);
  done.status = static_cast<uint16_t>(a->status);
  accounting_.answered(done);
  accounting_.answered_h2();
  ++answered_;
}

void H2Session::go_away(std::string& out) {
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
  drain(out);
}

bool H2Session::drain(std::string& out) {
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return false;
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0;
}

bool H2Session::feed(const char* data, size_t len, std::string& out) {
  ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(data), len);
  if (n < 0) {
    // nghttp2 has queued the GOAWAY a bad frame or preface gets, if any.
    drain(out);
    return false;
  }
  return drain(out);
}

}  // namespace hello
