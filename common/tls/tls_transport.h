// TLS as a transport (docs/tls.md): an OpenSSL server session over the
// connection's TcpTransport, handing plaintext up and taking plaintext
// down, so the connection above does not change. OpenSSL never touches
// the socket: its BIO reads the ciphertext of the read being handled and
// writes into the worker's scratch buffer, which goes to the socket at
// once; what the kernel does not take waits here, in order, and only then
// is more plaintext encrypted (so a client that does not read still stops
// the connection's reading, as over TCP).
//
// Every read of the socket is decrypted whole before it is handed up: a
// read of kCipherBufferSize bytes and the one partial record OpenSSL may
// hold from before make at most the worker's read buffer of plaintext.
#pragma once

#include <openssl/ssl.h>
#include <uv.h>

#include <cstdint>
#include <string>

#include "base/pool.h"
#include "net/transport.h"
#include "observe/accounting.h"

namespace hello {

class TlsContext;

// A connection's output while it waits: the ciphertext the kernel did not
// take (in flight, and what follows it), and the connection's queued write
// with its plaintext not yet encrypted. Lent by the worker while needed,
// so that an idle connection holds none (it is most of a transport's size).
struct TlsQueue {
  std::string flight;
  std::string backlog;
  uv_write_t req;               // the lower write of `flight`
  uv_write_t* upper = nullptr;  // the connection's queued write
  uv_buf_t plain[2] = {};
  unsigned plain_n = 0;
  size_t plain_done = 0;  // bytes of plain encrypted
};

// What a worker's TLS connections share: the context, the scratch buffers,
// the queues lent, and the sink that counts their handshakes.
struct TlsShared {
  static constexpr size_t kCipherBufferSize = 32 * 1024;
  // Ciphertext made in one go before it is sent: four full records.
  static constexpr size_t kFlushAt = 64 * 1024;
  // Plaintext per SSL_write: one record.
  static constexpr size_t kRecord = 16 * 1024;
  SSL_CTX* ctx = nullptr;
  Accounting& accounting;
  char cipher_in[kCipherBufferSize];  // every read of ciphertext
  std::string cipher_out;             // ciphertext made by one call, sent at once
  Pool<TlsQueue> queues;

  // `ctx`: the worker's own (TlsContext::ctx(worker)).
  TlsShared(SSL_CTX* ctx, Accounting& accounting);
};

class TlsTransport final : public Transport {
 public:
  explicit TlsTransport(TlsShared& shared) : shared_(shared) {}
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // Starts a server session over `lower`, a socket just accepted (a
  // TcpTransport; a unit test's fake, with no socket), which reports to
  // this transport from now on. False if OpenSSL cannot make one (out of
  // memory): then the connection closes `lower` itself.
  bool wrap(Transport& lower);

  int start_reading() override;
  void stop_reading() override;
  void read_now() override;
  int try_write(const uv_buf_t* bufs, unsigned n, bool last) override;
  int write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) override;
  bool unread_input() override;
  int shutdown() override;
  void close(bool abort) override;
  uint16_t peer_name(char* out, size_t size) override;
  bool negotiated_h2() const override { return h2_; }

 private:
  friend struct TlsCallbacks;

  enum class State : uint8_t {
    handshake,  // before the handshake has ended
    open,       // plaintext flows
    plain,      // plain HTTP came: the answer goes in clear, then the close
    closed,     // close() was called
  };

  void on_lower_read(ssize_t nread, const uv_buf_t* buf);
  void on_lower_written(int status);
  void on_lower_closed();
  bool handshake();
  void failed(int ssl_error);
  void decrypt();
  // Encrypts the plaintext of `bufs` from `from` on into shared_.cipher_out,
  // at most one record (TlsShared::kRecord) per SSL_write_ex, until
  // cipher_out holds `limit` bytes or more, or the plaintext ends; returns
  // the bytes taken.
  size_t encrypt(const uv_buf_t* bufs, unsigned n, size_t from, size_t limit);
  // Sends shared_.cipher_out: what the kernel does not take now is queued
  // behind what already waits. 0 or a libuv error.
  int flush(bool last);
  int send_queued();
  int64_t send_plain(const uv_buf_t* bufs, unsigned n, size_t from, bool last);
  int pump();
  TlsQueue& queue();
  // Gives the queue back if nothing waits in it; release_queue() always.
  void return_queue();
  void release_queue();

  TlsShared& shared_;
  Transport* lower_ = nullptr;
  SSL* ssl_ = nullptr;
  const char* in_ = nullptr;  // the ciphertext of the read being handled
  size_t in_len_ = 0;
  TlsQueue* q_ = nullptr;         // while output waits
  bool flying_ = false;           // a lower write of q_->flight is in flight
  bool shutdown_wanted_ = false;  // FIN once the queue is sent
  bool counted_ = false;          // the handshake's end is counted
  bool h2_ = false;               // ALPN selected "h2"
  int write_error_ = 0;           // a background send failed
  State state_ = State::closed;

  friend int tls_bio_write(BIO* bio, const char* data, int len);
  friend int tls_bio_read(BIO* bio, char* data, int len);
};

}  // namespace hello
