// Service times of one worker, in nanoseconds, for quantiles and for the
// Prometheus histogram of /metrics.
//
// Layout (HdrHistogram's, with 128 sub-buckets): values below 256 ns have a
// bucket each. Above, each power of two [2^p, 2^(p+1)) is split into 128
// equal sub-buckets of width 2^(p-7), so a bucket is never wider than 1/128
// of its lowest value. The index of v is (shift << 7) + (v >> shift), with
// shift = bit_width(v | 128) - 8: an OR, a bit_width and two shifts. The
// top is kMaxTrackableNs = 2^37 - 1 ns (137 s); a larger value is counted in
// the top bucket and in clamped(), never dropped, and its own value still
// goes to sum_ns(), max_ns() and the Prometheus +Inf bucket.
//
// Error bound: a quantile is answered with the midpoint of the bucket that
// holds the exact answer, so it is off by at most half a bucket: 1/256 of
// the value (0.39%), well inside the 1% we promise. q = 1 is the exact max.
//
// Prometheus buckets: the bounds of kPrometheusBoundsNs (10 µs ... 10 s)
// fall inside log-linear buckets, not on their edges, so a second array of
// 20 exact counters, one per bound and one above the last, is kept beside
// the first; count_at_or_below() at a bound is exact.
//
// Memory: 3,968 log-linear buckets and 20 Prometheus slots, plus sum, max
// and clamped: 31,928 bytes a histogram, as much a snapshot; no allocation.
//
// Concurrency: one thread (the worker) calls record(); any other thread may
// call snapshot() at any time. Every number is a std::atomic<uint64_t> that
// the single writer updates with a relaxed load and store (as Counter
// does), so reading races with nothing and writing costs plain moves. A
// snapshot is not one instant: it may catch a record() half done (its
// bucket counted, its sum not yet), which is a request's worth of skew.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "observe/counter.h"

namespace hello {

// The upper bounds ("le") of the Prometheus histogram, in nanoseconds; +Inf
// is the count. The exposition reads this list, so there is only one.
inline constexpr std::array<uint64_t, 19> kPrometheusBoundsNs = {
    10'000,        20'000,        50'000,        100'000,       200'000,
    500'000,       1'000'000,     2'000'000,     5'000'000,     10'000'000,
    20'000'000,    50'000'000,    100'000'000,   200'000'000,   500'000'000,
    1'000'000'000, 2'000'000'000, 5'000'000'000, 10'000'000'000};

// Where each value goes in the log-linear array, and what each bucket holds.
struct LatencyLayout {
  // 128 sub-buckets per power of two: a bucket is at most 1/128 of its
  // lowest value wide, and its midpoint within 1/256 of anything in it.
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  // 2^37 ns is 137 s, the first power of two above the 100 s we must hold.
  static constexpr unsigned kValueBits = 37;
  static constexpr uint64_t kMaxTrackableNs = (uint64_t{1} << kValueBits) - 1;
  static constexpr size_t kBucketCount =
      ((kValueBits - kSubBucketBits - 1) << kSubBucketBits) + 2 * kSubBuckets;
  // The most a reported quantile (other than q = 1) is off, relative to the
  // exact one: half a bucket.
  static constexpr double kQuantileRelativeError = 1.0 / (2 * kSubBuckets);

  // The bucket of `v`, which must be at most kMaxTrackableNs.
  static constexpr size_t bucket_of(uint64_t v) {
    // The OR of kSubBuckets makes every v below 256 as wide as 255, so
    // their shift is 0 without a max or a branch for v = 0.
    unsigned shift = static_cast<unsigned>(std::bit_width(v | kSubBuckets)) - (kSubBucketBits + 1);
    return (size_t{shift} << kSubBucketBits) + static_cast<size_t>(v >> shift);
  }
  // The smallest value of bucket `i`.
  static constexpr uint64_t lowest(size_t i) {
    unsigned shift = i < 2 * kSubBuckets ? 0 : static_cast<unsigned>(i >> kSubBucketBits) - 1;
    return static_cast<uint64_t>(i - (size_t{shift} << kSubBucketBits)) << shift;
  }
  // The largest value of bucket `i`.
  static constexpr uint64_t highest(size_t i) {
    return i + 1 < kBucketCount ? lowest(i + 1) - 1 : kMaxTrackableNs;
  }
};

static_assert(LatencyLayout::kMaxTrackableNs >= 100'000'000'000, "must hold 100 s");
static_assert(LatencyLayout::bucket_of(LatencyLayout::kMaxTrackableNs) ==
              LatencyLayout::kBucketCount - 1);

namespace latency_detail {

// The bounds with a sentinel above every value, so that slot 19 (above
// 10 s) compares false like the others and needs no branch of its own.
inline constexpr std::array<uint64_t, kPrometheusBoundsNs.size() + 1> kSlotBounds = [] {
  std::array<uint64_t, kPrometheusBoundsNs.size() + 1> b{};
  std::copy(kPrometheusBoundsNs.begin(), kPrometheusBoundsNs.end(), b.begin());
  b.back() = UINT64_MAX;
  return b;
}();

// For each log-linear bucket, the Prometheus slot of its lowest value. The
// bounds are at least twice apart and a bucket is at most 1/128 of its
// value wide, so a bucket holds at most one bound: the slot of any value in
// bucket i is kSlotOfBucket[i], plus one if it is above that slot's bound.
inline constexpr std::array<uint8_t, LatencyLayout::kBucketCount> kSlotOfBucket = [] {
  std::array<uint8_t, LatencyLayout::kBucketCount> slots{};
  for (size_t i = 0; i < slots.size(); i++) {
    uint8_t s = 0;
    while (LatencyLayout::lowest(i) > kSlotBounds[s]) s++;
    slots[i] = s;
  }
  return slots;
}();

// Checks the claim above for every bucket, at compile time.
constexpr bool each_bucket_holds_at_most_one_bound() {
  for (size_t i = 0; i < LatencyLayout::kBucketCount; i++) {
    uint8_t s = kSlotOfBucket[i];
    if (size_t{s} + 1 < kSlotBounds.size() && LatencyLayout::highest(i) > kSlotBounds[s + 1])
      return false;
  }
  return true;
}
static_assert(each_bucket_holds_at_most_one_bound());

}  // namespace latency_detail

// A plain copy of a LatencyHistogram at one moment, to read, add up across
// workers and subtract for a window.
class LatencySnapshot {
 public:
  // The number of values recorded (the Prometheus +Inf bucket).
  uint64_t count() const;
  // Their total, exact (wrapping after 584 years of service time).
  uint64_t sum_ns() const { return sum_ns_; }
  // The largest, exact (see operator-= for a window's).
  uint64_t max_ns() const { return max_ns_; }
  // How many were above kMaxTrackableNs and counted in the top bucket.
  uint64_t clamped() const { return clamped_; }

  // The value at quantile `q` in [0, 1]: the smallest recorded v such that
  // at least ceil(q * count) values are <= v, answered with the midpoint of
  // its bucket (capped at max_ns()), within kQuantileRelativeError of it.
  // q = 1 is max_ns(); 0 when nothing was recorded.
  uint64_t quantile_ns(double q) const;

  // How many values were <= `ns`. Exact when `ns` is in kPrometheusBoundsNs,
  // when it is at least max_ns(), and when it is the highest value of a
  // log-linear bucket (anything below 256 ns); otherwise it counts only the
  // buckets wholly at or below `ns`, so it may miss those in ns's bucket.
  uint64_t count_at_or_below(uint64_t ns) const;

  // Adds `o`, another worker's snapshot: totals across workers.
  LatencySnapshot& operator+=(const LatencySnapshot& o);
  // Takes away `earlier`, an older snapshot of the same histogram, leaving
  // what was recorded between the two. The window's max is exact if it
  // beat `earlier`'s max; otherwise it is the highest value of the top
  // non-empty bucket (within 1/128), capped at the later max.
  LatencySnapshot& operator-=(const LatencySnapshot& earlier);

  bool operator==(const LatencySnapshot&) const = default;

 private:
  friend class LatencyHistogram;

  std::array<uint64_t, kPrometheusBoundsNs.size() + 1> slots_{};
  uint64_t sum_ns_ = 0;
  uint64_t max_ns_ = 0;
  uint64_t clamped_ = 0;
  std::array<uint64_t, LatencyLayout::kBucketCount> buckets_{};
};

class LatencyHistogram {
 public:
  // Counts `count` service times of `ns` each (the answers of one read
  // share one), as `count` calls with one would. Only the owning thread
  // may call it.
  void record(uint64_t ns, uint64_t count = 1) {
    uint64_t v = ns;
    if (v > LatencyLayout::kMaxTrackableNs) [[unlikely]] {
      v = LatencyLayout::kMaxTrackableNs;
      clamped_.add(count);
    }
    size_t i = LatencyLayout::bucket_of(v);
    buckets_[i].add(count);
    size_t slot = latency_detail::kSlotOfBucket[i];
    slot += ns > latency_detail::kSlotBounds[slot];
    slots_[slot].add(count);
    sum_ns_.add(ns * count);
    if (ns > max_ns_.load(std::memory_order_relaxed)) max_ns_.store(ns, std::memory_order_relaxed);
  }

  // A copy of every number, for any thread.
  LatencySnapshot snapshot() const;

 private:
  std::array<Counter, kPrometheusBoundsNs.size() + 1> slots_;
  Counter sum_ns_;
  std::atomic<uint64_t> max_ns_{0};
  Counter clamped_;
  std::array<Counter, LatencyLayout::kBucketCount> buckets_;
};

}  // namespace hello
