#include "shaping/stall.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

Stall stall_of(std::string_view text) {
  Stall s{.duration_us = 1, .every_us = 2, .at_us = 3};
  std::string why;
  EXPECT_TRUE(parse_stall(text, s, why)) << text << ": " << why;
  return s;
}

std::string why_not(std::string_view text) {
  Stall s{.duration_us = 1, .every_us = 2, .at_us = 3};
  std::string why;
  EXPECT_FALSE(parse_stall(text, s, why)) << text << " parsed";
  // A refused SPEC leaves the Stall as it was.
  EXPECT_EQ(s.duration_us, 1u) << text;
  EXPECT_EQ(s.every_us, 2u) << text;
  EXPECT_EQ(s.at_us, 3u) << text;
  return why;
}

void expect_stall(std::string_view text, uint64_t duration_us, uint64_t every_us, uint64_t at_us) {
  Stall s = stall_of(text);
  EXPECT_EQ(s.duration_us, duration_us) << text;
  EXPECT_EQ(s.every_us, every_us) << text;
  EXPECT_EQ(s.at_us, at_us) << text;
}

TEST(Stall, PeriodicStallsStartOnePeriodAfterStart) {
  expect_stall("200ms/5s", 200000, 5000000, 5000000);
  expect_stall("1.5ms/2.5ms", 1500, 2500, 2500);
  expect_stall("250us/1ms", 250, 1000, 1000);
  expect_stall("250\xc2\xb5s/1ms", 250, 1000, 1000);
  expect_stall("60s/61s", 60000000, 61000000, 61000000);
  expect_stall("1us/2us", 1, 2, 2);
}

TEST(Stall, AOneOffStallIsAtItsTime) {
  expect_stall("500ms@3s", 500000, 0, 3000000);
  expect_stall("300ms@500ms", 300000, 0, 500000);
  expect_stall("1s@0", 1000000, 0, 0);
  expect_stall("1s@0ms", 1000000, 0, 0);
  expect_stall("60s@1s", 60000000, 0, 1000000);
  // AT is not bounded by DURATION's limit.
  expect_stall("1ms@90s", 1000, 0, 90000000);
}

TEST(Stall, RefusesABadSpecWithItsReason) {
  EXPECT_EQ(why_not("200ms"), "not DURATION/EVERY or DURATION@AT");
  EXPECT_EQ(why_not(""), "not DURATION/EVERY or DURATION@AT");
  EXPECT_EQ(why_not("0/1s"), "DURATION must be more than 0");
  EXPECT_EQ(why_not("0ms@1s"), "DURATION must be more than 0");
  EXPECT_EQ(why_not("0.4us/1s"), "DURATION must be more than 0") << "rounds to 0us";
  EXPECT_EQ(why_not("1s/1s"), "EVERY 1s must be longer than DURATION 1s");
  EXPECT_EQ(why_not("2s/1s"), "EVERY 1s must be longer than DURATION 2s");
  EXPECT_EQ(why_not("1ms/1000us"), "EVERY 1ms must be longer than DURATION 1ms");
  EXPECT_EQ(why_not("abc/1s"), "DURATION: not a number");
  EXPECT_EQ(why_not("/1s"), "DURATION: not a number");
  EXPECT_EQ(why_not("1ms/"), "EVERY: not a number");
  EXPECT_EQ(why_not("1ms/0"), "EVERY 0 must be longer than DURATION 1ms");
  EXPECT_EQ(why_not("200/1s"), "DURATION: no unit (us, ms or s)");
  EXPECT_EQ(why_not("200ms/5"), "EVERY: no unit (us, ms or s)");
  EXPECT_EQ(why_not("200ms/5m"), "EVERY: unknown unit \"m\" (us, ms or s)");
  EXPECT_EQ(why_not("61s/120s"), "DURATION 61s is over 60s");
  EXPECT_EQ(why_not("60.000001s@1s"), "DURATION 60000001us is over 60s");
  EXPECT_EQ(why_not("1ms@"), "AT: not a number");
  EXPECT_EQ(why_not("1ms@-1s"), "AT: negative");
  EXPECT_EQ(why_not("-1ms@1s"), "DURATION: negative");
  // One separator: the rest of the text is the second duration.
  EXPECT_EQ(why_not("1ms/2s@3s"), "EVERY: unknown unit \"s@3s\" (us, ms or s)");
  EXPECT_EQ(why_not("1ms@2s/3s"), "AT: unknown unit \"s/3s\" (us, ms or s)");
  EXPECT_EQ(why_not(" 1ms/1s"), "DURATION: not a number");
}

}  // namespace
}  // namespace hello
