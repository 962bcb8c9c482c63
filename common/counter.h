// Counters written by one worker thread and read by the main thread.
#pragma once

#include <atomic>
#include <cstdint>

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

// What one worker counts; the exit summary and --stats-json print these.
struct WorkerStats {
  Counter connections;           // accepted
  Counter connections_rejected;  // closed at once: over --max-connections
  Counter accept_errors;         // failed accepts, such as EMFILE
  Counter open;                  // open now
  Counter requests;
  Counter bytes_in;
  Counter bytes_out;
  Counter responses_2xx;
  Counter responses_4xx;
  Counter responses_5xx;
  Counter parse_errors;
  Counter log_lines_dropped;
};

}  // namespace hello
