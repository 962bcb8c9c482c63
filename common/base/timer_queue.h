// Many deadlines at microsecond resolution on one libuv handle per worker.
//
// Timers live in a binary min-heap ordered by due time (uv_hrtime()'s
// CLOCK_MONOTONIC nanoseconds). One timerfd, watched by one uv_poll_t, is
// armed to an absolute time no later than the heap's earliest entry: the
// kernel wakes the loop at that nanosecond, and due timers fire in order.
// A timer is a small struct embedded in its owner (no allocation, no
// handle per connection); starting, moving and stopping one is O(log n)
// and costs no system call unless it becomes the earliest of all.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hello {

struct Timer {
  using Callback = void (*)(Timer*);
  static constexpr uint32_t kIdle = UINT32_MAX;

  Callback on_fire = nullptr;
  void* data = nullptr;   // the owner, for the callback
  uint64_t due_ns = 0;    // uv_hrtime() at which it fires
  uint32_t slot = kIdle;  // its place in the heap, or kIdle

  bool active() const { return slot != kIdle; }
};

// The ordering alone, without libuv: what the unit tests drive.
class TimerHeap {
 public:
  // Schedules `t` at `due_ns`, or moves it there if it is already active.
  void start(Timer* t, uint64_t due_ns);
  // Unschedules `t`; nothing if it is idle.
  void stop(Timer* t);
  // The earliest timer, or null.
  Timer* top() const { return heap_.empty() ? nullptr : heap_[0]; }
  size_t size() const { return heap_.size(); }
  // Removes and returns the earliest timer if it is due at `now_ns`.
  Timer* pop_due(uint64_t now_ns);

 private:
  void place(uint32_t i, Timer* t);
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);

  std::vector<Timer*> heap_;  // grows to the peak in use, never shrinks
};

class TimerQueue {
 public:
  // A timer due within this long of one that fires is waited for at once
  // rather than slept for (see on_ready()).
  static constexpr uint64_t kSpinNs = 25000;

  // Creates the timerfd and its poll handle on `loop`. Returns 0 or a libuv error.
  int init(uv_loop_t* loop);
  // Closes the handle (asynchronously, with the loop); every timer must be idle.
  void close();

  // Fires `t` at uv_hrtime() + `delay_ns` (at once, on the next loop turn,
  // if that is now or past).
  void start(Timer* t, uint64_t delay_ns) { start_at(t, uv_hrtime() + delay_ns); }
  void start_at(Timer* t, uint64_t due_ns);
  void stop(Timer* t) { heap_.stop(t); }
  size_t size() const { return heap_.size(); }

 private:
  friend struct TimerQueueCallbacks;

  void on_ready();
  // Arms the timerfd for the earliest timer if it is not armed early enough.
  void arm();

  TimerHeap heap_;
  uv_poll_t poll_;
  int fd_ = -1;
  uint64_t armed_ns_ = 0;  // when the timerfd goes off; 0: not armed
};

}  // namespace hello
