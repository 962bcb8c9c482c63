// The rules of header fields (RFC 9110 section 5), written once for every
// protocol and feature that reads or writes them: the HTTP/1 reader, the
// route file (--routes), shaping's `header=` and HTTP/2's request check. Header-only and constexpr:
// the reader's uses are on its hot path.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace hello {

// `c` in lower case if it is an ASCII letter; any other byte as it is.
// Field names, transfer codings and URI schemes are case-insensitive, in
// ASCII only (RFC 9110 sections 5.1 and 7.8, RFC 3986 section 3.1).
constexpr char to_lower_ascii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

// True if `a` and `b` are the same bytes but for the case of ASCII letters.
constexpr bool equals_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (to_lower_ascii(a[i]) != to_lower_ascii(b[i])) return false;
  return true;
}

// `v` without the blanks (SP, HTAB) around it: a field value or a list
// element without its OWS (RFC 9110 sections 5.5 and 5.6.1).
constexpr std::string_view trim_ows(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// Whether the comma-separated list `list` holds `token`, compared without
// case (RFC 9110 section 5.6.1: Upgrade, Connection and their kin).
constexpr bool list_has_token(std::string_view list, std::string_view token) {
  while (true) {
    size_t comma = list.find(',');
    if (equals_nocase(trim_ows(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) return false;
    list.remove_prefix(comma + 1);
  }
}

// RFC 9110 section 5.6.2: tchar, a byte of a token.
constexpr bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != '\0' && std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A token: one tchar or more (a field name, section 5.1).
constexpr bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(c)) return false;
  return true;
}

// The first byte of `value` that a field value may not hold, or npos: a
// control character other than HTAB (CR and LF among them) or DEL. RFC
// 9110 section 5.5: a field value is VCHAR, obs-text and inner SP or HTAB.
constexpr size_t find_control(std::string_view value) {
  for (size_t i = 0; i < value.size(); ++i) {
    auto c = static_cast<unsigned char>(value[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
  }
  return std::string_view::npos;
}

// The connection-specific fields HTTP/2 forbids (RFC 9113 section 8.2.2),
// names in lower case: an HTTP/1 answer's are left out of its HTTP/2 form,
// and a request that carries one is malformed.
constexpr bool is_connection_specific(std::string_view lower) {
  for (std::string_view n :
       {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
    if (lower == n) return true;
  return false;
}

// The headers the server writes on answers itself, in lower case: the
// framing (Content-Length, Transfer-Encoding), the connection's fate
// (Connection, Keep-Alive), the Date it stamps once a second, and the
// decision of a shaped answer. Neither a route file nor a shaped `header=`
// may set one: the answer would carry it twice, or contradict its framing.
inline constexpr std::array<std::string_view, 6> kServerHeaders = {
    "content-length", "transfer-encoding",     "connection", "keep-alive",
    "date",           "x-hello-shape-decision"};

// True if `name` (any case) is one of kServerHeaders.
constexpr bool is_server_header(std::string_view name) {
  for (std::string_view h : kServerHeaders)
    if (equals_nocase(name, h)) return true;
  return false;
}

}  // namespace hello
