#include "observe/latency_histogram.h"

#include <cmath>

#include "base/check.h"

namespace hello {

uint64_t LatencySnapshot::count() const {
  uint64_t n = 0;
  for (uint64_t s : slots_) n += s;
  return n;
}

uint64_t LatencySnapshot::quantile_ns(double q) const {
  HELLO_CHECK(q >= 0.0 && q <= 1.0);
  if (q == 1.0) return max_ns_;
  // The buckets' own total, not count(): a snapshot taken during a record()
  // may hold the bucket's increment without the slot's, or the reverse.
  uint64_t total = 0;
  for (uint64_t b : buckets_) total += b;
  if (total == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  rank = std::clamp<uint64_t>(rank, 1, total);
  uint64_t seen = 0;
  size_t i = 0;
  for (; i + 1 < buckets_.size(); i++) {
    seen += buckets_[i];
    if (seen >= rank) break;
  }
  uint64_t low = LatencyLayout::lowest(i);
  uint64_t mid = low + (LatencyLayout::highest(i) - low) / 2;
  // Above the max only if the max is in this bucket: a max that is below
  // it is a snapshot that caught the bucket before the max, not a bound.
  return max_ns_ >= low ? std::min(mid, max_ns_) : mid;
}

uint64_t LatencySnapshot::count_at_or_below(uint64_t ns) const {
  uint64_t n = 0;
  for (size_t s = 0; s < kPrometheusBoundsNs.size(); s++) {
    n += slots_[s];
    if (kPrometheusBoundsNs[s] == ns) return n;
  }
  if (ns >= max_ns_) return count();
  size_t top = LatencyLayout::bucket_of(std::min(ns, LatencyLayout::kMaxTrackableNs));
  n = 0;
  for (size_t i = 0; i < top; i++) n += buckets_[i];
  if (LatencyLayout::highest(top) == ns) n += buckets_[top];
  return n;
}

LatencySnapshot& LatencySnapshot::operator+=(const LatencySnapshot& o) {
  for (size_t s = 0; s < slots_.size(); s++) slots_[s] += o.slots_[s];
  for (size_t i = 0; i < buckets_.size(); i++) buckets_[i] += o.buckets_[i];
  sum_ns_ += o.sum_ns_;
  max_ns_ = std::max(max_ns_, o.max_ns_);
  clamped_ += o.clamped_;
  return *this;
}

LatencySnapshot& LatencySnapshot::operator-=(const LatencySnapshot& earlier) {
  // Each number only grows, so a later snapshot of the same histogram is at
  // least the earlier one everywhere; anything else is a caller's mix-up.
  HELLO_CHECK(max_ns_ >= earlier.max_ns_ && clamped_ >= earlier.clamped_);
  for (size_t s = 0; s < slots_.size(); s++) {
    HELLO_CHECK(slots_[s] >= earlier.slots_[s]);
    slots_[s] -= earlier.slots_[s];
  }
  size_t top = 0;
  bool any = false;
  for (size_t i = 0; i < buckets_.size(); i++) {
    HELLO_CHECK(buckets_[i] >= earlier.buckets_[i]);
    buckets_[i] -= earlier.buckets_[i];
    if (buckets_[i] != 0) {
      top = i;
      any = true;
    }
  }
  sum_ns_ -= earlier.sum_ns_;
  clamped_ -= earlier.clamped_;
  // A max above the earlier one was recorded inside the window, so it is
  // the window's. An unchanged max may be older than the window: the top
  // non-empty bucket bounds the window's from above instead, unless it is
  // the top bucket, whose clamped values may lie above its highest.
  if (!any) {
    max_ns_ = 0;
  } else if (max_ns_ == earlier.max_ns_ && top + 1 < buckets_.size()) {
    max_ns_ = std::min(max_ns_, LatencyLayout::highest(top));
  }
  return *this;
}

LatencySnapshot LatencyHistogram::snapshot() const {
  LatencySnapshot s;
  for (size_t i = 0; i < slots_.size(); i++) s.slots_[i] = slots_[i].get();
  for (size_t i = 0; i < buckets_.size(); i++) s.buckets_[i] = buckets_[i].get();
  s.sum_ns_ = sum_ns_.get();
  s.max_ns_ = max_ns_.load(std::memory_order_relaxed);
  s.clamped_ = clamped_.get();
  return s;
}

}  // namespace hello
