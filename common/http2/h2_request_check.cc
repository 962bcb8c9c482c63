#include "http2/h2_request_check.h"

#include <array>

#include "http/field_syntax.h"

namespace hello {

namespace {

// The byte classes of the rules, one bit each in a table of 256 entries
// made at compile time: no character is tested by a chain of comparisons.
enum Class : uint8_t {
  kNameChar = 1,    // a field name: token characters, lower case (RFC 9110 5.6.2)
  kValueChar = 2,   // a field value: HTAB, SP, VCHAR, obs-text (RFC 9113 8.2.1)
  kTokenChar = 4,   // :method: token characters (RFC 9110 9.1)
  kSchemeChar = 8,  // :scheme: ALPHA, DIGIT, '+', '-', '.' (RFC 3986 3.1)
  kAuthorityChar =
      16,  // :authority and Host: RFC 3986's unreserved, sub-delims, ':', '@', '[', ']', '%'
  kPathChar = 32,  // :path: VCHAR and obs-text (no SP, no control)
};

constexpr bool in(std::string_view set, int c) {
  for (char s : set)
    if (static_cast<unsigned char>(s) == c) return true;
  return false;
}

constexpr std::array<uint8_t, 256> make_classes() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    char b = static_cast<char>(c);
    bool lower = c >= 'a' && c <= 'z';
    bool upper = c >= 'A' && c <= 'Z';
    bool digit = c >= '0' && c <= '9';
    bool tchar = is_tchar(b);  // http/field_syntax.h's rules, tabled
    uint8_t k = 0;
    if (tchar && to_lower_ascii(b) == b) k |= kNameChar;
    if (find_control(std::string_view(&b, 1)) == std::string_view::npos) k |= kValueChar;
    if (tchar) k |= kTokenChar;
    if (lower || upper || digit || in("+-.", c)) k |= kSchemeChar;
    if (lower || upper || digit || in("-._~!$&'()*+,;=:@[]%", c)) k |= kAuthorityChar;
    if (c > 0x20 && c != 0x7f) k |= kPathChar;
    t[static_cast<size_t>(c)] = k;
  }
  return t;
}

constexpr std::array<uint8_t, 256> kClasses = make_classes();

bool all(std::string_view s, Class k) {
  for (char c : s)
    if ((kClasses[static_cast<unsigned char>(c)] & k) == 0) return false;
  return true;
}

// A regular field's value: no leading or trailing SP or HTAB either.
bool value_ok(std::string_view v) {
  if (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.back() == ' ' || v.back() == '\t'))
    return false;
  return all(v, kValueChar);
}

}  // namespace

bool H2RequestCheck::pseudo(std::string_view name, std::string_view value) {
  uint8_t bit = 0;
  if (name == ":method") {
    if (value.empty() || !all(value, kTokenChar)) return false;
    options_ = value == "OPTIONS";
    if (value == "CONNECT") seen_ |= kConnect;
    bit = kMethod;
  } else if (name == ":scheme") {
    char first = static_cast<char>(value.empty() ? 0 : value[0] | 0x20);
    if (first < 'a' || first > 'z' || !all(value, kSchemeChar)) return false;  // a letter first
    http_scheme_ = value == "http" || value == "https";
    bit = kScheme;
  } else if (name == ":authority") {
    if (!all(value, kAuthorityChar)) return false;
    bit = kAuthority;
  } else if (name == ":path") {
    if (value.empty() || !all(value, kPathChar)) return false;
    if (value[0] == '/') seen_ |= kPathSlash;
    path_star_ = value == "*";
    bit = kPath;
  } else {
    return false;  // :status, :protocol or any other
  }
  if ((seen_ & bit) != 0) return false;
  seen_ |= bit;
  return true;
}

bool H2RequestCheck::field(std::string_view name, std::string_view value, bool trailers) {
  if (name.empty()) return false;
  if (name[0] == ':') {
    if (trailers || (seen_ & kRegular) != 0) return false;
    return pseudo(name, value);
  }
  seen_ |= kRegular;
  if (!all(name, kNameChar) || !value_ok(value) || is_connection_specific(name)) return false;
  if (name == "te") return value == "trailers";
  if (name == "host") {
    seen_ |= kHost;
    return all(value, kAuthorityChar);
  }
  if (name == "content-length") {
    if (content_length_ >= 0 || value.empty() || trailers) return false;
    int64_t n = 0;
    for (char c : value) {
      if (c < '0' || c > '9' || n > (INT64_MAX - 9) / 10) return false;
      n = n * 10 + (c - '0');
    }
    content_length_ = n;
  }
  return true;
}

bool H2RequestCheck::head_done() const {
  if ((seen_ & kConnect) != 0)  // RFC 9113 8.5: :method and :authority alone
    return (seen_ & (kAuthority | kScheme | kPath)) == kAuthority;
  constexpr uint8_t kRequired = kMethod | kScheme | kPath;
  if ((seen_ & kRequired) != kRequired || (seen_ & (kAuthority | kHost)) == 0) return false;
  if (!http_scheme_) return true;
  return (seen_ & kPathSlash) != 0 || (options_ && path_star_);
}

}  // namespace hello
