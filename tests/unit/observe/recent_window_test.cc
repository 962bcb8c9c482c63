#include "observe/recent_window.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(RecentWindow, NothingBeforeTheSecondTick) {
  LatencyHistogram h;
  h.record(5000);
  RecentWindow w;
  EXPECT_EQ(w.seconds(), 0);
  w.tick(h.snapshot(), 7 * kSecond);
  EXPECT_EQ(w.seconds(), 0);
  EXPECT_EQ(w.figures().count, 0u) << "what came before the first tick is no second's";
}

// Each second's figures are its own values: a slow second after a fast one
// shows the slow values only, and an empty second shows nothing.
TEST(RecentWindow, EachSecondHasItsOwnValues) {
  LatencyHistogram h;
  RecentWindow w;
  for (int i = 0; i < 1000; ++i) h.record(10'000);  // before the first tick: not counted
  w.tick(h.snapshot(), 1 * kSecond);
  for (int i = 0; i < 100; ++i) h.record(20'000);
  w.tick(h.snapshot(), 2 * kSecond);
  EXPECT_EQ(w.figures().count, 100u);
  EXPECT_NEAR(w.figures().p50_us, 20.0, 20.0 / 256);
  EXPECT_DOUBLE_EQ(w.seconds(), 1.0);

  for (int i = 0; i < 990; ++i) h.record(1'000'000);
  for (int i = 0; i < 10; ++i) h.record(50'000'000);
  w.tick(h.snapshot(), 3 * kSecond + kSecond / 2);
  EXPECT_EQ(w.figures().count, 1000u);
  EXPECT_NEAR(w.figures().p50_us, 1000.0, 1000.0 / 256);
  EXPECT_NEAR(w.figures().p99_us, 1000.0, 1000.0 / 256);
  EXPECT_NEAR(w.figures().p999_us, 50000.0, 50000.0 / 256);
  EXPECT_DOUBLE_EQ(w.seconds(), 1.5);

  w.tick(h.snapshot(), 4 * kSecond + kSecond / 2);
  EXPECT_EQ(w.figures().count, 0u);
  EXPECT_EQ(w.figures().p99_us, 0);
}

}  // namespace
}  // namespace hello
