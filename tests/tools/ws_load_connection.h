// One ws_load connection: a libuv TCP handle, TLS over memory BIOs with
// --tls, and the Session it drives. It writes at most once per loop turn:
// whatever the session framed during the turn goes out in one write.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ws_load.h"
#include "ws_load_session.h"
#include "ws_load_tls.h"

namespace ws_load {

class Connection;

// What a connection tells the run that owns it.
class ConnectionOwner {
 public:
  // The 101 arrived and was right: messages may flow.
  virtual void on_open(Connection& c) = 0;
  // Its handle is closed; it will do nothing more.
  virtual void on_closed(Connection& c) = 0;
  // It has bytes to send: flush() it at the end of this loop turn.
  virtual void queue_flush(Connection& c) = 0;

 protected:
  ~ConnectionOwner() = default;
};

// What every connection of one loop shares.
struct ConnectionShared {
  uv_loop_t* loop = nullptr;
  const sockaddr* address = nullptr;
  SSL_CTX* tls = nullptr;  // with --tls only
  SessionShared* session = nullptr;
  ConnectionOwner* owner = nullptr;
  uint8_t* read_buffer = nullptr;   // kReadBufferSize bytes: every read lands here
  uint8_t* plain_buffer = nullptr;  // kPlainBufferSize bytes: what TLS decrypted
};

class Connection {
 public:
  // A connection's life; each moves forward only.
  enum class Phase : uint8_t {
    kIdle,        // not started
    kConnecting,  // TCP connect under way
    kSecuring,    // TLS handshake under way
    kUpgrading,   // upgrade request sent, waiting for the 101
    kOpen,        // the session runs: messages, then the close handshake
    kClosing,     // uv_close called
    kClosed,      // the handle is closed (or was never made)
  };
  // How it ended.
  enum class Outcome : uint8_t {
    kNone,             // not yet ended
    kClean,            // the close handshake completed
    kHandshakeFailed,  // it ended before the WebSocket opened
    kFailed,           // it ended in error after opening
  };

  explicit Connection(ConnectionShared& shared) : shared_(shared), session_(*shared.session) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  // The handle must be closed by now: it lives inside this object.
  ~Connection() { expect(phase_ == Phase::kIdle || phase_ == Phase::kClosed, "live handle freed"); }

  // Starts connecting; false (ended, with the reason) if libuv refused at once.
  bool start();
  // Marks a connection never started as failed, for `why`.
  void abandon(std::string why);
  // Sends --in-flight messages and keeps them outstanding.
  void start_sending();
  // Stops sending and starts the close handshake.
  void send_close();
  // Ends the connection with `outcome` (unless it already had one) and
  // closes its handle; on_closed follows.
  void close(Outcome outcome, std::string why);
  // Writes what the session framed since the last flush.
  void flush();

  Phase phase() const { return phase_; }
  Outcome outcome() const { return outcome_; }
  const std::string& failure() const { return failure_; }
  bool deflate() const { return session_.deflate(); }

  // libuv's callbacks, through the trampolines in ws_load_connection.cc.
  void on_connect(int status);
  void on_read(ssize_t nread);
  void on_write(int status);
  void on_closed();
  uv_buf_t read_buffer() const;

 private:
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  void begin_session();
  void read_tls(const uint8_t* p, size_t n);
  void take_plain(const uint8_t* p, size_t n);
  int send_out();
  void queue_flush();
  void fail(std::string why);

  ConnectionShared& shared_;
  Phase phase_ = Phase::kIdle;
  Outcome outcome_ = Outcome::kNone;
  std::string failure_;
  uv_tcp_t tcp_{};
  uv_connect_t connect_{};
  uv_write_t write_{};
  bool writing_ = false;       // write_ is under way with wire_
  bool flush_queued_ = false;  // the owner will call flush() this turn
  Session session_;
  std::unique_ptr<TlsSession> tls_;
  Buffer out_;   // plaintext the session framed, not yet sent
  Buffer wire_;  // bytes handed to uv_write (and, with TLS, ciphertext before it)
};

}  // namespace ws_load
