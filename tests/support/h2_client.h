// A test's HTTP/2 client: nghttp2's own client session, its requests out
// as bytes and what it heard per stream.
#pragma once

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "h2_frames.h"

namespace hello::test {

// What the client heard on one stream.
struct Heard {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;
  int data_frames = 0;
  bool ended = false;
  uint32_t reset = 0xffffffff;  // RST_STREAM's code, if one came
};

// nghttp2's client: requests out as bytes, the server's bytes in.
class H2Client {
 public:
  // `window`: its SETTINGS_INITIAL_WINDOW_SIZE, or nghttp2's default.
  explicit H2Client(int64_t window = -1) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry w{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(window)};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, &w, window < 0 ? 0 : 1);
  }
  ~H2Client() { nghttp2_session_del(session_); }

  int32_t request(const char* method, const char* path) {
    auto fields = h2_request(method, path);
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr,
                                  nullptr);
  }
  // A request with more fields (lower-case names) and, unless empty, a body.
  int32_t request(const char* method, const char* path,
                  const std::vector<std::pair<std::string, std::string>>& more,
                  std::string body = {}) {
    auto base = h2_request(method, path);
    std::vector<nghttp2_nv> fields(base.begin(), base.end());
    for (const auto& [n, v] : more) fields.push_back(h2_field(n.c_str(), v.c_str()));
    nghttp2_data_provider provider{};
    provider.read_callback = read_body;
    bodies_.push_back(std::move(body));
    provider.source.ptr = &bodies_.back();
    bool with_body = !bodies_.back().empty();
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                                  with_body ? &provider : nullptr, nullptr);
  }
  // A request whose body never comes: HEADERS without END_STREAM.
  int32_t request_open(const char* method, const char* path) {
    auto fields = h2_request(method, path);
    nghttp2_data_provider never{};
    never.read_callback = [](nghttp2_session*, int32_t, uint8_t*, size_t, uint32_t*,
                             nghttp2_data_source*,
                             void*) -> ssize_t { return NGHTTP2_ERR_DEFERRED; };
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), &never, nullptr);
  }
  // Resets stream `id` (CANCEL).
  void reset(int32_t id) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  // The value of field `name` on stream `id`, or "" if it has none.
  std::string field(int32_t id, const std::string& name) {
    for (const auto& [n, v] : streams[id].fields)
      if (n == name) return v;
    return {};
  }
  // The preface and every frame queued, as bytes.
  std::string output() { return h2_queued(session_); }
  bool input(const std::string& bytes) {
    return nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                    bytes.size()) == static_cast<ssize_t>(bytes.size());
  }
  std::map<int32_t, Heard> streams;
  std::vector<int32_t> ended;  // streams in the order they ended
  bool goaway = false;
  int32_t goaway_last = -1;
  uint32_t max_concurrent = 0;

 private:
  static H2Client& of(void* p) { return *static_cast<H2Client*>(p); }
  static int on_header(nghttp2_session*, const nghttp2_frame* f, const uint8_t* n, size_t nl,
                       const uint8_t* v, size_t vl, uint8_t, void* p) {
    of(p).streams[f->hd.stream_id].fields.emplace_back(
        std::string(reinterpret_cast<const char*>(n), nl),
        std::string(reinterpret_cast<const char*>(v), vl));
    return 0;
  }
  static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* d, size_t n, void* p) {
    of(p).streams[id].body.append(reinterpret_cast<const char*>(d), n);
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* f, void* p) {
    H2Client& c = of(p);
    if (f->hd.type == NGHTTP2_GOAWAY) {
      c.goaway = true;
      c.goaway_last = f->goaway.last_stream_id;
    }
    if (f->hd.type == NGHTTP2_RST_STREAM)
      c.streams[f->hd.stream_id].reset = f->rst_stream.error_code;
    if (f->hd.type == NGHTTP2_SETTINGS && (f->hd.flags & NGHTTP2_FLAG_ACK) == 0)
      for (size_t i = 0; i < f->settings.niv; ++i)
        if (f->settings.iv[i].settings_id == NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
          c.max_concurrent = f->settings.iv[i].value;
    if (f->hd.type == NGHTTP2_DATA) ++c.streams[f->hd.stream_id].data_frames;
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
      c.streams[f->hd.stream_id].ended = true;
      c.ended.push_back(f->hd.stream_id);
    }
    return 0;
  }
  static ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                           nghttp2_data_source* source, void*) {
    auto* body = static_cast<std::string*>(source->ptr);
    size_t n = std::min(length, body->size());
    memcpy(buf, body->data(), n);
    body->erase(0, n);
    if (body->empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  nghttp2_session* session_ = nullptr;
  std::list<std::string> bodies_;  // requests' bodies not yet sent (stable addresses)
};

}  // namespace hello::test
