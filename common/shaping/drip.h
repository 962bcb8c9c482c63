// A drip's timing (docs/shaping.md): a body sent in N equal pieces over a
// duration D, N = min(bytes, max(1, D / kDripPieceNs)), the k-th piece due
// k·D/N after the head. Written once here for every protocol: HTTP/1's
// connection (server/connection_stream.cc) and HTTP/2's streams
// (http2/h2_session.cc) both send a drip by it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace hello {

// A drip sends a piece about this often: often enough that a client sees
// a trickle, seldom enough that a long drip costs few wake-ups.
inline constexpr uint64_t kDripPieceNs = 10 * 1000000;

struct Drip {
  uint64_t start_ns = 0;  // when the head went
  uint64_t span_ns = 0;   // D; 0: no drip, the body at once
  uint32_t pieces = 1;    // N
  uint32_t pieces_due = 0;

  // A drip of `length` bytes over `drip_us`, its head sent at `now_ns`:
  // no piece is due yet.
  void start(uint64_t now_ns, uint64_t drip_us, uint64_t length) {
    start_ns = now_ns;
    span_ns = drip_us * 1000;
    pieces = static_cast<uint32_t>(
        std::min<uint64_t>(length, std::max<uint64_t>(1, span_ns / kDripPieceNs)));
    pieces_due = 0;
  }
  bool active() const { return span_ns > 0; }
  // When piece `k` (1 to N) is due: the first nanosecond at or after k·D/N.
  uint64_t due_ns(uint64_t k) const { return start_ns + (span_ns * k + pieces - 1) / pieces; }
  // When the piece after those due so far is.
  uint64_t next_due_ns() const { return due_ns(uint64_t{pieces_due} + 1); }
  // Counts the pieces due by `now_ns` (never fewer than before) and returns
  // how many of a body of `length` bytes may be sent by then.
  uint64_t advance(uint64_t now_ns, uint64_t length) {
    uint64_t elapsed = now_ns > start_ns ? now_ns - start_ns : 0;
    uint64_t due = std::min<uint64_t>(pieces, elapsed * pieces / span_ns);
    if (due > pieces_due) pieces_due = static_cast<uint32_t>(due);
    return length * pieces_due / pieces;
  }
};

}  // namespace hello
