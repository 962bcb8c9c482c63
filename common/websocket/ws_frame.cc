#include "websocket/ws_frame.h"

#include <cstring>

namespace hello {

WsHeaderRead read_ws_header(const uint8_t* data, size_t len, WsFrameHeader& header) {
  if (len < 2) return WsHeaderRead::more;
  header.fin = (data[0] & 0x80) != 0;
  header.rsv = static_cast<uint8_t>((data[0] >> 4) & 0x7);
  header.opcode = data[0] & 0x0f;
  header.masked = (data[1] & 0x80) != 0;
  uint8_t short_length = data[1] & 0x7f;
  size_t size = 2;
  if (short_length == 126) {
    if (len < 4) return WsHeaderRead::more;
    header.length = static_cast<uint64_t>(data[2]) << 8 | data[3];
    size = 4;
    // Section 5.2: "the minimal number of bytes MUST be used".
    if (header.length < 126) return WsHeaderRead::malformed;
  } else if (short_length == 127) {
    if (len < 10) return WsHeaderRead::more;
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i) length = length << 8 | data[2 + i];
    size = 10;
    // "the most significant bit MUST be 0"
    if ((length >> 63) != 0 || length <= 0xffff) return WsHeaderRead::malformed;
    header.length = length;
  } else {
    header.length = short_length;
  }
  if (header.masked) {
    if (len < size + 4) return WsHeaderRead::more;
    memcpy(header.mask, data + size, 4);
    size += 4;
  }
  header.size = static_cast<uint8_t>(size);
  return WsHeaderRead::done;
}

void append_ws_header(std::string& out, uint8_t opcode, uint64_t length, bool rsv1) {
  char head[10];
  size_t n = 2;
  head[0] = static_cast<char>(0x80 | (rsv1 ? 0x40 : 0) | opcode);
  if (length < 126) {
    head[1] = static_cast<char>(length);
  } else if (length <= 0xffff) {
    head[1] = 126;
    head[2] = static_cast<char>(length >> 8);
    head[3] = static_cast<char>(length & 0xff);
    n = 4;
  } else {
    head[1] = 127;
    for (int i = 0; i < 8; ++i) head[2 + i] = static_cast<char>((length >> (56 - 8 * i)) & 0xff);
    n = 10;
  }
  out.append(head, n);
}

void unmask_ws(const uint8_t* from, uint8_t* to, size_t len, const uint8_t mask[4],
               uint64_t offset) {
  // The mask turned to start at `offset`, then eight bytes at a time.
  uint8_t m[4];
  for (int i = 0; i < 4; ++i) m[i] = mask[(offset + static_cast<uint64_t>(i)) % 4];
  uint32_t word4;
  memcpy(&word4, m, 4);
  uint64_t word8 = static_cast<uint64_t>(word4) << 32 | word4;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t v;
    memcpy(&v, from + i, 8);
    v ^= word8;
    memcpy(to + i, &v, 8);
  }
  for (; i < len; ++i) to[i] = from[i] ^ m[i % 4];
}

bool ws_close_code_valid(uint16_t code) {
  if (code >= 3000 && code <= 4999) return true;
  if (code < 1000 || code > 1014) return false;
  // 1004 is reserved; 1005 and 1006 must never be sent (section 7.4.1).
  return code != 1004 && code != 1005 && code != 1006;
}

}  // namespace hello
