// --h2 over real sockets (docs/http2.md): a connection that opens with the
// HTTP/2 preface (h2c, prior knowledge), or whose TLS handshake selected
// ALPN h2, gets the persona's answers as HTTP/2 frames, nghttp2's client
// reading them; HTTP/1.1 keeps working on the same port; without --h2 the
// preface is HTTP/1 input like any other, and ALPN never selects h2.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "h2_frames.h"
#include "test_client.h"

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;

struct Stream {
  std::map<std::string, std::string> fields;
  std::string body;
  bool ended = false;
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

  // Sends what is queued and reads until every stream of `ids` has ended,
  // or `limit` passes; false then.
  bool run(const std::vector<int32_t>& ids, std::chrono::milliseconds limit = 3s) {
    return pump(&ids, limit);
  }
  // Reads until the server closes (true) or `limit` passes.
  bool run_until_closed(std::chrono::milliseconds limit) { return pump(nullptr, limit); }

 private:
  bool pump(const std::vector<int32_t>* ids, std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    for (;;) {
      std::string out = h2_queued(session_);
      if (!out.empty() && !send_all(out)) return false;
      bool all = ids != nullptr;
      for (int32_t id : ids != nullptr ? *ids : std::vector<int32_t>{})
        all = all && streams[id].ended;
      if (all) return true;
      if (Clock::now() >= deadline) return false;
      pollfd p = {tcp_.fd(), POLLIN, 0};
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) && poll(&p, 1, 100) != 1) continue;
      char buf[16384];
      ssize_t n =
          ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof buf) : recv(tcp_.fd(), buf, sizeof buf, 0);
      if (n <= 0) return ids == nullptr && n == 0;
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

 private:
  bool send_all(const std::string& out) {
    if (ssl_ == nullptr) return tcp_.send(out);
    return SSL_write(ssl_, out.data(), static_cast<int>(out.size())) ==
           static_cast<int>(out.size());
  }
  static H2Connection& of(void* p) { return *static_cast<H2Connection*>(p); }
  static int on_header(nghttp2_session*, const nghttp2_frame* f, const uint8_t* n, size_t nl,
                       const uint8_t* v, size_t vl, uint8_t, void* p) {
    of(p).streams[f->hd.stream_id].fields[std::string(reinterpret_cast<const char*>(n), nl)] =
        std::string(reinterpret_cast<const char*>(v), vl);
    return 0;
  }
  static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* d, size_t n, void* p) {
    of(p).streams[id].body.append(reinterpret_cast<const char*>(d), n);
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* f, void* p) {
    if (f->hd.type == NGHTTP2_GOAWAY) {
      of(p).goaway = true;
      of(p).goaway_last = f->goaway.last_stream_id;
    }
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0)
      of(p).streams[f->hd.stream_id].ended = true;
    return 0;
  }

  Client tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  nghttp2_session* session_ = nullptr;
};

TEST(H2c, APriorKnowledgeConnectionGetsThePersonasAnswerAsFrames) {
  ServerProcess s("sanic", {"--h2"});
  H2Connection c(s.port());
  int32_t root = c.get("/");
  int32_t missing = c.get("/nope");
  ASSERT_TRUE(c.run({root, missing}));
  EXPECT_EQ(c.streams[root].fields[":status"], "200");
  EXPECT_EQ(c.streams[root].body, "Hello!!!");
  EXPECT_EQ(c.streams[root].fields.count("connection"), 0u);
  EXPECT_EQ(c.streams[missing].fields[":status"], "404");
  // More streams on the same connection, many at once.
  std::vector<int32_t> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(c.get("/"));
  ASSERT_TRUE(c.run(ids));
  for (int32_t id : ids) EXPECT_EQ(c.streams[id].body, "Hello!!!") << id;
  EXPECT_EQ(s.stop(), 0);
  std::string summary = s.rest_of_stderr();
  EXPECT_NE(summary.find("62 requests, 62 over HTTP/2"), std::string::npos) << summary;
}

TEST(H2c, AGracefulStopSaysGoawayWithTheLastStream) {
  ServerProcess s("sanic", {"--h2", "--shutdown-timeout", "10"});
  H2Connection c(s.port());
  int32_t root = c.get("/");
  ASSERT_TRUE(c.run({root}));
  auto t0 = Clock::now();
  s.signal(SIGTERM);
  EXPECT_TRUE(c.run_until_closed(3s)) << "left open";
  EXPECT_TRUE(c.goaway) << "closed without GOAWAY";
  EXPECT_EQ(c.goaway_last, root);
  EXPECT_EQ(s.wait(3s), 0);
  EXPECT_LT(Clock::now() - t0, 3s);
}

TEST(H2c, Http11KeepsWorkingOnTheSamePort) {
  ServerProcess s("sanic", {"--h2"});
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string r = c.read_response();
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(r.substr(r.size() - 8), "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
  EXPECT_EQ(s.rest_of_stderr().find("over HTTP/2"), std::string::npos);
}

constexpr std::string_view kH2ThenHttp11 = "\x02h2\x08http/1.1";

TEST(H2, AlpnH2OverTlsGetsThePersonasAnswerAsFrames) {
  ServerProcess s("sanic", {"--h2", "--tls"});
  H2Connection c(s.port(), kH2ThenHttp11);
  EXPECT_EQ(c.negotiated, "h2");
  int32_t root = c.get("/");
  ASSERT_TRUE(c.run({root}));
  EXPECT_EQ(c.streams[root].fields[":status"], "200");
  EXPECT_EQ(c.streams[root].body, "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2, WithoutTheFlagAlpnSelectsThePersonasOwn) {
  ServerProcess s("sanic", {"--tls"});
  H2Connection c(s.port(), kH2ThenHttp11);
  EXPECT_EQ(c.negotiated, "http/1.1");  // sanic's, docs/tls.md
  EXPECT_EQ(s.stop(), 0);
}

TEST(H2c, WithoutTheFlagThePrefaceIsHttp1Input) {
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
  auto r = c.read_to_eof(2s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rfind("HTTP/1.1 ", 0), 0u) << *r;
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace hello::test
