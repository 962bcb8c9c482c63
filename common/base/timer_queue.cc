#include "base/timer_queue.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "base/check.h"

namespace hello {

void TimerHeap::place(uint32_t i, Timer* t) {
  heap_[i] = t;
  t->slot = i;
}

void TimerHeap::sift_up(uint32_t i) {
  Timer* t = heap_[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (heap_[parent]->due_ns <= t->due_ns) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, t);
}

void TimerHeap::sift_down(uint32_t i) {
  Timer* t = heap_[i];
  uint32_t n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1]->due_ns < heap_[child]->due_ns) ++child;
    if (t->due_ns <= heap_[child]->due_ns) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, t);
}

void TimerHeap::start(Timer* t, uint64_t due_ns) {
  if (t->active()) {
    uint64_t was = t->due_ns;
    t->due_ns = due_ns;
    if (due_ns < was)
      sift_up(t->slot);
    else
      sift_down(t->slot);
    return;
  }
  t->due_ns = due_ns;
  heap_.push_back(t);
  sift_up(static_cast<uint32_t>(heap_.size() - 1));
}

void TimerHeap::stop(Timer* t) {
  if (!t->active()) return;
  uint32_t i = t->slot;
  HELLO_CHECK(i < heap_.size() && heap_[i] == t);
  t->slot = Timer::kIdle;
  Timer* last = heap_.back();
  heap_.pop_back();
  if (last == t) return;
  // The last entry fills the hole and moves whichever way it must.
  place(i, last);
  if (i > 0 && heap_[(i - 1) / 2]->due_ns > last->due_ns)
    sift_up(i);
  else
    sift_down(i);
}

Timer* TimerHeap::pop_due(uint64_t now_ns) {
  if (heap_.empty() || heap_[0]->due_ns > now_ns) return nullptr;
  Timer* t = heap_[0];
  stop(t);
  return t;
}

struct TimerQueueCallbacks {
  static void ready(uv_poll_t* p, int, int) { static_cast<TimerQueue*>(p->data)->on_ready(); }
  static void closed(uv_handle_t* h) {
    TimerQueue* q = static_cast<TimerQueue*>(h->data);
    ::close(q->fd_);
    q->fd_ = -1;
  }
};

int TimerQueue::init(uv_loop_t* loop) {
  // CLOCK_MONOTONIC is the clock of uv_hrtime().
  fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd_ < 0) return uv_translate_sys_error(errno);
  int rc = uv_poll_init(loop, &poll_, fd_);
  if (rc != 0) {
    ::close(fd_);
    fd_ = -1;
    return rc;
  }
  poll_.data = this;
  rc = uv_poll_start(&poll_, UV_READABLE, TimerQueueCallbacks::ready);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), TimerQueueCallbacks::closed);
    return rc;
  }
  // Timers alone do not keep the loop running; their owners do.
  uv_unref(reinterpret_cast<uv_handle_t*>(&poll_));
  return 0;
}

void TimerQueue::close() {
  HELLO_CHECK(heap_.size() == 0);  // every owner stopped its timer before closing
  if (fd_ >= 0 && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&poll_)))
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), TimerQueueCallbacks::closed);
}

void TimerQueue::start_at(Timer* t, uint64_t due_ns) {
  heap_.start(t, due_ns);
  arm();
}

void TimerQueue::arm() {
  Timer* first = heap_.top();
  // Armed early enough already: the wake-up re-arms for what is left, so a
  // timer that moves later or stops costs no system call.
  if (first == nullptr || (armed_ns_ != 0 && armed_ns_ <= first->due_ns)) return;
  struct itimerspec when {};
  uint64_t due = first->due_ns > 0 ? first->due_ns : 1;  // zero would disarm
  when.it_value.tv_sec = static_cast<time_t>(due / 1000000000);
  when.it_value.tv_nsec = static_cast<long>(due % 1000000000);
  HELLO_CHECK(timerfd_settime(fd_, TFD_TIMER_ABSTIME, &when, nullptr) == 0);
  armed_ns_ = due;
}

void TimerQueue::on_ready() {
  uint64_t expirations;
  // Clears the readiness; EAGAIN if a re-arm already did.
  ssize_t n = read(fd_, &expirations, sizeof expirations);
  (void)n;
  armed_ns_ = 0;
  uint64_t now = uv_hrtime();
  // Bounded by the timers there now: one started by a callback for "now"
  // waits for the next turn of the loop instead of starving it.
  for (size_t budget = heap_.size(); budget > 0; --budget) {
    Timer* t = heap_.top();
    if (t == nullptr) break;
    if (t->due_ns > now) {
      // Due in a few microseconds: waiting for it here costs less than
      // re-arming, sleeping and waking (three system calls), and it fires
      // on time instead of a wake-up's latency late. Never before it is due.
      if (t->due_ns - now > kSpinNs) break;
      while ((now = uv_hrtime()) < t->due_ns) __builtin_ia32_pause();
    }
    heap_.stop(t);
    t->on_fire(t);
    now = uv_hrtime();
  }
  arm();
}

}  // namespace hello
