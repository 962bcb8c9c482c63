#include "base/duration.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

namespace hello {

namespace {

// 2^64 ns is 584 years: anything longer is refused, not wrapped.
constexpr uint64_t kMaxNs = UINT64_MAX / 10;

}  // namespace

bool parse_duration(std::string_view text, uint64_t& us, std::string_view& why) {
  if (text == "0") {
    us = 0;
    return true;
  }
  // The number in nanoseconds: integer digits, then up to nine fraction digits.
  size_t i = 0;
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    if (whole > kMaxNs / 10) {
      why = "too long";
      return false;
    }
    whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  uint64_t fraction = 0;  // in units of 10^-9
  if (i < text.size() && text[i] == '.') {
    ++i;
    uint64_t scale = 100000000;
    size_t fraction_digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++fraction_digits) {
      fraction += static_cast<uint64_t>(text[i] - '0') * scale;
      scale /= 10;
    }
    if (fraction_digits == 0) {
      why = "no digit after '.'";
      return false;
    }
    digits += fraction_digits;
  }
  if (digits == 0) {
    why = i < text.size() && text[i] == '-' ? "negative" : "not a number";
    return false;
  }
  std::string_view unit = text.substr(i);
  uint64_t ns_per_unit;
  if (unit == "us" || unit == "\xc2\xb5s")
    ns_per_unit = 1000;
  else if (unit == "ms")
    ns_per_unit = 1000000;
  else if (unit == "s")
    ns_per_unit = 1000000000;
  else {
    why = unit.empty() ? "no unit (us, ms or s)" : "unknown unit (us, ms or s)";
    return false;
  }
  if (whole > kMaxNs / ns_per_unit) {
    why = "too long";
    return false;
  }
  // fraction * ns_per_unit / 10^9, without overflow: fraction < 10^9.
  uint64_t ns = whole * ns_per_unit + fraction / (1000000000 / ns_per_unit);
  us = (ns + 500) / 1000;
  return true;
}

bool parse_duration(std::string_view text, uint64_t& us, std::string& why) {
  std::string_view reason;
  if (parse_duration(text, us, reason)) return true;
  // Name the unit that was not understood.
  size_t unit = text.find_first_not_of("0123456789.");
  if (reason.starts_with("unknown unit") && unit != std::string_view::npos)
    why = fmt::format("unknown unit \"{}\" (us, ms or s)", text.substr(unit));
  else
    why = reason;
  return false;
}

size_t format_duration(uint64_t us, char* out) {
  std::string_view unit = "us";
  if (us == 0) {
    unit = "";  // not {}: memcpy may not be given a null pointer, even for 0 bytes
  } else if (us % 1000000 == 0) {
    us /= 1000000;
    unit = "s";
  } else if (us % 1000 == 0) {
    us /= 1000;
    unit = "ms";
  }
  char* end = std::to_chars(out, out + 20, us).ptr;
  memcpy(end, unit.data(), unit.size());
  return static_cast<size_t>(end - out) + unit.size();
}

std::string format_duration(uint64_t us) {
  char text[kDurationText];
  return std::string(text, format_duration(us, text));
}

}  // namespace hello
