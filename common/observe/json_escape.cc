#include "observe/json_escape.h"

#include <cstdint>
#include <cstring>

namespace hello {

namespace {

// The length of the well-formed UTF-8 sequence at `p` (Unicode 15, table
// 3-7), or 0 with `*subpart` set to the bytes of its maximal subpart (at
// least 1): those become one U+FFFD. `end` bounds the read.
size_t utf8_sequence(const unsigned char* p, const unsigned char* end, size_t* subpart) {
  unsigned char lead = p[0];
  size_t length;
  // The range of the byte after the lead; the later ones are 80..BF.
  unsigned char low = 0x80, high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // no overlong forms
    if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // no overlong forms
    if (lead == 0xf4) high = 0x8f;  // nothing above U+10FFFF
  } else {
    *subpart = 1;  // 80..C1 and F5..FF never begin a sequence
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    if (p + i >= end || p[i] < low || p[i] > high) {
      *subpart = i;
      return 0;
    }
    low = 0x80;
    high = 0xbf;
  }
  return length;
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

size_t json_escape(std::string_view in, char* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const unsigned char* const end = p + in.size();
  char* o = out;
  while (p < end) {
    unsigned char c = *p;
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      *o++ = static_cast<char>(c);  // the common case: printable ASCII
      ++p;
    } else if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = static_cast<char>(c);
      ++p;
    } else if (c < 0x80) {  // a control byte or DEL
      memcpy(o, "\\u00", 4);
      o[4] = kHex[c >> 4];
      o[5] = kHex[c & 0xf];
      o += 6;
      ++p;
    } else {
      size_t subpart = 0;
      size_t n = utf8_sequence(p, end, &subpart);
      if (n > 0) {
        memcpy(o, p, n);
        o += n;
        p += n;
      } else {
        memcpy(o, "\\ufffd", 6);
        o += 6;
        p += subpart;
      }
    }
  }
  return static_cast<size_t>(o - out);
}

}  // namespace hello
