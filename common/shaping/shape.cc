#include "shaping/shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "base/check.h"
#include "base/duration.h"
#include "http/field_syntax.h"

namespace hello {

namespace {

constexpr uint32_t kSharesPerPercent = kAllShares / 100;
// A value quoted in an error is cut to this many bytes.
constexpr size_t kQuotedValue = 40;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// True if every '%' in `s` is followed by two hex digits.
bool percent_encoded(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '%') {
      if (i + 2 >= s.size() || hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0) return false;
      i += 2;
    }
  return true;
}

// Decodes %XX and '+' (a space) as a URL query is decoded, in place.
// Returns the decoded length, or SIZE_MAX for a '%' without two hex digits
// (which percent_encoded() has ruled out).
size_t percent_decode(char* s, size_t n) {
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (c == '+') {
      c = ' ';
    } else if (c == '%') {
      int high = i + 2 < n ? hex_digit(s[i + 1]) : -1;
      int low = high >= 0 ? hex_digit(s[i + 2]) : -1;
      if (low < 0) return SIZE_MAX;
      c = static_cast<char>(high * 16 + low);
      i += 2;
    }
    s[out++] = c;
  }
  return out;
}

// A decimal integer, no sign, no exponent; leading zeros are only zeros.
bool parse_integer(std::string_view s, uint64_t max, uint64_t& value) {
  while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
  if (s.empty() || s.size() > 19) return false;
  value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value <= max;
}

// "12.5" percent as shares; at most 100, finer than a share is cut.
bool parse_percent(std::string_view s, uint32_t& shares) {
  uint64_t whole = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && whole <= 100; ++i)
    whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
  if (i == 0 || whole > 100) return false;
  uint64_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    uint32_t scale = kSharesPerPercent / 10;
    size_t digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
      fraction += static_cast<uint64_t>(s[i] - '0') * scale;
      scale /= 10;
    }
    if (digits == 0) return false;
  }
  if (i != s.size()) return false;
  uint64_t total = whole * kSharesPerPercent + fraction;
  if (total > kAllShares) return false;
  shares = static_cast<uint32_t>(total);
  return true;
}

// Fills `error` with "KEY=VALUE: WHY", the value cut short and any control
// byte in it shown as '?', so that the reason stays one line.
bool refuse(ShapeError& error, std::string_view key, std::string_view value, std::string_view why) {
  std::string_view shown = value.substr(0, kQuotedValue);
  auto r = fmt::format_to_n(error.text, sizeof error.text, "{}={}{}: {}", key, shown,
                            value.size() > shown.size() ? "..." : "", why);
  error.length = std::min(r.size, sizeof error.text);
  for (size_t i = 0; i < error.length; ++i) {
    unsigned char c = static_cast<unsigned char>(error.text[i]);
    if (c < 0x20 || c == 0x7f) error.text[i] = '?';
  }
  return false;
}

// Reads one value of a mix; returns false with `why` set.
using ValueReader = bool (*)(std::string_view, const ShapeLimits&, uint64_t&, std::string_view&);

bool read_duration(std::string_view s, const ShapeLimits& limits, uint64_t& us,
                   std::string_view& why) {
  if (!parse_duration(s, us, why)) return false;
  if (us > limits.max_delay_us) {
    why = "over --max-delay";
    return false;
  }
  return true;
}

bool read_status(std::string_view s, const ShapeLimits&, uint64_t& status, std::string_view& why) {
  if (parse_integer(s, 599, status) && status >= 200) return true;
  why = "not a status from 200 to 599";
  return false;
}

bool read_size(std::string_view s, const ShapeLimits& limits, uint64_t& size,
               std::string_view& why) {
  if (parse_integer(s, UINT64_MAX / 10, size) && size <= limits.max_size) return true;
  why = s.find_first_not_of("0123456789") == std::string_view::npos && !s.empty()
            ? "over --max-size"
            : "not a whole number of bytes";
  return false;
}

// "V", or "V:P,V:P,...": each value read by `read`.
template <typename T>
bool parse_mix(std::string_view key, std::string_view text, const ShapeLimits& limits,
               ValueReader read, Mix<T>& mix, ShapeError& error) {
  Mix<T> m;
  uint64_t total = 0;
  std::string_view rest = text;
  bool many = text.find(',') != std::string_view::npos;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t colon = item.find(':');
    std::string_view value = item.substr(0, colon);
    uint32_t shares = kAllShares;
    if (colon == std::string_view::npos) {
      if (many) return refuse(error, key, text, "a value without :PERCENT must stand alone");
    } else if (!parse_percent(item.substr(colon + 1), shares)) {
      return refuse(error, key, text, "a percentage must be a number from 0 to 100");
    }
    if (m.count == Mix<T>::kMaxValues) return refuse(error, key, text, "more than 16 values");
    uint64_t v = 0;
    std::string_view why;
    if (!read(value, limits, v, why)) return refuse(error, key, value, why);
    total += shares;
    if (total > kAllShares) return refuse(error, key, text, "the percentages add up to over 100");
    m.values[m.count] = static_cast<T>(v);
    m.below[m.count] = static_cast<uint32_t>(total);
    ++m.count;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  mix = m;
  return true;
}

// "true" (all) or a percentage.
bool parse_share(std::string_view key, std::string_view text, uint32_t& shares, bool& given,
                 ShapeError& error) {
  if (text == "true")
    shares = kAllShares;
  else if (text == "false")
    shares = 0;
  else if (!parse_percent(text, shares))
    return refuse(error, key, text, "not true, false or a percentage from 0 to 100");
  given = true;
  return true;
}

bool parse_header(std::string_view text, const ShapeLimits& limits, Shape& shape,
                  ShapeError& error) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return refuse(error, "header", text, "not NAME:VALUE");
  std::string_view name = text.substr(0, colon);
  std::string_view value = text.substr(colon + 1);
  if (name.empty()) return refuse(error, "header", text, "an empty name");
  if (!is_token(name))
    return refuse(error, "header", text, "the name is not a token (RFC 9110 section 5.6.2)");
  // The server's own headers, and the persona's (limits.reserved).
  bool taken = is_server_header(name);
  if (limits.reserved != nullptr)
    for (const std::string& h : *limits.reserved) taken |= equals_nocase(name, h);
  if (taken) return refuse(error, "header", text, "the server sends this header itself");
  // Leading and trailing blanks are not part of a value (RFC 9110 section 5.5).
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (find_control(value) != std::string_view::npos)
    return refuse(error, "header", text, "the value holds a control character (CR, LF...)");
  if (shape.header_count == Shape::kMaxHeaders)
    return refuse(error, "header", text, "more than 16");
  shape.headers[shape.header_count++] = {name, value};
  return true;
}

bool parse_parameter(std::string_view key, std::string_view value, const ShapeLimits& limits,
                     Shape& shape, ShapeError& error) {
  if (key == "delay") return parse_mix(key, value, limits, read_duration, shape.delay, error);
  if (key == "status") return parse_mix(key, value, limits, read_status, shape.status, error);
  if (key == "size") return parse_mix(key, value, limits, read_size, shape.size, error);
  if (key == "close") return parse_share(key, value, shape.close, shape.has_close, error);
  if (key == "reset") return parse_share(key, value, shape.reset, shape.has_reset, error);
  if (key == "header") return parse_header(value, limits, shape, error);
  if (key == "drip") {
    std::string_view why;
    if (!read_duration(value, limits, shape.drip_us, why)) return refuse(error, key, value, why);
    shape.has_drip = true;
    return true;
  }
  return true;  // not ours
}

struct Pattern {
  char bytes[kPatternBytes];
  Pattern() {
    for (size_t i = 0; i < kPatternBytes; ++i) bytes[i] = kPatternAlphabet[i % 64];
  }
};

}  // namespace

bool parse_shape(char* text, size_t length, const ShapeLimits& limits, Shape& shape,
                 ShapeError& error) {
  size_t at = 0;
  while (at < length) {
    size_t end = at;
    while (end < length && text[end] != '&') ++end;
    char* item = text + at;
    size_t n = end - at;
    at = end + 1;
    if (n == 0) continue;
    size_t eq = 0;
    while (eq < n && item[eq] != '=') ++eq;
    if (!percent_encoded({item, n})) {
      std::string_view raw(item, n);
      return refuse(error, raw.substr(0, eq), eq < n ? raw.substr(eq + 1) : std::string_view(),
                    "a '%' not followed by two hex digits");
    }
    size_t key_length = percent_decode(item, eq);
    size_t value_length = eq < n ? percent_decode(item + eq + 1, n - eq - 1) : 0;
    HELLO_CHECK(key_length != SIZE_MAX && value_length != SIZE_MAX);  // checked above
    std::string_view key(item, key_length);
    std::string_view value(item + eq + 1, value_length);
    if (!parse_parameter(key, value, limits, shape, error)) return false;
  }
  return true;
}

Decision Dice::decide(const Shape& shape) {
  Decision d;
  if (shape.delay.given())
    if (const uint64_t* v = shape.delay.pick(draw())) {
      d.delay_us = *v;
      d.delayed = true;
    }
  if (shape.status.given())
    if (const uint16_t* v = shape.status.pick(draw())) d.status = *v;
  if (shape.size.given())
    if (const uint64_t* v = shape.size.pick(draw())) {
      d.size = *v;
      d.sized = true;
    }
  if (shape.has_close) d.close = draw() < shape.close;
  if (shape.has_reset) d.reset = draw() < shape.reset;
  d.drip_us = shape.drip_us;
  return d;
}

// The longest decision: each parameter with the longest value it can hold.
static_assert(kDecisionText >= sizeof "delay=18446744073709551615us status=599 "
                                      "size=18446744073709551615 close=1 reset=0 "
                                      "drip=18446744073709551615us");

size_t format_decision(const Shape& shape, const Decision& d, uint16_t status, uint64_t size,
                       char* out) {
  size_t n = 0;
  auto put = [&](std::string_view s) {
    memcpy(out + n, s.data(), s.size());
    n += s.size();
  };
  auto put_number = [&](uint64_t v) {
    n = static_cast<size_t>(std::to_chars(out + n, out + kDecisionText, v).ptr - out);
  };
  auto space = [&] {
    if (n > 0) put(" ");
  };
  if (shape.delay.given()) {
    space();
    put("delay=");
    n += format_duration(d.delay_us, out + n);
  }
  if (shape.status.given()) {
    space();
    put("status=");
    put_number(status);
  }
  if (shape.size.given()) {
    space();
    put("size=");
    put_number(size);
  }
  if (shape.has_close) {
    space();
    put(d.close ? "close=1" : "close=0");
  }
  if (shape.has_reset) {
    space();
    put(d.reset ? "reset=1" : "reset=0");
  }
  if (shape.has_drip) {
    space();
    put("drip=");
    n += format_duration(d.drip_us, out + n);
  }
  if (n == 0) put("headers");  // only headers were asked for
  return n;
}

const char* pattern_bytes() {
  static const Pattern pattern;
  return pattern.bytes;
}

}  // namespace hello
