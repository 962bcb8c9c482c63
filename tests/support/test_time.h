// How much longer than in a Release build a test may wait for something.
// HELLO_TEST_TIME_SCALE (scripts/test sets it for --debug and --sanitize
// builds; README.md) multiplies every upper bound on time a test keeps;
// lower bounds (a 200 ms delay must not answer early) are never scaled.
#pragma once

#include <chrono>
#include <cstdlib>

namespace hello::test {

// The value of HELLO_TEST_TIME_SCALE (`value`, null when unset) as a
// number of at least 1; 1 when unset, empty, not a number or below 1.
inline double time_scale_of(const char* value) {
  if (value == nullptr) return 1.0;
  char* end = nullptr;
  double x = std::strtod(value, &end);
  return end != value && *end == '\0' && x >= 1.0 ? x : 1.0;
}

// This run's factor, read once.
inline double time_scale() {
  static const double scale = time_scale_of(std::getenv("HELLO_TEST_TIME_SCALE"));
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
