// Invariants that stay checked in every build: unlike assert(), HELLO_CHECK
// is never compiled out, so the tests, sanitizers and fuzzer (and a release
// build) all stop at the first broken invariant instead of running on.
#pragma once

namespace hello {

// Prints "file:line: check failed: expr" to stderr and aborts.
[[noreturn]] void check_failed(const char* expr, const char* file, int line);

}  // namespace hello

#define HELLO_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::hello::check_failed(#cond, __FILE__, __LINE__))

// A libuv call that cannot fail here (its result is still checked).
#define HELLO_CHECK_UV(expr) HELLO_CHECK((expr) == 0)
