// RFC 6455 section 5's frame layout: the header a frame begins with, read
// from a client (masked) and written to one (unmasked), and the mask
// applied a word at a time. No state and no allocation: WsHeart keeps what
// a frame split between reads needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hello {

// Opcodes (RFC 6455 section 5.2); 3-7 and 0xB-0xF are reserved.
enum class WsOpcode : uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

inline constexpr bool ws_is_control(uint8_t opcode) {
  return (opcode & 0x8) != 0;
}

// Close codes the server sends (RFC 6455 section 7.4.1).
inline constexpr uint16_t kWsNormal = 1000;
inline constexpr uint16_t kWsGoingAway = 1001;
inline constexpr uint16_t kWsProtocolError = 1002;
inline constexpr uint16_t kWsInvalidData = 1007;
inline constexpr uint16_t kWsPolicy = 1008;
inline constexpr uint16_t kWsTooBig = 1009;
inline constexpr uint16_t kWsInternalError = 1011;

// A control frame's payload is at most this long (section 5.5).
inline constexpr size_t kWsMaxControl = 125;
// The longest header: 2 bytes, an 8-byte length and a 4-byte mask.
inline constexpr size_t kWsMaxHeader = 14;

struct WsFrameHeader {
  bool fin = false;
  uint8_t rsv = 0;  // RSV1-3 as bits 2..0 (RSV1 = 4)
  uint8_t opcode = 0;
  bool masked = false;
  uint8_t size = 0;  // bytes of header
  uint64_t length = 0;
  uint8_t mask[4] = {};
};

enum class WsHeaderRead : uint8_t {
  done,       // `header` holds it; `header.size` bytes were its
  more,       // the bytes end inside the header
  malformed,  // a length not in its minimal form, or with the top bit set
};

// Reads a frame header from the `len` bytes at `data`.
WsHeaderRead read_ws_header(const uint8_t* data, size_t len, WsFrameHeader& header);

// Appends an unmasked server frame header (FIN set) for a payload of
// `length` bytes.
void append_ws_header(std::string& out, uint8_t opcode, uint64_t length, bool rsv1 = false);

// Copies `len` bytes to `to`, XORed with `mask` from the payload offset
// `offset` on (RFC 6455 section 5.3). `to` may equal `from`.
void unmask_ws(const uint8_t* from, uint8_t* to, size_t len, const uint8_t mask[4],
               uint64_t offset);

// Whether a client's close code may be sent on the wire (section 7.4 and
// IANA's registry): 1000-1003, 1007-1014 and 3000-4999.
bool ws_close_code_valid(uint16_t code);

}  // namespace hello
