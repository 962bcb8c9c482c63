#include "base/duration.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

uint64_t us_of(std::string_view text) {
  uint64_t us = 12345;
  std::string why;
  EXPECT_TRUE(parse_duration(text, us, why)) << text << ": " << why;
  return us;
}

std::string why_not(std::string_view text) {
  uint64_t us = 0;
  std::string why;
  EXPECT_FALSE(parse_duration(text, us, why)) << text << " parsed as " << us;
  return why;
}

TEST(Duration, ParsesEachUnitAndFractions) {
  EXPECT_EQ(us_of("0"), 0u);
  EXPECT_EQ(us_of("0ms"), 0u);
  EXPECT_EQ(us_of("250us"), 250u);
  EXPECT_EQ(us_of("250\xc2\xb5s"), 250u);
  EXPECT_EQ(us_of("10ms"), 10000u);
  EXPECT_EQ(us_of("1.5s"), 1500000u);
  EXPECT_EQ(us_of("0.5ms"), 500u);
  EXPECT_EQ(us_of(".25s"), 250000u);
  EXPECT_EQ(us_of("60s"), 60000000u);
  EXPECT_EQ(us_of("1.0005ms"), 1001u) << "rounded to the nearest microsecond";
  EXPECT_EQ(us_of("0.4us"), 0u);
}

TEST(Duration, RefusesWhatIsNotADuration) {
  EXPECT_EQ(why_not("abc"), "not a number");
  EXPECT_EQ(why_not("-1ms"), "negative");
  EXPECT_EQ(why_not("10"), "no unit (us, ms or s)");
  EXPECT_EQ(why_not("10m"), "unknown unit \"m\" (us, ms or s)");
  EXPECT_EQ(why_not("1e3ms"), "unknown unit \"e3ms\" (us, ms or s)");
  EXPECT_EQ(why_not("1.s"), "no digit after '.'");
  EXPECT_EQ(why_not(""), "not a number");
  EXPECT_EQ(why_not(" 1s"), "not a number");
  EXPECT_EQ(why_not("99999999999999999999s"), "too long");
  EXPECT_EQ(why_not("9999999999999s"), "too long");
}

TEST(Duration, FormatsTheShortestExactSpelling) {
  EXPECT_EQ(format_duration(0), "0");
  EXPECT_EQ(format_duration(250), "250us");
  EXPECT_EQ(format_duration(10000), "10ms");
  EXPECT_EQ(format_duration(60000000), "60s");
  EXPECT_EQ(format_duration(1500000), "1500ms");
  for (uint64_t us : {1u, 999u, 1001u, 1500000u, 3600000000u})
    EXPECT_EQ(us_of(format_duration(us)), us);
}

}  // namespace
}  // namespace hello
