// The WebSocket heart (RFC 6455, docs/websocket.md): a connection that
// upgraded at a persona's WebSocket path echoes every text and binary
// message back whole, answers pings, and closes as the RFC says. It reads
// frames itself (ws_frame.h): a frame whose payload came whole in one read
// is unmasked straight into the output, so the common message touches no
// buffer of its own; a frame split between reads, or a message in
// fragments, is gathered in `message_` until it ends.
//
// It is kept for the connection's life and keeps its own time: a message
// begun and not finished within kStallUs ends the connection (1008), the
// persona's pings go out when due (Sanic's), and after its goodbye (1001
// on a graceful stop) it waits for the client's close as the connection
// drains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "http/heart.h"
#include "observe/accounting.h"
#include "persona/ws_table.h"
#include "shaping/shape.h"
#include "websocket/utf8_check.h"
#include "websocket/ws_deflate.h"
#include "websocket/ws_frame.h"
#include "websocket/ws_shaping.h"

namespace hello {

class WsHeart final : public Heart {
 public:
  // `dice` decides a shaped connection's echoes (with --shape).
  WsHeart(const WsTable& table, Accounting& sink, Dice* dice = nullptr);

  static constexpr HeartTraits kTraits = {.kept = true, .keeps_time = true};
  // A message begun must go on within this long (no byte of it for 30 s
  // ends the connection with 1008).
  static constexpr uint64_t kStallUs = 30'000'000;
  // A message gathered in pieces keeps its buffer up to this size between
  // messages; a larger one is freed once echoed.
  static constexpr size_t kKeptMessage = 16 * 1024;

  void reset() override;
  void release() override;
  // Open: no keep-alive deadline runs, and a draining worker waits for the
  // close; after our close frame it may end the connection when quiet.
  bool live() const override { return state_ == State::open; }
  Fed feed(const char* data, size_t len, std::string& out) override;
  Fed resume(std::string& out) override;
  void time_out(std::string& out) override { (void)out; }
  void goodbye(std::string& out) override;
  Fed upgraded(const Upgrade& u, std::string& out) override;
  void refuse(std::string& out) override { (void)out; }
  // The clock the heart's deadlines read (microseconds, monotonic); tests
  // give one of their own.
  void set_clock(uint64_t (*clock)()) { clock_ = clock; }

 private:
  enum class State : uint8_t {
    open,
    closing,  // our close frame went out first: the client's is awaited
    closed,   // nothing more is read or sent
  };

  // Reads one frame header from `p`, with what an earlier read left of it;
  // returns the bytes of `p` it took, or 0 with the rest kept.
  size_t take_header(const uint8_t* p, size_t len);
  // The header just read is one the RFC allows here; else the close it earns.
  bool admit(std::string& out);
  // The payload bytes of the frame in progress.
  bool take_payload(const uint8_t* p, size_t n, std::string& out);
  // A whole unfragmented data frame in this read: echoed straight.
  bool echo_whole(const uint8_t* p, std::string& out);
  // The frame in progress has ended.
  bool end_frame(std::string& out);
  bool end_control(std::string& out);
  void echo(std::string& out, uint8_t opcode, const char* data, uint64_t length);
  // A whole message's echo: at once, or shaped (its size, its delay).
  void answer(std::string& out, uint8_t opcode, const char* data, uint64_t length);
  // A compressed message has ended: inflated, checked and echoed.
  bool end_compressed(std::string& out);
  void trim();
  // Sends a close frame with `code` and `reason`; state closed.
  bool fail(std::string& out, uint16_t code, std::string_view reason = {});
  void send_close(std::string& out, uint16_t code, std::string_view reason);
  bool in_message() const { return message_opcode_ != 0; }
  bool partial() const;
  uint64_t wake_after(uint64_t now) const;
  // Sends the persona's ping when due; false (closed, 1011) when a pong is overdue.
  bool keep_alive(std::string& out, uint64_t now);
  static uint64_t steady_us();

  const WsTable& table_;
  Accounting& sink_;
  Dice* dice_;
  uint64_t (*clock_)() = steady_us;
  State state_ = State::closed;
  uint8_t header_length_ = 0;   // bytes of a header split between reads, in header_
  bool in_frame_ = false;       // a frame's payload is being read
  bool bad_length_ = false;     // the header just read has a length the RFC forbids
  bool client_closed_ = false;  // the client's close frame came
  bool upgraded_ = false;       // counted as open
  uint8_t message_opcode_ = 0;  // text or binary while a message is in progress
  uint8_t control_length_ = 0;  // bytes of a control frame split between reads
  uint16_t close_code_ = 0;     // the close we sent or echoed, for the counters
  WsFrameHeader frame_;
  uint64_t frame_done_ = 0;  // payload bytes of frame_ read
  uint64_t stalled_since_us_ = 0;
  // The persona's pings (WebSocketPersona::ping_interval_s): when the next
  // is due, and until when the last one's pong may come (0: none awaited).
  uint64_t next_ping_us_ = 0;
  uint64_t pong_due_us_ = 0;
  uint32_t pings_ = 0;
  Utf8Check utf8_;
  uint8_t header_[kWsMaxHeader];
  uint8_t control_[kWsMaxControl];
  std::string message_;  // the message gathered so far
  // permessage-deflate, when agreed (ws_deflate.h): its streams, whether
  // the message in progress is compressed, and a message inflated or
  // compressed for its echo.
  std::unique_ptr<WsDeflate> deflate_;
  // For the access log's line at the end (only while logging): the
  // request target, when the upgrade was, and the payload bytes sent.
  std::string log_target_;
  uint64_t began_ns_ = 0;
  uint64_t bytes_out_ = 0;
  bool compressed_ = false;
  std::string scratch_;
  std::unique_ptr<WsShaping> shaping_;  // with --shape and parameters on the upgrade
};

}  // namespace hello
