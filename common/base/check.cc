#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace hello {

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace hello
