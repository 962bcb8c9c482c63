#include "base/check.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

int busy() {
  return -16;  // UV_EBUSY
}

TEST(Check, PassesAndEvaluatesItsConditionOnce) {
  int calls = 0;
  HELLO_CHECK(++calls == 1);
  HELLO_CHECK_UV(calls - 1);
  EXPECT_EQ(calls, 1);
}

// Checked whether or not NDEBUG is defined (the default build defines it).
TEST(CheckDeathTest, NamesTheFileTheLineAndTheExpression) {
  int two = 2;
  EXPECT_DEATH(HELLO_CHECK(two == 3), "check_test\\.cc:[0-9]+: check failed: two == 3\n");
  EXPECT_DEATH(HELLO_CHECK_UV(busy()),
               "check_test\\.cc:[0-9]+: check failed: \\(busy\\(\\)\\) == 0\n");
}

}  // namespace
}  // namespace hello
