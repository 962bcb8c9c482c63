// UTF-8 validation of a text message as its bytes come (RFC 6455 section
// 8.1, RFC 3629 section 4): bytes split anywhere, across frames and reads,
// and an invalid byte found where it arrives, so a message is failed
// before its end comes. ASCII, the common case, goes eight bytes at a time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hello {

class Utf8Check {
 public:
  // Starts a new message.
  void reset() {
    need_ = 0;
    lo_ = 0x80;
    hi_ = 0xbf;
  }
  // Checks `len` more bytes; false at the first that no valid UTF-8 holds
  // there (the check then means nothing until reset()).
  bool feed(const uint8_t* data, size_t len);
  // The bytes so far end where a character does.
  bool complete() const { return need_ == 0; }

 private:
  uint8_t need_ = 0;  // continuation bytes still due for this character
  // The range the next continuation byte must be in: narrower after E0,
  // ED, F0 and F4 (no overlong forms, no surrogates, nothing past U+10FFFF).
  uint8_t lo_ = 0x80;
  uint8_t hi_ = 0xbf;
};

}  // namespace hello
