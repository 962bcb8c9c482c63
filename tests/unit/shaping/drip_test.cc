// A drip's timing, the one both protocols send by (shaping/drip.h): how
// many pieces, when each is due, and how much of the body by then.
#include "shaping/drip.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(Drip, APieceAbout10MsApartAndNoMorePiecesThanBytes) {
  Drip d;
  d.start(0, 1000000, 10000);  // 1 s
  EXPECT_EQ(d.pieces, 100u);
  d.start(0, 5000, 10000);  // 5 ms: one piece, at the end
  EXPECT_EQ(d.pieces, 1u);
  d.start(0, 1000000, 7);  // 7 bytes: 7 pieces
  EXPECT_EQ(d.pieces, 7u);
  EXPECT_TRUE(d.active());
  EXPECT_FALSE(Drip{}.active());
}

TEST(Drip, PieceKIsDueAtKTimesDOverNRoundedUp) {
  Drip d;
  d.start(1000, 100000, 300);  // 100 ms, 10 pieces
  EXPECT_EQ(d.next_due_ns(), 1000 + 10 * kMs);
  EXPECT_EQ(d.due_ns(10), 1000 + 100 * kMs) << "the last at D";
  d.start(0, 1000, 3);  // 1 ms over 1 piece (D / 10 ms is 0)
  EXPECT_EQ(d.due_ns(1), kMs);
  d.start(0, 25000, 1000);  // 25 ms, 2 pieces: 12.5 ms rounds up
  EXPECT_EQ(d.due_ns(1), 12500000u);
  d.start(0, 30001, 1000);  // 30.001 ms, 3 pieces: 10.000333 ms rounds up
  EXPECT_EQ(d.due_ns(1), 10000334u);
}

TEST(Drip, TheBytesDueFollowThePiecesAndNeverGoBack) {
  Drip d;
  d.start(0, 100000, 1000);  // 10 pieces of 100 bytes
  EXPECT_EQ(d.advance(9 * kMs, 1000), 0u);
  EXPECT_EQ(d.advance(d.next_due_ns(), 1000), 100u) << "at its due time, the piece is due";
  EXPECT_EQ(d.advance(35 * kMs, 1000), 300u) << "late: every piece due by then";
  EXPECT_EQ(d.pieces_due, 3u);
  EXPECT_EQ(d.next_due_ns(), 40 * kMs);
  EXPECT_EQ(d.advance(20 * kMs, 1000), 300u) << "never back";
  EXPECT_EQ(d.advance(10000 * kMs, 1000), 1000u) << "never past the body";
  EXPECT_EQ(d.pieces_due, 10u);
}

}  // namespace
}  // namespace hello
