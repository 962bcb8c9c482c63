// How much longer than in a Release build a test may wait for something.
// HELLO_TEST_TIME_SCALE (scripts/test sets it for --debug and --sanitize
// builds; docs/testing.md) multiplies every upper bound on time a test keeps;
// lower bounds (a 200 ms delay must not answer early) are never scaled.
#pragma once

#include <chrono>
#include <cstdlib>

namespace hello::test {

// HELLO_TEST_TIME_SCALE as a number of at least 1; 1 when unset or not a number.
inline double time_scale() {
  static const double scale = [] {
    const char* v = std::getenv("HELLO_TEST_TIME_SCALE");
    char* end = nullptr;
    double x = v != nullptr ? std::strtod(v, &end) : 1.0;
    return v != nullptr && end != v && *end == '\0' && x >= 1.0 ? x : 1.0;
  }();
  return scale;
}

// `limit`, a Release build's bound, for this build.
inline std::chrono::milliseconds scaled(std::chrono::milliseconds limit) {
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(
      static_cast<double>(limit.count()) * time_scale()));
}

// The same for a bound in milliseconds as a number.
inline double scaled_ms(double ms) {
  return ms * time_scale();
}

}  // namespace hello::test
