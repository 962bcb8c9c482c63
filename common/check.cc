#include "check.h"

#include <cstdio>
#include <cstdlib>

namespace hello {

void check_failed(const char* expr, const char* file, int line) {
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
  abort();
}

}  // namespace hello
