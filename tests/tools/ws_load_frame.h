// WebSocket framing for ws_load (RFC 6455 section 5), socket-free: the
// masked frames a client sends, the header of a frame a server sends, and
// the messages' payload, numbered so that every echo can be checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ws_load.h"

namespace ws_load {

enum Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xa,
};

constexpr uint8_t kFin = 0x80;
constexpr uint8_t kRsv1 = 0x40;  // a compressed message's first frame (RFC 7692 section 6)
constexpr uint8_t kRsv23 = 0x30;
// 2 bytes, 8 of extended length and 4 of mask key.
constexpr size_t kMaxFrameHeader = 14;
// A control frame's payload at most (RFC 6455 section 5.5).
constexpr size_t kMaxControlPayload = 125;

// The size of a client frame's header (mask key included) for `length`
// payload bytes.
constexpr size_t client_header_size(uint64_t length) {
  return (length < 126 ? 2 : length <= 0xffff ? 4 : 10) + 4;
}

// Writes a client frame's header at `out`: `first` (FIN, RSV1, opcode),
// the length and the mask key; returns the first byte after it.
uint8_t* put_client_header(uint8_t* out, uint8_t first, uint64_t length, const uint8_t key[4]);

// Copies `n` bytes to `out`, masked with `key` as bytes `offset` onward of
// a frame's payload are (RFC 6455 section 5.3), eight bytes at a time.
void mask_copy(uint8_t* out, const uint8_t* in, size_t n, const uint8_t key[4], size_t offset);

// Appends a whole masked frame of `payload` to `out`.
void put_client_frame(Buffer& out, uint8_t first, const uint8_t* payload, size_t n, Rng& rng);

// The header of a frame from the server.
struct FrameHeader {
  uint8_t first = 0;  // FIN, RSV1-3, opcode
  bool masked = false;
  uint64_t length = 0;
  size_t size = 0;  // the header's own bytes

  bool fin() const { return first & kFin; }
  bool rsv1() const { return first & kRsv1; }
  uint8_t opcode() const { return first & 0x0f; }
  bool control() const { return first & 0x08; }
};

enum class HeaderParse { kNeedMore, kDone, kBad };

// Reads a frame header from the first `n` bytes at `p`: kNeedMore if they
// hold only part of it, kBad (with `why`) for a header no server may send
// (a 64-bit length with its top bit set).
HeaderParse parse_header(const uint8_t* p, size_t n, FrameHeader& h, const char** why);

// The bytes of every message: a template of --size bytes (ASCII for text,
// every byte value for binary) whose first stamp_width() bytes are replaced
// by the message's number in hex.
class Payload {
 public:
  Payload(size_t size, bool binary);

  size_t size() const { return size_; }
  size_t stamp_width() const { return width_; }
  const uint8_t* base() const { return base_.get(); }

  // The first stamp_width() bytes of message `seq`.
  void stamp(uint64_t seq, uint8_t out[kStampWidth]) const;

  // Whether bytes [offset, offset + n) of the message that begins with
  // `stamp` are the `n` bytes at `p`; their index in it if not, in `at`.
  bool matches(const uint8_t* stamp, uint64_t offset, const uint8_t* p, size_t n,
               uint64_t* at) const;

 private:
  size_t size_;
  size_t width_;
  std::unique_ptr<uint8_t[]> base_;
};

}  // namespace ws_load
