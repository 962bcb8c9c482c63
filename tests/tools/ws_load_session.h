// The WebSocket client of one ws_load connection, socket-free: it takes
// the server's bytes and appends what answers them (the next messages, a
// pong, a close) to a buffer the connection writes. It keeps --in-flight
// messages outstanding and checks every echo against what it sent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ws_load.h"
#include "ws_load_deflate.h"
#include "ws_load_frame.h"
#include "ws_load_handshake.h"

namespace ws_load {

// What every session of one loop shares: the messages' bytes, the mask
// keys, scratch space and the count of echoes. One thread, so no locks.
struct SessionShared {
  SessionShared(const Options& options, uint64_t seed);

  const Options& opt;
  Payload payload;
  Rng rng;
  Buffer compressed;                    // one message deflated, before it is framed
  std::unique_ptr<uint8_t[]> inflated;  // kInflateChunk bytes of an echo inflated
  uint64_t echoes = 0;                  // complete echoes of every session so far
};

// Inflated bytes are checked this many at a time.
constexpr size_t kInflateChunk = 64 * 1024;

class Session {
 public:
  // A session's life; each moves forward only.
  enum class Phase : uint8_t {
    kUpgrading,  // the request is sent; waiting for the 101
    kOpen,       // messages flow
    kClosing,    // our close is sent; echoes still count until the server's
    kClosed,     // the close handshake is done
    kFailed,     // see failure()
  };

  explicit Session(SessionShared& shared) : shared_(shared) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Appends the upgrade request to `out`.
  void start(Buffer& out);
  // Takes the next `n` bytes from the server, appending to `out` whatever
  // answers them.
  void on_bytes(const uint8_t* p, size_t n, Buffer& out);
  // Sends --in-flight messages, and from now on one more for each echo.
  void start_sending(Buffer& out);
  // Stops sending and sends a close with code 1000 (once open).
  void send_close(Buffer& out);

  Phase phase() const { return phase_; }
  // Why the session failed, said for a summary: no numbers that differ
  // from one connection to the next, so that failures group.
  const std::string& failure() const { return failure_; }
  bool deflate() const { return deflater_ != nullptr; }

 private:
  // The message being read; reset whole at each message's start.
  struct Incoming {
    bool active = false;  // a data frame without FIN was read
    bool compressed = false;
    uint64_t offset = 0;  // uncompressed bytes checked so far
    uint8_t stamp[kStampWidth] = {};
  };

  size_t read_head(const uint8_t* p, size_t n);
  size_t read_header(const uint8_t* p, size_t n, Buffer& out);
  size_t read_payload(const uint8_t* p, size_t n, Buffer& out);
  void begin_frame(const FrameHeader& h, Buffer& out);
  void begin_message(uint8_t opcode, bool compressed);
  bool message_bytes(const uint8_t* p, size_t n);
  void end_frame(Buffer& out);
  void end_message(Buffer& out);
  void on_close_frame(Buffer& out);
  void put_message(Buffer& out);
  void fail(std::string why);

  SessionShared& shared_;
  Phase phase_ = Phase::kUpgrading;
  std::string failure_;
  HandshakeKey key_;
  std::string head_;  // the 101 until its blank line, then freed
  bool sending_ = false;
  uint64_t next_send_ = 0;  // the number of the next message sent
  uint64_t next_echo_ = 0;  // the number of the message the next echo must be

  // The frame being read: its header, possibly over two reads, then how
  // much of its payload is still to come.
  uint8_t header_[kMaxFrameHeader] = {};
  size_t header_len_ = 0;
  bool in_payload_ = false;
  FrameHeader frame_;
  uint64_t frame_left_ = 0;
  uint8_t control_[kMaxControlPayload] = {};
  size_t control_len_ = 0;
  Incoming in_;

  std::unique_ptr<Deflater> deflater_;  // with permessage-deflate only
  std::unique_ptr<Inflater> inflater_;
};

}  // namespace ws_load
