#include "base/timer_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace hello {
namespace {

// Pops everything due at `now` and returns the order, by index in `timers`.
std::vector<int> pop_all(TimerHeap& heap, std::vector<Timer>& timers, uint64_t now) {
  std::vector<int> order;
  while (Timer* t = heap.pop_due(now)) {
    EXPECT_FALSE(t->active());
    order.push_back(static_cast<int>(t - timers.data()));
  }
  return order;
}

TEST(TimerHeap, PopsInDueOrderOnlyWhatIsDue) {
  std::vector<Timer> timers(5);
  TimerHeap heap;
  uint64_t due[] = {50, 10, 40, 20, 30};
  for (int i = 0; i < 5; ++i) heap.start(&timers[i], due[i]);
  EXPECT_EQ(heap.size(), 5u);
  EXPECT_EQ(heap.top(), &timers[1]);
  EXPECT_EQ(pop_all(heap, timers, 9), std::vector<int>{});
  EXPECT_EQ(pop_all(heap, timers, 30), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(pop_all(heap, timers, 100), (std::vector<int>{2, 0}));
  EXPECT_EQ(heap.size(), 0u);
}

TEST(TimerHeap, StopsAndMovesAnyEntry) {
  std::vector<Timer> timers(6);
  TimerHeap heap;
  for (int i = 0; i < 6; ++i) heap.start(&timers[i], 10 * (i + 1));
  heap.stop(&timers[0]);  // the top
  heap.stop(&timers[3]);  // one in the middle
  heap.stop(&timers[3]);  // twice: nothing
  EXPECT_FALSE(timers[3].active());
  heap.start(&timers[5], 5);    // moved earlier
  heap.start(&timers[1], 100);  // moved later
  EXPECT_EQ(pop_all(heap, timers, 1000), (std::vector<int>{5, 2, 4, 1}));
}

// Random starts, moves and stops against a sorted reference: a model of
// what each timer should be due at (or idle), kept apart from the heap's
// own fields. The heap pops exactly the model's timers, in due order.
TEST(TimerHeap, AgreesWithASortedListOverRandomOperations) {
  std::vector<Timer> timers(64);
  std::vector<int64_t> model(timers.size(), -1);  // due time, or -1: idle
  TimerHeap heap;
  uint32_t seed = 7;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
  };
  for (int round = 0; round < 20000; ++round) {
    size_t i = next() % timers.size();
    if (next() % 4 == 0) {
      heap.stop(&timers[i]);
      model[i] = -1;
    } else {
      uint64_t due = next() % 1000;
      heap.start(&timers[i], due);
      model[i] = static_cast<int64_t>(due);
    }
  }
  std::vector<std::pair<uint64_t, int>> expected;
  for (size_t i = 0; i < model.size(); ++i) {
    EXPECT_EQ(timers[i].active(), model[i] >= 0) << i;
    if (model[i] >= 0) expected.push_back({static_cast<uint64_t>(model[i]), static_cast<int>(i)});
  }
  std::sort(expected.begin(), expected.end());
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(heap.size(), expected.size());
  std::vector<std::pair<uint64_t, int>> popped;
  while (Timer* t = heap.pop_due(UINT64_MAX))
    popped.push_back({t->due_ns, static_cast<int>(t - timers.data())});
  // Timers due at the same time may come in any order among themselves:
  // the dues in order, then each (due, timer) pair the model has.
  ASSERT_EQ(popped.size(), expected.size());
  for (size_t k = 0; k < popped.size(); ++k)
    EXPECT_EQ(popped[k].first, expected[k].first) << "pop " << k;
  std::sort(popped.begin(), popped.end());
  EXPECT_EQ(popped, expected);
}

// The queue over a real loop: timers fire in order, not before their time.
TEST(TimerQueue, FiresEachTimerAtItsTimeOnALoop) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  TimerQueue queue;
  ASSERT_EQ(queue.init(&loop), 0);
  struct Fired {
    uint64_t started;
    uint64_t at = 0;
    int order = -1;
  };
  static int fired_count;
  fired_count = 0;
  std::vector<Fired> fired(3);
  std::vector<Timer> timers(3);
  uint64_t delays_ns[] = {3000000, 1000000, 2000000};  // 3, 1 and 2 ms
  for (int i = 0; i < 3; ++i) {
    timers[i].data = &fired[i];
    timers[i].on_fire = [](Timer* t) {
      Fired* f = static_cast<Fired*>(t->data);
      f->at = uv_hrtime();
      f->order = fired_count++;
    };
    fired[i].started = uv_hrtime();
    queue.start(&timers[i], delays_ns[i]);
  }
  // The queue's handle does not keep a loop alive (its owners do): a long
  // libuv timer does here, so each turn blocks until the timerfd wakes it.
  uv_timer_t keepalive;
  ASSERT_EQ(uv_timer_init(&loop, &keepalive), 0);
  ASSERT_EQ(uv_timer_start(
                &keepalive, [](uv_timer_t*) {}, 10000, 0),
            0);
  for (int turn = 0; turn < 1000 && fired_count < 3; ++turn) uv_run(&loop, UV_RUN_ONCE);
  ASSERT_EQ(fired_count, 3);
  EXPECT_EQ(fired[1].order, 0);
  EXPECT_EQ(fired[2].order, 1);
  EXPECT_EQ(fired[0].order, 2);
  for (int i = 0; i < 3; ++i) EXPECT_GE(fired[i].at - fired[i].started, delays_ns[i]);
  EXPECT_EQ(queue.size(), 0u);
  queue.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&keepalive), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace hello
