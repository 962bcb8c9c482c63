// Counts heap allocations on the request path after warm-up, in a real
// worker over loopback speaking HTTP/2, in clear (h2c) and over TLS (h2):
// none are allowed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "h2_frames.h"
#include "http1/session.h"
#include "http2/h2_session.h"
#include "http_bytes.h"
#include "observe/access_log.h"
#include "server/worker.h"
#include "test_persona.h"
#include "test_time.h"
#include "tls/tls_context.h"
#include "tls/tls_memory.h"

#include "allocation_count.h"

namespace hello {
namespace {

// nghttp2's client over a socket, its memory recycled as the server's is
// (h2_memory()), so that the client side counted with the server adds
// nothing once warm.
// It sends batches of GET / and reads until each batch's streams ended.
class H2SocketClient {
 public:
  explicit H2SocketClient(int fd, SSL* ssl = nullptr) : fd_(fd), ssl_(ssl) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, void* self) {
          if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
              (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0)
            ++static_cast<H2SocketClient*>(self)->ended_;
          return 0;
        });
    nghttp2_session_callbacks_set_on_header_callback(
        cb, [](nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t name_length,
               const uint8_t* value, size_t value_length, uint8_t, void* self) {
          if (std::string_view(reinterpret_cast<const char*>(name), name_length) == "date")
            static_cast<H2SocketClient*>(self)->saw_date(
                std::string_view(reinterpret_cast<const char*>(value), value_length));
          return 0;
        });
    nghttp2_session_client_new3(&session_, cb, this, nullptr, h2_memory());
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
    buf_.resize(65536);
    out_.reserve(65536);
  }
  ~H2SocketClient() { nghttp2_session_del(session_); }

  // How often the server's Date has changed in the answers read so far.
  uint64_t date_changes() const { return date_changes_; }

  bool batch(int n) {
    auto fields = test::h2_request("GET", "/");
    for (int i = 0; i < n; ++i)
      nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(), nullptr, nullptr);
    uint64_t want = ended_ + static_cast<uint64_t>(n);
    while (ended_ < want) {
      if (!flush()) return false;
      ssize_t got;
      if (ssl_ != nullptr) {
        size_t m = 0;
        got = SSL_read_ex(ssl_, buf_.data(), buf_.size(), &m) == 1 ? static_cast<ssize_t>(m) : -1;
      } else {
        got = recv(fd_, buf_.data(), buf_.size(), 0);
      }
      if (got <= 0) return false;
      if (nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(buf_.data()),
                                   static_cast<size_t>(got)) < 0)
        return false;
    }
    return flush();  // its WINDOW_UPDATEs
  }

 private:
  bool flush() {
    out_.clear();
    const uint8_t* data = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(session_, &data)) > 0;)
      out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    if (out_.empty()) return true;
    if (ssl_ != nullptr) {
      size_t written = 0;
      return SSL_write_ex(ssl_, out_.data(), out_.size(), &written) == 1;
    }
    return send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out_.size());
  }

  void saw_date(std::string_view date) {
    if (date == std::string_view(date_.data(), date_length_)) return;
    ++date_changes_;
    date_length_ = std::min(date.size(), date_.size());
    std::copy_n(date.begin(), date_length_, date_.begin());
  }

  int fd_;
  SSL* ssl_;
  nghttp2_session* session_ = nullptr;
  uint64_t ended_ = 0;
  std::array<char, 64> date_{};
  size_t date_length_ = 0;
  uint64_t date_changes_ = 0;
  std::string buf_;
  std::string out_;
};

// HTTP/2's steady state over a socket, judged slice by slice: after
// `warm_up`, `slices` slices of `slice` rounds each. Nothing is allocated
// per request: a slice in which the server's Date stayed the same (as the
// client read it) allocates nothing. Once a second the Date changes, and
// HPACK adds the new value to both sides' dynamic tables (a new entry, and
// now and then a larger ring of them, on each side) until the 4,096-byte
// tables are full, a minute into a connection: a slice that saw the Date
// change may allocate at most kPerDateChange per change. Returns the
// allocations of the slices without a change, and checks that those
// slices are at least half of them.
constexpr uint64_t kPerDateChange = 4;
uint64_t h2_steady_state_allocations(H2SocketClient& client, Rounds warm_up, Rounds slice,
                                     int slices) {
  auto run = [&](Rounds r) {
    for (int i = 0; i < r.singles; ++i)
      if (!client.batch(1)) return false;
    for (int i = 0; i < r.batches; ++i)
      if (!client.batch(16)) return false;
    return true;
  };
  EXPECT_TRUE(run(warm_up));
  uint64_t steady = 0, at_changes = 0, changes = 0;
  int steady_slices = 0;
  for (int i = 0; i < slices; ++i) {
    const uint64_t changes_before = client.date_changes();
    bool answered = false;
    uint64_t n = allocations_in([&] { answered = run(slice); });
    EXPECT_TRUE(answered);
    const uint64_t changed = client.date_changes() - changes_before;
    if (changed == 0) {
      steady += n;
      ++steady_slices;
    } else {
      at_changes += n;
      changes += changed;
    }
  }
  EXPECT_LE(at_changes, kPerDateChange * changes) << "over " << changes << " Date changes";
  EXPECT_GE(steady_slices, slices / 2) << "too few slices without a Date change to judge";
  ::testing::Test::RecordProperty("allocations", std::to_string(steady));
  ::testing::Test::RecordProperty("allocations_at_date_changes", std::to_string(at_changes));
  return steady;
}

// HTTP/2 over loopback, h2c by prior knowledge: a worker with --h2 and its
// client, batches of 16 streams and single ones on one connection. (With
// the client on plain malloc it counts 52,003.)
TEST(Allocation, AnH2cWorkerAllocatesNothingPerRequestOverLoopback) {
  WorkerOptions options;
  options.h2 = true;
  Worker worker(test::kTestPersona, {}, options, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  H2SocketClient client(fd);
  EXPECT_EQ(h2_steady_state_allocations(client, {500, 100}, {250, 25}, 20), 0u);
  close(fd);
  worker.stop(false);
  worker.join();
}

// The same over TLS, h2 by ALPN, once the handshake is done.
TEST(Allocation, AnH2WorkerOverTlsAllocatesNothingPerRequest) {
  ASSERT_TRUE(kRecycled);
  std::string error;
  TlsOptions tls_options;
  tls_options.enabled = true;
  tls_options.h2 = true;
  std::unique_ptr<TlsContext> tls = TlsContext::create(tls_options, "", {"localhost"}, error);
  ASSERT_TRUE(tls) << error;
  WorkerOptions options;
  options.tls = tls.get();
  options.h2 = true;
  Worker worker(test::kTestPersona, {}, options, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, nullptr);
  static const unsigned char kAlpn[] = "\x02h2";
  SSL_CTX_set_alpn_protos(client_ctx, kAlpn, 3);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  SSL* ssl = SSL_new(client_ctx);
  SSL_set_fd(ssl, fd);
  ASSERT_EQ(SSL_connect(ssl), 1);
  const unsigned char* alpn = nullptr;
  unsigned alpn_length = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_length);
  ASSERT_EQ(std::string_view(reinterpret_cast<const char*>(alpn), alpn_length), "h2");
  {
    H2SocketClient client(fd, ssl);
    EXPECT_EQ(h2_steady_state_allocations(client, {500, 100}, {150, 15}, 20), 0u);
  }
  SSL_free(ssl);
  close(fd);
  SSL_CTX_free(client_ctx);
  worker.stop(false);
  worker.join();
}

}  // namespace
}  // namespace hello
