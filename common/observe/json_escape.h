// JSON string escaping for the access log (RFC 8259 section 7), into a
// caller's buffer: no allocation, one pass.
#pragma once

#include <cstddef>
#include <string_view>

namespace hello {

// An escaped byte is at most this long ("\u001f", or "\ufffd" for a byte
// of ill-formed UTF-8): `out` of json_escape() needs this per input byte.
inline constexpr size_t kJsonEscapedByte = 6;

// Writes `in` into `out` (room for kJsonEscapedByte * in.size() bytes) as
// the inside of a JSON string, without the quotes, and returns its length:
// '"' and '\\' escaped by a backslash; control bytes (0x00-0x1f) and DEL
// (0x7f) as \u00XX; well-formed UTF-8 copied as it is; each maximal subpart
// of an ill-formed sequence (Unicode's "U+FFFD substitution of maximal
// subparts", as WHATWG's decoder and Python's errors="replace" do it) as
// one \ufffd. Whatever the bytes, the result is valid JSON text in UTF-8.
size_t json_escape(std::string_view in, char* out);

}  // namespace hello
