#include "observe/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace hello {
namespace {

using L = LatencyLayout;

constexpr double kQuantiles[] = {0.5, 0.9, 0.99, 0.999, 1.0};

// The exact quantile, as quantile_ns() defines it: the smallest recorded v
// such that at least ceil(q * n) values are <= v, i.e. the ceil(q * n)-th
// smallest (the smallest of all for q = 0).
uint64_t exact_quantile(const std::vector<uint64_t>& sorted, double q) {
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// Records `values` and checks every quantile of kQuantiles against the
// exact one, within 1% and within the bound the header documents, and
// prints the worst relative error it saw.
void expect_quantiles(std::vector<uint64_t> values) {
  LatencyHistogram h;
  for (uint64_t v : values) h.record(v);
  LatencySnapshot s = h.snapshot();
  std::sort(values.begin(), values.end());
  double worst_error = 0;
  ASSERT_EQ(s.count(), values.size());
  EXPECT_EQ(s.max_ns(), values.back());
  for (double q : kQuantiles) {
    uint64_t exact = exact_quantile(values, q);
    uint64_t got = s.quantile_ns(q);
    double error = exact == 0 ? (got == 0 ? 0.0 : 1.0)
                              : std::fabs(static_cast<double>(got) - static_cast<double>(exact)) /
                                    static_cast<double>(exact);
    worst_error = std::max(worst_error, error);
    EXPECT_LE(error, 0.01) << "q=" << q << " exact=" << exact << " got=" << got;
    EXPECT_LE(error, L::kQuantileRelativeError)
        << "q=" << q << " exact=" << exact << " got=" << got;
    if (q == 1.0) {
      EXPECT_EQ(got, exact) << "the max is exact";
    }
  }
  std::printf("worst relative quantile error: %.4f%% (bound %.4f%%)\n", worst_error * 100,
              L::kQuantileRelativeError * 100);
}

// Log-uniform between `low` and `high` nanoseconds, from a fixed seed.
std::vector<uint64_t> log_uniform(size_t n, double low, double high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> e(std::log(low), std::log(high));
  std::vector<uint64_t> values(n);
  for (uint64_t& v : values) v = static_cast<uint64_t>(std::exp(e(rng)));
  return values;
}

TEST(LatencyLayout, BucketsTileTheRangeWithoutGapsAndWithinTheirWidth) {
  EXPECT_EQ(L::kBucketCount, 3968u);
  for (size_t i = 0; i < L::kBucketCount; i++) {
    uint64_t low = L::lowest(i), high = L::highest(i);
    ASSERT_LE(low, high) << i;
    ASSERT_EQ(L::bucket_of(low), i) << low;
    ASSERT_EQ(L::bucket_of(high), i) << high;
    if (i > 0) {
      ASSERT_EQ(L::highest(i - 1) + 1, low) << i;
    }
    // At most 1/128 of the lowest value wide (one value each below 256).
    ASSERT_LE((high - low + 1) * L::kSubBuckets, std::max<uint64_t>(low, L::kSubBuckets)) << i;
  }
  EXPECT_EQ(L::lowest(0), 0u);
  EXPECT_EQ(L::highest(L::kBucketCount - 1), L::kMaxTrackableNs);
  EXPECT_GE(L::kMaxTrackableNs, 100'000'000'000u);
  // The size the header documents.
  EXPECT_EQ(sizeof(LatencyHistogram), 31'928u);
  EXPECT_EQ(sizeof(LatencySnapshot), 31'928u);
}

TEST(LatencyHistogram, EmptyAnswersZero) {
  LatencySnapshot s = LatencyHistogram().snapshot();
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.sum_ns(), 0u);
  EXPECT_EQ(s.max_ns(), 0u);
  EXPECT_EQ(s.quantile_ns(0.5), 0u);
  EXPECT_EQ(s.quantile_ns(1.0), 0u);
  EXPECT_EQ(s.count_at_or_below(1'000'000), 0u);
}

TEST(LatencyHistogram, QuantilesOfUniformOneToAMillion) {
  std::vector<uint64_t> values(1'000'000);
  for (size_t i = 0; i < values.size(); i++) values[i] = i + 1;
  expect_quantiles(values);
}

TEST(LatencyHistogram, QuantilesOfLogUniformOneMicrosecondToTenSeconds) {
  expect_quantiles(log_uniform(200'000, 1e3, 1e10, 1));
}

TEST(LatencyHistogram, QuantilesOfABimodalMix) {
  // 90% around 150 µs, 10% around 2 ms, shuffled together.
  std::mt19937_64 rng(2);
  std::normal_distribution<double> fast(150'000, 10'000), slow(2'000'000, 100'000);
  std::bernoulli_distribution is_slow(0.1);
  std::vector<uint64_t> values(200'000);
  for (uint64_t& v : values)
    v = static_cast<uint64_t>(std::max(1.0, is_slow(rng) ? slow(rng) : fast(rng)));
  expect_quantiles(values);
}

TEST(LatencyHistogram, QuantilesOfASingleValue) {
  expect_quantiles({123'456'789});
  expect_quantiles(std::vector<uint64_t>(1000, 777'777));
}

TEST(LatencyHistogram, QuantilesOfAllZeros) {
  expect_quantiles(std::vector<uint64_t>(1000, 0));
}

TEST(LatencyHistogram, QuantilesBelow256AreExact) {
  LatencyHistogram h;
  for (uint64_t v = 0; v < 256; v++) h.record(v);
  LatencySnapshot s = h.snapshot();
  EXPECT_EQ(s.quantile_ns(0.5), 127u);
  EXPECT_EQ(s.quantile_ns(0.0), 0u);
  EXPECT_EQ(s.quantile_ns(255.0 / 256), 254u);
}

// One call for the answers of a read counts as one call per answer.
TEST(LatencyHistogram, ACountOfOneValueIsThatManyRecords) {
  LatencyHistogram one_by_one;
  LatencyHistogram at_once;
  for (uint64_t v :
       {uint64_t{0}, uint64_t{999}, uint64_t{1'000}, uint64_t{123'456'789}, uint64_t{1} << 60}) {
    for (int i = 0; i < 15; ++i) one_by_one.record(v);
    at_once.record(v, 15);
  }
  LatencySnapshot a = one_by_one.snapshot();
  LatencySnapshot b = at_once.snapshot();
  EXPECT_EQ(b.count(), 75u);
  EXPECT_EQ(b.count(), a.count());
  EXPECT_EQ(b.sum_ns(), a.sum_ns());
  EXPECT_EQ(b.max_ns(), a.max_ns());
  EXPECT_EQ(b.clamped(), a.clamped());
  EXPECT_EQ(b.clamped(), 15u);
  for (double q : {0.1, 0.3, 0.5, 0.7, 0.9, 0.99})
    EXPECT_EQ(b.quantile_ns(q), a.quantile_ns(q)) << q;
  for (uint64_t bound : kPrometheusBoundsNs)
    EXPECT_EQ(b.count_at_or_below(bound), a.count_at_or_below(bound));
}

TEST(LatencyHistogram, SumCountAndMaxAreExact) {
  LatencyHistogram h;
  uint64_t sum = 0;
  for (uint64_t v : log_uniform(10'000, 1, 1e11, 3)) {
    h.record(v);
    sum += v;
  }
  h.record(99'999'999'999);
  sum += 99'999'999'999;
  LatencySnapshot s = h.snapshot();
  EXPECT_EQ(s.count(), 10'001u);
  EXPECT_EQ(s.sum_ns(), sum);
  EXPECT_EQ(s.max_ns(), 99'999'999'999u);
  EXPECT_EQ(s.clamped(), 0u) << "100 s is below the top";
}

TEST(LatencyHistogram, CountAtOrBelowIsExactAtEveryPrometheusBound) {
  // Values on each bound, one below and one above, and a spread between.
  std::vector<uint64_t> values = log_uniform(50'000, 1, 2e10, 4);
  for (uint64_t b : kPrometheusBoundsNs) {
    for (int k = 0; k < 3; k++) {
      values.push_back(b - 1);
      values.push_back(b);
      values.push_back(b + 1);
    }
  }
  values.push_back(0);
  LatencyHistogram h;
  for (uint64_t v : values) h.record(v);
  LatencySnapshot s = h.snapshot();
  for (uint64_t b : kPrometheusBoundsNs) {
    for (uint64_t le : {b, b - 1, b + 1}) {
      uint64_t exact = static_cast<uint64_t>(
          std::count_if(values.begin(), values.end(), [le](uint64_t v) { return v <= le; }));
      uint64_t got = s.count_at_or_below(le);
      if (le == b) {
        EXPECT_EQ(got, exact) << "le=" << le;
      } else {
        // Between bounds only buckets wholly below count: never more than
        // the truth, and short by at most the values in le's bucket.
        EXPECT_LE(got, exact) << "le=" << le;
        uint64_t near =
            static_cast<uint64_t>(std::count_if(values.begin(), values.end(), [le](uint64_t v) {
              return L::bucket_of(std::min(v, L::kMaxTrackableNs)) ==
                     L::bucket_of(std::min(le, L::kMaxTrackableNs));
            }));
        EXPECT_GE(got + near, exact) << "le=" << le;
      }
    }
  }
  EXPECT_EQ(s.count_at_or_below(UINT64_MAX), values.size());
  EXPECT_EQ(s.count_at_or_below(s.max_ns()), values.size());
}

TEST(LatencyHistogram, AValueOneAboveABoundIsInTheNextPrometheusBucket) {
  for (size_t i = 0; i < kPrometheusBoundsNs.size(); i++) {
    uint64_t b = kPrometheusBoundsNs[i];
    LatencyHistogram h;
    h.record(b);
    h.record(b + 1);
    LatencySnapshot s = h.snapshot();
    EXPECT_EQ(s.count_at_or_below(b), 1u) << b;
    if (i > 0) {
      EXPECT_EQ(s.count_at_or_below(kPrometheusBoundsNs[i - 1]), 0u) << b;
    }
    if (i + 1 < kPrometheusBoundsNs.size()) {
      EXPECT_EQ(s.count_at_or_below(kPrometheusBoundsNs[i + 1]), 2u) << b;
    }
  }
}

TEST(LatencyHistogram, HugeValuesAreClampedIntoTheTopBucketAndCounted) {
  LatencyHistogram h;
  h.record(1'000);
  h.record(1'000'000'000'000);  // 1,000 s
  h.record(UINT64_MAX / 4);
  h.record(L::kMaxTrackableNs + 1);
  LatencySnapshot s = h.snapshot();
  EXPECT_EQ(s.count(), 4u);
  EXPECT_EQ(s.clamped(), 3u);
  EXPECT_EQ(s.max_ns(), UINT64_MAX / 4) << "the max keeps the value itself";
  EXPECT_EQ(s.quantile_ns(1.0), UINT64_MAX / 4);
  EXPECT_EQ(s.sum_ns(), 1'000 + 1'000'000'000'000 + UINT64_MAX / 4 + L::kMaxTrackableNs + 1);
  EXPECT_GE(s.quantile_ns(0.5), L::lowest(L::kBucketCount - 1)) << "in the top bucket";
  EXPECT_EQ(s.quantile_ns(0.25), s.quantile_ns(0.0));
  EXPECT_EQ(s.count_at_or_below(kPrometheusBoundsNs.back()), 1u) << "above 10 s: only +Inf";
  EXPECT_EQ(s.count_at_or_below(UINT64_MAX), 4u);
}

TEST(LatencyHistogram, MergedSnapshotsEqualOneHistogramFedBoth) {
  std::vector<uint64_t> a = log_uniform(20'000, 1e3, 1e9, 5);
  std::vector<uint64_t> b = log_uniform(30'000, 1e4, 2e11, 6);
  LatencyHistogram ha, hb, both;
  for (uint64_t v : a) ha.record(v), both.record(v);
  for (uint64_t v : b) hb.record(v), both.record(v);
  LatencySnapshot merged = ha.snapshot();
  merged += hb.snapshot();
  LatencySnapshot whole = both.snapshot();
  EXPECT_TRUE(merged == whole);
  EXPECT_EQ(merged.count(), 50'000u);
  EXPECT_EQ(merged.max_ns(),
            std::max(*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end())));
  for (double q : kQuantiles) EXPECT_EQ(merged.quantile_ns(q), whole.quantile_ns(q)) << q;
  for (uint64_t le : kPrometheusBoundsNs) {
    EXPECT_EQ(merged.count_at_or_below(le), whole.count_at_or_below(le)) << le;
  }
}

TEST(LatencyHistogram, WindowIsWhatWasRecordedSinceTheEarlierSnapshot) {
  std::vector<uint64_t> before = log_uniform(20'000, 1e3, 1e8, 7);
  std::vector<uint64_t> during = log_uniform(20'000, 1e4, 1e9, 8);  // a new max
  LatencyHistogram h, only_during;
  for (uint64_t v : before) h.record(v);
  LatencySnapshot earlier = h.snapshot();
  for (uint64_t v : during) h.record(v), only_during.record(v);
  LatencySnapshot window = h.snapshot();
  window -= earlier;
  EXPECT_TRUE(window == only_during.snapshot()) << "a new max inside the window is exact";
  EXPECT_EQ(window.count(), 20'000u);

  LatencySnapshot nothing = h.snapshot();
  nothing -= h.snapshot();
  EXPECT_TRUE(nothing == LatencySnapshot());
}

TEST(LatencyHistogram, WindowMaxBelowTheEarlierMaxIsItsBucketsTop) {
  LatencyHistogram h, only_during;
  h.record(5'000'000'000);
  LatencySnapshot earlier = h.snapshot();
  std::vector<uint64_t> during = log_uniform(10'000, 1e3, 1e6, 9);
  for (uint64_t v : during) h.record(v), only_during.record(v);
  LatencySnapshot window = h.snapshot();
  window -= earlier;
  LatencySnapshot expected = only_during.snapshot();
  uint64_t true_max = expected.max_ns();
  EXPECT_EQ(window.max_ns(), L::highest(L::bucket_of(true_max)));
  EXPECT_LE(static_cast<double>(window.max_ns() - true_max), true_max / 128.0);
  EXPECT_EQ(window.count(), expected.count());
  EXPECT_EQ(window.sum_ns(), expected.sum_ns());
  // q = 0.999 is left out: it may fall in the top bucket, where the two
  // maxima cap the midpoint differently.
  for (double q : {0.5, 0.9, 0.99}) EXPECT_EQ(window.quantile_ns(q), expected.quantile_ns(q)) << q;
  for (uint64_t le : kPrometheusBoundsNs) {
    EXPECT_EQ(window.count_at_or_below(le), expected.count_at_or_below(le)) << le;
  }
}

// One writer, one reader snapshotting meanwhile: every number a reader sees
// only grows, and the last snapshot has everything.
TEST(LatencyHistogram, ReaderSnapshotsWhileTheWriterRecords) {
  constexpr uint64_t kValues = 200'000;
  LatencyHistogram h;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t i = 0; i < kValues; i++) h.record(1'000 + i % 5'000'000);
    done.store(true, std::memory_order_release);
  });
  uint64_t last_count = 0, last_sum = 0;
  int reads = 0;
  while (!done.load(std::memory_order_acquire) || reads == 0) {
    LatencySnapshot s = h.snapshot();
    ASSERT_GE(s.count(), last_count);
    ASSERT_GE(s.sum_ns(), last_sum);
    ASSERT_LE(s.count(), kValues);
    last_count = s.count();
    last_sum = s.sum_ns();
    reads++;
  }
  writer.join();
  EXPECT_EQ(h.snapshot().count(), kValues);
}

}  // namespace
}  // namespace hello
