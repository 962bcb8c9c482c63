// Counters written by one worker thread and read by the main thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "observe/stats_fields.h"

namespace hello {

// Only its owning thread writes a Counter, so an increment is a relaxed
// load and store (plain moves on x86), not a locked read-modify-write;
// other threads read a value that is at most a moment old.
class Counter {
 public:
  void add(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void sub(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// What one worker counts: a Counter per line of HELLO_STATS_FIELDS.
struct WorkerStats {
#define HELLO_STATS_COUNTER(member, ...) Counter member;
  HELLO_STATS_FIELDS(HELLO_STATS_COUNTER)
#undef HELLO_STATS_COUNTER
};

}  // namespace hello
