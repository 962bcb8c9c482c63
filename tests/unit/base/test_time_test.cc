// tests/support/test_time.h: how HELLO_TEST_TIME_SCALE is read, the factor
// by which scripts/test widens the tests' upper bounds on time.
#include "test_time.h"

#include <gtest/gtest.h>

namespace hello::test {
namespace {

TEST(TestTimeScale, IsOneUnlessSetToANumberOfAtLeastOne) {
  EXPECT_EQ(time_scale_of(nullptr), 1.0);
  EXPECT_EQ(time_scale_of(""), 1.0);
  EXPECT_EQ(time_scale_of("fast"), 1.0);
  EXPECT_EQ(time_scale_of("3x"), 1.0);
  EXPECT_EQ(time_scale_of("0.5"), 1.0) << "never tighter than a Release build's";
  EXPECT_EQ(time_scale_of("-2"), 1.0);
  EXPECT_EQ(time_scale_of("3"), 3.0);
  EXPECT_EQ(time_scale_of("2.5"), 2.5);
}

}  // namespace
}  // namespace hello::test
