// A WebSocket's shaping (--shape, docs/websocket.md): the upgrade's own
// parameters, of which `delay` and `size` apply to every echo. Made only
// for a connection whose upgrade carried some, so an unshaped one holds
// nothing of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shaping/shape.h"

namespace hello {

struct WsShaping {
  // Echoes waiting for their delay may hold this much; past it the
  // connection ends with 1008 (the heart reads on while they wait).
  static constexpr size_t kMaxWaiting = 16 << 20;

  Shape shape;
  // Echoes waiting for their delay, framed, in the order they go out, and
  // for each when it is due and where its bytes end in `waiting`. An echo
  // never overtakes an earlier one: each is due no sooner than the last.
  std::string waiting;
  std::vector<std::pair<uint64_t, size_t>> due;
  uint64_t last_due_us = 0;
  // A `size` echo's payload: the shared pattern, as long as decided.
  std::string sized;

  // Moves every echo due by `now` (all of them with `all`) to `out`.
  void release(std::string& out, uint64_t now, bool all) {
    size_t n = 0;
    size_t i = 0;
    for (; i < due.size() && (all || due[i].first <= now); ++i) n = due[i].second;
    if (i == 0) return;
    out.append(waiting, 0, n);
    waiting.erase(0, n);
    due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(i));
    for (auto& d : due) d.second -= n;
  }
};

}  // namespace hello
