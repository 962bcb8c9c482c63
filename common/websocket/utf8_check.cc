#include "websocket/utf8_check.h"

#include <cstring>

namespace hello {

bool Utf8Check::feed(const uint8_t* data, size_t len) {
  size_t i = 0;
  while (i < len) {
    if (need_ == 0) {
      // Runs of ASCII, eight bytes at a time.
      while (i + 8 <= len) {
        uint64_t v;
        memcpy(&v, data + i, 8);
        if ((v & 0x8080808080808080ull) != 0) break;
        i += 8;
      }
      if (i == len) break;
      uint8_t c = data[i++];
      if (c < 0x80) continue;
      lo_ = 0x80;
      hi_ = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) {
        need_ = 1;
      } else if (c >= 0xe0 && c <= 0xef) {
        need_ = 2;
        if (c == 0xe0) lo_ = 0xa0;  // no overlong 3-byte form
        if (c == 0xed) hi_ = 0x9f;  // no surrogates (U+D800-U+DFFF)
      } else if (c >= 0xf0 && c <= 0xf4) {
        need_ = 3;
        if (c == 0xf0) lo_ = 0x90;  // no overlong 4-byte form
        if (c == 0xf4) hi_ = 0x8f;  // nothing past U+10FFFF
      } else {
        return false;  // 80-C1 (a stray continuation, overlong 2-byte), F5-FF
      }
      continue;
    }
    uint8_t c = data[i++];
    if (c < lo_ || c > hi_) return false;
    lo_ = 0x80;
    hi_ = 0xbf;
    --need_;
  }
  return true;
}

}  // namespace hello
