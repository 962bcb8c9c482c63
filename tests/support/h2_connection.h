// A test's HTTP/2 client over a real socket: nghttp2's client session over
// a Client's TCP connection, or over TLS offering ALPN.
#pragma once

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "h2_frames.h"
#include "test_client.h"

namespace hello::test {

using namespace std::chrono_literals;

// A chunk of a stream's body as it was read: in which of the connection's
// reads (H2Connection::reads), and the body's size after it.
struct Piece {
  uint64_t read;
  size_t body;
};

struct Stream {
  std::map<std::string, std::string> fields;
  // The same fields in the order they came.
  std::vector<std::pair<std::string, std::string>> field_list;
  std::string body;
  bool ended = false;
  std::chrono::steady_clock::time_point ended_at;  // when its END_STREAM was read
  uint64_t ended_read = 0;                         // in which of the connection's reads it ended
  std::vector<Piece> pieces;
  uint32_t reset = 0xffffffff;  // RST_STREAM's code, if one came
};

// nghttp2's client session over a Client's socket.
class H2Connection {
 public:
  // Over TLS, `alpn` (wire format) is offered; `negotiated` says what the
  // server selected.
  explicit H2Connection(int port, std::string_view alpn = {}) : tcp_(port) {
    if (!alpn.empty()) {
      ctx_ = SSL_CTX_new(TLS_client_method());
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
      ssl_ = SSL_new(ctx_);
      SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(alpn.data()),
                          static_cast<unsigned>(alpn.size()));
      SSL_set_fd(ssl_, tcp_.fd());
      struct timeval tv = {3, 0};
      setsockopt(tcp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      if (SSL_connect(ssl_) == 1) {
        const unsigned char* p = nullptr;
        unsigned int n = 0;
        SSL_get0_alpn_selected(ssl_, &p, &n);
        negotiated.assign(reinterpret_cast<const char*>(p), n);
      }
      ERR_clear_error();
    }
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~H2Connection() {
    nghttp2_session_del(session_);
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }

  int32_t get(const char* path) {
    auto fields = h2_request("GET", path);
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr,
                                  nullptr);
  }
  // A GET with an x-hello-shape field of `shape` (docs/shaping.md).
  int32_t get(const char* path, const char* shape) {
    auto request = h2_request("GET", path);
    std::vector<nghttp2_nv> fields(request.begin(), request.end());
    fields.push_back(h2_field("x-hello-shape", shape));
    return nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr,
                                  nullptr);
  }

  // Upgrade: h2c: sends `request` (HTTP/1.1, with its HTTP2-Settings of
  // `settings`, a SETTINGS payload) and reads the head that answers it. On
  // a 101 the session takes stream 1 as the request's and reads on as
  // HTTP/2 (its preface and SETTINGS queued); returns the head.
  std::string upgrade(const std::string& request, const std::string& settings, bool head = false) {
    if (!tcp_.send(request)) return {};
    std::string got;
    char buf[16384];
    auto deadline = std::chrono::steady_clock::now() + 3s;
    size_t end;
    while ((end = got.find("\r\n\r\n")) == std::string::npos) {
      pollfd p = {tcp_.fd(), POLLIN, 0};
      if (std::chrono::steady_clock::now() >= deadline) return got;
      if (poll(&p, 1, 100) != 1) continue;
      ssize_t n = recv(tcp_.fd(), buf, sizeof buf, 0);
      if (n <= 0) return got;
      got.append(buf, static_cast<size_t>(n));
    }
    std::string head_bytes = got.substr(0, end + 4);
    if (head_bytes.rfind("HTTP/1.1 101", 0) != 0) return got;
    nghttp2_session_upgrade2(session_, reinterpret_cast<const uint8_t*>(settings.data()),
                             settings.size(), head, nullptr);
    std::string rest = got.substr(end + 4);
    nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
    return head_bytes;
  }

  // Sends what is queued and reads until every stream of `ids` has ended,
  // or `limit` passes; false then.
  bool run(const std::vector<int32_t>& ids, std::chrono::milliseconds limit = 3s) {
    return pump(&ids, limit);
  }
  // Reads until the server closes (true) or `limit` passes.
  bool run_until_closed(std::chrono::milliseconds limit) { return pump(nullptr, limit); }

 private:
  bool pump(const std::vector<int32_t>* ids, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      std::string out = h2_queued(session_);
      if (!out.empty() && !send_all(out)) return false;
      bool all = ids != nullptr;
      for (int32_t id : ids != nullptr ? *ids : std::vector<int32_t>{})
        all = all && streams[id].ended;
      if (all) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      pollfd p = {tcp_.fd(), POLLIN, 0};
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) && poll(&p, 1, 100) != 1) continue;
      char buf[16384];
      ssize_t n =
          ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof buf) : recv(tcp_.fd(), buf, sizeof buf, 0);
      if (n <= 0) return ids == nullptr && n == 0;
      ++reads;
      if (nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(buf),
                                   static_cast<size_t>(n)) < 0)
        return false;
    }
  }

 public:
  std::map<int32_t, Stream> streams;
  std::string negotiated;  // ALPN's answer, over TLS
  bool goaway = false;
  int32_t goaway_last = -1;
  // The reads of the socket that brought bytes so far: what came in
  // different reads was sent apart.
  uint64_t reads = 0;

 private:
  bool send_all(const std::string& out) {
    if (ssl_ == nullptr) return tcp_.send(out);
    return SSL_write(ssl_, out.data(), static_cast<int>(out.size())) ==
           static_cast<int>(out.size());
  }
  static H2Connection& of(void* p) { return *static_cast<H2Connection*>(p); }
  static int on_header(nghttp2_session*, const nghttp2_frame* f, const uint8_t* n, size_t nl,
                       const uint8_t* v, size_t vl, uint8_t, void* p) {
    Stream& s = of(p).streams[f->hd.stream_id];
    std::string name(reinterpret_cast<const char*>(n), nl);
    std::string value(reinterpret_cast<const char*>(v), vl);
    s.fields[name] = value;
    s.field_list.emplace_back(std::move(name), std::move(value));
    return 0;
  }
  static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* d, size_t n, void* p) {
    Stream& s = of(p).streams[id];
    s.body.append(reinterpret_cast<const char*>(d), n);
    s.pieces.push_back({of(p).reads, s.body.size()});
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* f, void* p) {
    if (f->hd.type == NGHTTP2_GOAWAY) {
      of(p).goaway = true;
      of(p).goaway_last = f->goaway.last_stream_id;
    }
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
      of(p).streams[f->hd.stream_id].ended = true;
      of(p).streams[f->hd.stream_id].ended_at = std::chrono::steady_clock::now();
      of(p).streams[f->hd.stream_id].ended_read = of(p).reads;
    }
    if (f->hd.type == NGHTTP2_RST_STREAM) {
      Stream& s = of(p).streams[f->hd.stream_id];
      s.reset = f->rst_stream.error_code;
      s.ended = true;
      s.ended_at = std::chrono::steady_clock::now();
      s.ended_read = of(p).reads;
    }
    return 0;
  }

  Client tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  nghttp2_session* session_ = nullptr;
};

}  // namespace hello::test
