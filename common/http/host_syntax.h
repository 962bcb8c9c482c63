// The syntax of a Host value (RFC 9110 section 7.2) and of the authority of
// an absolute-form target (RFC 9112 section 3.2.2): uri-host [":" port],
// from RFC 3986 sections 3.2.2 and 3.2.3:
//
//   uri-host    = IP-literal / IPv4address / reg-name
//   IP-literal  = "[" ( IPv6address / IPvFuture ) "]"
//   IPvFuture   = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
//   reg-name    = *( unreserved / pct-encoded / sub-delims )
//   port        = *DIGIT
//
// An IPv4address is also a reg-name, so it needs no rule of its own. The
// bytes are checked as they arrive, in pieces of any size, with ten bytes of
// state: a value split across reads needs no copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hello {

class HostSyntax {
 public:
  // Starts over for a new value.
  void reset() { *this = HostSyntax(); }
  // Checks the next `len` bytes of the value.
  void feed(const char* at, size_t len);
  // True if the bytes fed so far are a whole uri-host [":" port], perhaps
  // followed by blanks (the end of a field line, RFC 9110 section 5.5).
  bool valid() const {
    return state_ == State::reg_name || state_ == State::port || state_ == State::after_literal ||
           state_ == State::blanks;
  }
  // True if the host is empty, as in "" or ":80".
  bool empty_host() const { return !host_seen_; }

 private:
  enum class State : uint8_t {
    reg_name,        // the start, and in a reg-name
    percent,         // after '%' in a reg-name
    percent_digit,   // after '%' and one hex digit
    port,            // after ':'
    literal,         // after '['
    ipv6,            // in an IPv6address
    future_version,  // after "[v" and hex digits, if any
    future_rest,     // after "[v" HEXDIG "." and the rest, if any
    after_literal,   // after ']'
    blanks,          // after a valid value and blanks
    invalid,
  };

  void feed_bytes(const unsigned char* p, const unsigned char* end);
  void step_ipv6(unsigned char c);
  void end_ipv6();

  State state_ = State::reg_name;
  bool host_seen_ = false;  // some byte of the host part (not of the port)
  // Within an IPv6address: the 16-bit pieces complete so far (an IPv4
  // address counts as two), the digits of the current one, the colons just
  // read, whether "::" was, the dots of an IPv4 tail and the decimal value
  // of its current octet (or of the current piece while it may become one).
  uint8_t pieces_ = 0;
  uint8_t digits_ = 0;
  uint8_t colons_ = 0;
  uint8_t dots_ = 0;
  uint16_t value_ = 0;
  bool compressed_ = false;
  bool decimal_ = true;  // the current piece has no hex letter
};

}  // namespace hello
