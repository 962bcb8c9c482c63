// Durations as people write them in route files and flags: "250us",
// "1.5ms", "2s". One parser, so every place that takes a duration accepts
// the same text and says the same thing about a bad one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hello {

// Parses a decimal number followed by a unit: "us" (or "µs"), "ms" or "s";
// a bare "0" is zero. Fractions finer than a microsecond are rounded to the
// nearest one. On success stores microseconds in `us` and returns true;
// otherwise sets `why` to a short reason ("no unit", ...) and returns false.
bool parse_duration(std::string_view text, uint64_t& us, std::string& why);
// The same, allocating nothing (for request parameters): `why` is a fixed
// text, which names no unit.
bool parse_duration(std::string_view text, uint64_t& us, std::string_view& why);

// "250us", "10ms", "2s": `us` exactly, in the largest unit that is.
std::string format_duration(uint64_t us);
// The same into `out` (kDurationText bytes), allocating nothing; returns its length.
inline constexpr size_t kDurationText = 22;  // 20 digits and a unit
size_t format_duration(uint64_t us, char* out);

// A flag's SECONDS (--header-timeout 0.2) in whole milliseconds.
inline uint64_t seconds_to_ms(double seconds) {
  return static_cast<uint64_t>(seconds * 1000);
}

}  // namespace hello
