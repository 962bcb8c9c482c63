// A TlsTransport with no socket (tests/unit/tls): under it a fake lower
// transport that plays the kernel (it takes as many bytes per write as a
// test allows, queues the rest as uv_write does, fails when told), above
// it a recorder of what it hands up, and at the other end an OpenSSL
// client over memory BIOs. The server's certificate is made in memory by
// TlsContext, as it is at a server's start without --tls-cert.
#pragma once

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "observe/accounting.h"
#include "observe/counter.h"
#include "tls/tls_context.h"
#include "tls/tls_transport.h"

namespace hello::test {

class FakeLower final : public Transport {
 public:
  size_t room = SIZE_MAX;  // the kernel takes at most this much of each try_write
  int fail_try = 0;        // what try_write returns instead, if not 0
  int fail_write = 0;      // what write returns instead, if not 0
  int fail_start = 0;      // what start_reading returns instead, if not 0
  int fail_shutdown = 0;   // what shutdown returns, after counting it
  bool unread = false;     // what unread_input says

  std::string sent;         // every byte that reached the client, in order
  std::vector<bool> lasts;  // `last` of each try_write
  uv_write_t* queued_req = nullptr;
  std::string queued;  // the write in flight
  int writes = 0;
  int shutdowns = 0;
  int read_nows = 0;
  bool close_asked = false;
  bool aborted = false;

  bool attached() const { return events_ != nullptr; }
  // The last try_write was the connection's last bytes.
  bool ended_last() const { return !lasts.empty() && lasts.back(); }
  int start_reading() override {
    if (fail_start != 0) return fail_start;
    reading_ = true;
    return 0;
  }
  void stop_reading() override { reading_ = false; }
  void read_now() override { ++read_nows; }
  int try_write(const uv_buf_t* bufs, unsigned n, bool last) override {
    EXPECT_EQ(queued_req, nullptr) << "a write jumped the queue";
    lasts.push_back(last);
    if (fail_try != 0) return fail_try;
    size_t taken = 0;
    for (unsigned i = 0; i < n && taken < room; ++i) {
      size_t k = std::min(bufs[i].len, room - taken);
      sent.append(bufs[i].base, k);
      taken += k;
    }
    return taken == 0 ? UV_EAGAIN : static_cast<int>(taken);
  }
  int write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) override {
    EXPECT_EQ(queued_req, nullptr) << "two writes in flight";
    ++writes;
    if (fail_write != 0) return fail_write;
    queued_req = req;
    for (unsigned i = 0; i < n; ++i) queued.append(bufs[i].base, bufs[i].len);
    return 0;
  }
  bool unread_input() override { return unread; }
  int shutdown() override {
    ++shutdowns;
    return fail_shutdown;
  }
  void close(bool abort) override {
    EXPECT_FALSE(close_asked) << "closed twice";
    close_asked = true;
    aborted = abort;
  }
  uint16_t peer_name(char* out, size_t size) override {
    snprintf(out, size, "192.0.2.9");
    return 4343;
  }

  // The client's bytes arrive, in reads of at most the buffer's size.
  void deliver(std::string_view bytes) {
    while (!bytes.empty()) {
      size_t n = std::min(bytes.size(), buffer_.len);
      memcpy(buffer_.base, bytes.data(), n);
      report_read(static_cast<ssize_t>(n), &buffer_);
      bytes.remove_prefix(n);
    }
  }
  void report(ssize_t nread) { report_read(nread, &buffer_); }
  // The write in flight completes: taken by the kernel (0) or failed.
  void complete_write(int status = 0) {
    ASSERT_NE(queued_req, nullptr);
    queued_req = nullptr;
    std::string q = std::exchange(queued, {});
    if (status == 0) sent += q;
    report_written(status);
  }
  // libuv's close callback: a write in flight is cancelled first.
  void finish_close() {
    ASSERT_TRUE(close_asked);
    if (queued_req != nullptr) complete_write(UV_ECANCELED);
    report_closed();
  }
};

// What the TLS transport hands up to the connection.
struct Upper {
  std::string plain;
  std::vector<ssize_t> errors;  // UV_EOF and errors, in order
  std::vector<int> written;     // statuses of on_written
  int misdirected = 0;
  int closed = 0;
  Transport* close_on_read = nullptr;  // closes this on the first plaintext
  Transport* answer_via = nullptr;     // writes `answer` through this on plaintext
  std::string answer;
  int answered = 0;        // what that try_write returned
  char buffer[64 * 1024];  // the worker's read buffer

  static void on_read(void* u, ssize_t nread, const uv_buf_t* buf) {
    auto* self = static_cast<Upper*>(u);
    if (nread < 0) {
      self->errors.push_back(nread);
      return;
    }
    self->plain.append(buf->base, static_cast<size_t>(nread));
    if (self->answer_via != nullptr) {
      uv_buf_t b = uv_buf_init(self->answer.data(), static_cast<unsigned>(self->answer.size()));
      self->answered = std::exchange(self->answer_via, nullptr)->try_write(&b, 1, false);
    }
    if (self->close_on_read != nullptr) std::exchange(self->close_on_read, nullptr)->close(false);
  }
  static void on_written(void* u, int status) { static_cast<Upper*>(u)->written.push_back(status); }
  static void on_closed(void* u) { ++static_cast<Upper*>(u)->closed; }
  static void on_misdirected(void* u) { ++static_cast<Upper*>(u)->misdirected; }
  static constexpr Transport::Events kEvents = {on_read, on_written, on_closed, on_misdirected};
};

// An OpenSSL client over two memory BIOs.
class Client {
 public:
  explicit Client(int max_version = 0, const char* ciphers = nullptr, const char* suites = nullptr,
                  const char* alpn = nullptr) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    SSL_CTX_set_min_proto_version(ctx_, TLS1_VERSION);
    if (max_version != 0) SSL_CTX_set_max_proto_version(ctx_, max_version);
    if (ciphers != nullptr) {
      EXPECT_EQ(SSL_CTX_set_cipher_list(ctx_, ciphers), 1) << ciphers;
    }
    if (suites != nullptr) {
      EXPECT_EQ(SSL_CTX_set_ciphersuites(ctx_, suites), 1) << suites;
    }
    ssl_ = SSL_new(ctx_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_connect_state(ssl_);
    if (alpn != nullptr) {
      std::string wire(1, static_cast<char>(strlen(alpn)));
      wire += alpn;
      SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                          static_cast<unsigned>(wire.size()));
    }
  }
  ~Client() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  SSL* ssl() { return ssl_; }
  bool done() { return SSL_is_init_finished(ssl_) == 1; }
  // One step of the handshake; the alert the server sent, if it sent one.
  void step() {
    SSL_do_handshake(ssl_);
    ERR_clear_error();
  }
  // The server's bytes reach the client.
  void give(std::string_view bytes) {
    if (!bytes.empty()) BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
  }
  // What the client has written since the last call.
  std::string take() {
    std::string all;
    char chunk[4096];
    int n;
    while ((n = BIO_read(out_, chunk, sizeof chunk)) > 0) all.append(chunk, static_cast<size_t>(n));
    return all;
  }
  // Encrypts `plain`; the records are taken with take().
  void write(std::string_view plain) {
    size_t done = 0;
    EXPECT_EQ(SSL_write_ex(ssl_, plain.data(), plain.size(), &done), 1);
    EXPECT_EQ(done, plain.size());
  }
  // The plaintext decrypted from what was given; `error` the last
  // SSL_get_error (SSL_ERROR_WANT_READ once all is read).
  std::string read(int* error = nullptr) {
    std::string all;
    char chunk[4096];
    size_t n = 0;
    int rc;
    while ((rc = SSL_read_ex(ssl_, chunk, sizeof chunk, &n)) == 1) all.append(chunk, n);
    if (error != nullptr) *error = SSL_get_error(ssl_, rc);
    ERR_clear_error();
    return all;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

// A TlsTransport over a FakeLower, under an Upper.
class TlsWire : public ::testing::Test {
 protected:
  // The server, with `options` (the defaults: TLS 1.2 and 1.3, ours).
  void serve(TlsOptions options = {}, std::string_view alpn = "") {
    options.enabled = true;
    std::string error;
    context_ = TlsContext::create(options, alpn, {"localhost"}, error);
    ASSERT_NE(context_, nullptr) << error;
    shared_ = std::make_unique<TlsShared>(context_->ctx(), sink_);
    tls_ = std::make_unique<TlsTransport>(*shared_);
    connect();
  }
  // The transport, back from the pool, over a new connection.
  void connect() {
    ASSERT_TRUE(tls_->wrap(lower_));
    tls_->attach(&Upper::kEvents, &upper_, uv_buf_init(upper_.buffer, sizeof upper_.buffer));
    ASSERT_EQ(tls_->start_reading(), 0);
  }
  // Closes the transport, as the connection does, and makes it ready for
  // another connection.
  void reconnect() {
    tls_->close(false);
    lower_.finish_close();
    ASSERT_EQ(upper_.closed, 1);
    lower_ = FakeLower();
    upper_ = Upper();
    seen_ = 0;
    connect();
  }
  // Runs the handshake to its end for both sides, or as far as it goes
  // (bounded: a handshake is at most a few flights each way).
  void shake(Client& c) {
    for (int i = 0; i < 8 && !(c.done() && handshakes() == 1); ++i) {
      c.step();
      send(c);
      c.give(from_server());
      if (!upper_.errors.empty()) break;
    }
  }
  // What the client wrote reaches the server in one read.
  void send(Client& c) {
    std::string bytes = c.take();
    if (!bytes.empty()) lower_.deliver(bytes);
  }
  // What the server sent since the last call.
  std::string from_server() {
    std::string s = lower_.sent.substr(seen_);
    seen_ = lower_.sent.size();
    return s;
  }
  uint64_t handshakes() {
    return stats_.tls_full.get() + stats_.tls_resumed.get() + stats_.tls_failed_version.get() +
           stats_.tls_failed_cipher.get() + stats_.tls_failed_plain_http.get() +
           stats_.tls_failed_other.get() + stats_.tls_failed_client_left.get();
  }

  WorkerStats stats_;
  Accounting sink_{stats_};
  std::unique_ptr<TlsContext> context_;
  std::unique_ptr<TlsShared> shared_;
  FakeLower lower_;
  Upper upper_;
  std::unique_ptr<TlsTransport> tls_;
  size_t seen_ = 0;
};

}  // namespace hello::test
