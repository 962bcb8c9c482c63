// A whole-worker pause, like a stop-the-world garbage collection: the
// --stall flag. Every worker's loop is blocked over the same windows of
// time, so every connection's requests queue up behind it; this is what a
// load tester's coordinated-omission handling is checked against.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hello {

// The longest stall --stall accepts (a minute covers any real GC pause).
inline constexpr uint64_t kMaxStallUs = 60'000'000;

// One --stall SPEC. Its stalls begin at_us, at_us + every_us, at_us +
// 2 * every_us ... after the workers start (only at_us when every_us is 0),
// and each lasts duration_us.
struct Stall {
  uint64_t duration_us = 0;
  uint64_t every_us = 0;  // 0: once
  uint64_t at_us = 0;     // the first stall; every_us itself for DURATION/EVERY
};

// Parses "DURATION/EVERY" (e.g. "200ms/5s": every EVERY, the first one
// EVERY after start) or "DURATION@AT" (e.g. "500ms@3s": once, AT after
// start), each a duration of parse_duration(). DURATION is more than 0 and
// at most kMaxStallUs, EVERY longer than DURATION; AT may be 0. On success
// fills `stall` and returns true; otherwise sets `why` to a short reason
// and returns false.
bool parse_stall(std::string_view text, Stall& stall, std::string& why);

}  // namespace hello
