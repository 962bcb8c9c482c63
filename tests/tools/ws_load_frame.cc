// WebSocket framing for ws_load: see ws_load_frame.h.
#include "ws_load_frame.h"

#include <cstring>

namespace ws_load {

uint8_t* put_client_header(uint8_t* out, uint8_t first, uint64_t length, const uint8_t key[4]) {
  constexpr uint8_t kMaskBit = 0x80;
  *out++ = first;
  if (length < 126) {
    *out++ = static_cast<uint8_t>(kMaskBit | length);
  } else if (length <= 0xffff) {
    *out++ = kMaskBit | 126;
    *out++ = static_cast<uint8_t>(length >> 8);
    *out++ = static_cast<uint8_t>(length);
  } else {
    *out++ = kMaskBit | 127;
    for (int shift = 56; shift >= 0; shift -= 8) *out++ = static_cast<uint8_t>(length >> shift);
  }
  std::memcpy(out, key, 4);
  return out + 4;
}

void mask_copy(uint8_t* out, const uint8_t* in, size_t n, const uint8_t key[4], size_t offset) {
  // The key, turned to start at `offset`, twice: one 64-bit word masks
  // eight bytes at once. memcpy is how C++ loads an unaligned word; the
  // compiler makes it one instruction and vectorises the loop.
  uint8_t turned[8];
  for (size_t i = 0; i < 8; ++i) turned[i] = key[(offset + i) & 3];
  uint64_t word;
  std::memcpy(&word, turned, 8);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, in + i, 8);
    x ^= word;
    std::memcpy(out + i, &x, 8);
  }
  // i is a multiple of 8 here, so the turned key still lines up.
  for (; i < n; ++i) out[i] = in[i] ^ turned[i & 7];
}

void put_client_frame(Buffer& out, uint8_t first, const uint8_t* payload, size_t n, Rng& rng) {
  uint32_t mask = static_cast<uint32_t>(rng.next());
  uint8_t key[4];
  std::memcpy(key, &mask, 4);
  uint8_t* at = out.tail(client_header_size(n) + n);
  uint8_t* body = put_client_header(at, first, n, key);
  mask_copy(body, payload, n, key, 0);
  out.commit(static_cast<size_t>(body - at) + n);
}

HeaderParse parse_header(const uint8_t* p, size_t n, FrameHeader& h, const char** why) {
  if (n < 2) return HeaderParse::kNeedMore;
  h.first = p[0];
  h.masked = p[1] & 0x80;
  uint64_t length = p[1] & 0x7f;
  size_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
  h.size = 2 + extended + (h.masked ? 4 : 0);
  if (n < h.size) return HeaderParse::kNeedMore;
  if (extended > 0) {
    length = 0;
    for (size_t i = 0; i < extended; ++i) length = length << 8 | p[2 + i];
    if (length >> 63) {
      *why = "a frame length with its top bit set";
      return HeaderParse::kBad;
    }
  }
  h.length = length;
  return HeaderParse::kDone;
}

Payload::Payload(size_t size, bool binary)
    : size_(size), width_(size < kStampWidth ? size : kStampWidth), base_(new uint8_t[size]) {
  for (size_t i = 0; i < size; ++i) {
    // Text: printable ASCII, '!' to '~', so every message is valid UTF-8.
    // Binary: 167 is odd, so every byte value comes once in each 256.
    base_[i] = binary ? static_cast<uint8_t>(i * 167 + 13) : static_cast<uint8_t>('!' + i % 94);
  }
}

void Payload::stamp(uint64_t seq, uint8_t out[kStampWidth]) const {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = width_; i-- > 0; seq >>= 4) out[i] = static_cast<uint8_t>(kHex[seq & 0xf]);
}

bool Payload::matches(const uint8_t* stamp, uint64_t offset, const uint8_t* p, size_t n,
                      uint64_t* at) const {
  expect(offset + n <= size_, "Payload::matches past the message's end");
  size_t i = 0;
  for (; i < n && offset + i < width_; ++i) {
    if (p[i] != stamp[offset + i]) {
      *at = offset + i;
      return false;
    }
  }
  const uint8_t* want = base_.get() + offset;
  if (std::memcmp(p + i, want + i, n - i) == 0) return true;
  while (p[i] == want[i]) ++i;  // memcmp said they differ, so this stops within n.
  *at = offset + i;
  return false;
}

}  // namespace ws_load
