#include "http/host_syntax.h"

#include <array>
#include <string_view>

namespace hello {

namespace {

// The bytes of a reg-name besides pct-encoded: unreserved and sub-delims.
constexpr std::array<bool, 256> make_reg_name_table() {
  std::array<bool, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = t[c - 'a' + 'A'] = true;
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (char c : std::string_view("-._~!$&'()*+,;=")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kRegName = make_reg_name_table();

bool is_digit(unsigned char c) {
  return static_cast<unsigned char>(c - '0') < 10;
}

bool is_hex(unsigned char c) {
  return is_digit(c) || static_cast<unsigned char>((c | 0x20) - 'a') < 6;
}

bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t';
}

// The smallest value of a decimal number with `digits` digits and no
// leading zero, for 1 to 3 digits.
constexpr uint16_t kLeast[] = {0, 0, 10, 100};

}  // namespace

void HostSyntax::feed(const char* at, size_t len) {
  const auto* p = reinterpret_cast<const unsigned char*>(at);
  const unsigned char* end = p + len;
  // The bytes of a name, then of a port, are all most values have.
  if (state_ == State::reg_name) {
    const unsigned char* name = p;
    while (p < end && kRegName[*p]) ++p;
    host_seen_ |= p != name;
    if (p == end) return;
    if (*p != ':') return feed_bytes(p, end);
    state_ = State::port;
    ++p;
  }
  if (state_ == State::port) {
    while (p < end && is_digit(*p)) ++p;
    if (p == end) return;
  }
  feed_bytes(p, end);
}

// Byte by byte, in any state: percent-encoding, brackets, blanks at the
// end, and every error.
void HostSyntax::feed_bytes(const unsigned char* p, const unsigned char* end) {
  for (; p < end && state_ != State::invalid; ++p) {
    unsigned char c = *p;
    switch (state_) {
      case State::reg_name:
        if (kRegName[c]) {
          host_seen_ = true;
        } else if (c == '%') {
          state_ = State::percent;
          host_seen_ = true;
        } else if (c == ':') {
          state_ = State::port;
        } else if (c == '[' && !host_seen_) {
          state_ = State::literal;
          host_seen_ = true;
        } else {
          state_ = is_blank(c) ? State::blanks : State::invalid;
        }
        break;
      case State::percent:
        state_ = is_hex(c) ? State::percent_digit : State::invalid;
        break;
      case State::percent_digit:
        state_ = is_hex(c) ? State::reg_name : State::invalid;
        break;
      case State::port:
        if (!is_digit(c)) state_ = is_blank(c) ? State::blanks : State::invalid;
        break;
      case State::literal:
        if ((c | 0x20) == 'v') {
          state_ = State::future_version;
          digits_ = 0;
        } else {
          state_ = State::ipv6;
          step_ipv6(c);
        }
        break;
      case State::ipv6:
        if (c == ']')
          end_ipv6();
        else
          step_ipv6(c);
        break;
      case State::future_version:
        if (is_hex(c)) {
          digits_ = 1;
        } else if (c == '.' && digits_ != 0) {
          state_ = State::future_rest;
          digits_ = 0;
        } else {
          state_ = State::invalid;
        }
        break;
      case State::future_rest:
        if (kRegName[c] || c == ':')
          digits_ = 1;
        else
          state_ = c == ']' && digits_ != 0 ? State::after_literal : State::invalid;
        break;
      case State::after_literal:
        state_ = c == ':' ? State::port : is_blank(c) ? State::blanks : State::invalid;
        break;
      case State::blanks:
        if (!is_blank(c)) state_ = State::invalid;
        break;
      case State::invalid:
        break;
    }
  }
}

// One byte of an IPv6address (RFC 3986 section 3.2.2): 16-bit pieces of one
// to four hex digits separated by ':', at most one "::" standing for one or
// more zero pieces, and perhaps an IPv4 address as the last two pieces.
void HostSyntax::step_ipv6(unsigned char c) {
  if (dots_ != 0) {
    // In the IPv4 tail: decimal octets, three dots.
    if (is_digit(c) && digits_ < 3) {
      value_ = static_cast<uint16_t>(value_ * 10 + (c - '0'));
      ++digits_;
    } else if (c == '.' && dots_ < 3 && digits_ != 0 && value_ <= 255 &&
               value_ >= kLeast[digits_]) {
      ++dots_;
      digits_ = 0;
      value_ = 0;
    } else {
      state_ = State::invalid;
    }
    return;
  }
  if (is_hex(c)) {
    // A single ':' may not begin the address: ":1" is not "::1".
    if (digits_ == 4 || (colons_ == 1 && pieces_ == 0 && !compressed_)) {
      state_ = State::invalid;
      return;
    }
    ++digits_;
    colons_ = 0;
    if (is_digit(c))
      value_ = static_cast<uint16_t>(value_ * 10 + (c - '0'));
    else
      decimal_ = false;
  } else if (c == ':') {
    if (colons_ == 2 || (colons_ == 1 && compressed_)) {
      state_ = State::invalid;  // ":::", or a second "::"
    } else if (colons_ == 1) {
      compressed_ = true;
      colons_ = 2;
    } else {
      // The end of a piece, or a leading ':' that must be one of "::".
      if (digits_ != 0 && ++pieces_ == 8) state_ = State::invalid;
      colons_ = 1;
      digits_ = 0;
      value_ = 0;
      decimal_ = true;
    }
  } else if (c == '.' && decimal_ && digits_ != 0 && digits_ <= 3 && value_ <= 255 &&
             value_ >= kLeast[digits_]) {
    // The piece was the first octet of an IPv4 address.
    dots_ = 1;
    digits_ = 0;
    value_ = 0;
  } else {
    state_ = State::invalid;
  }
}

void HostSyntax::end_ipv6() {
  if (dots_ != 0) {
    if (dots_ != 3 || digits_ == 0 || value_ > 255 || value_ < kLeast[digits_]) {
      state_ = State::invalid;
      return;
    }
    pieces_ = static_cast<uint8_t>(pieces_ + 2);
  } else if (digits_ != 0) {
    ++pieces_;
  } else if (colons_ != 2) {
    // Empty, or a single ':' at the end.
    state_ = State::invalid;
    return;
  }
  // "::" stands for at least one piece.
  bool full = compressed_ ? pieces_ <= 7 : pieces_ == 8;
  state_ = full ? State::after_literal : State::invalid;
}

}  // namespace hello
