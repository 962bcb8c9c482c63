// Invariants checked in every build, NDEBUG or not, like libuv's test
// ASSERT: a broken invariant stops the process with the file, the line and
// the expression, in the builds the tests and the fuzzer use as in the one
// that is deployed. Not for errors a client or the system can cause: those
// are answered or returned.
#pragma once

namespace hello {

// Prints "FILE:LINE: check failed: EXPR" to stderr and aborts.
[[noreturn]] void check_failed(const char* expr, const char* file, int line);

}  // namespace hello

// Aborts through check_failed() unless `cond` holds. `cond` is evaluated
// exactly once.
#define HELLO_CHECK(cond)                       \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::hello::check_failed(#cond, __FILE__, __LINE__))

// Aborts unless `rc`, a libuv result, is 0: for calls that cannot fail
// where they are made.
#define HELLO_CHECK_UV(rc) HELLO_CHECK((rc) == 0)
