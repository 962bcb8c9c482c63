// A connection's share of a loop turn (net/transport.h): what it may read
// before it yields to the others, without a socket.
#include <gtest/gtest.h>

#include "net/transport.h"

namespace hello {
namespace {

constexpr size_t kBuffer = 64 * 1024;  // the worker's read buffer

TEST(ReadShare, ShortReadsNeverSpendIt) {
  // The common case: each request a read shorter than the buffer, which
  // emptied the socket and ends the turn by itself.
  ReadShare share;
  for (int i = 0; i < 100000; ++i) ASSERT_FALSE(share.spend(100, kBuffer)) << i;
  ASSERT_FALSE(share.spend(kBuffer - 1, kBuffer));
}

TEST(ReadShare, ABufferFilledSpendsIt) {
  ReadShare share;
  EXPECT_TRUE(share.spend(kBuffer, kBuffer)) << "a full buffer of 64 KiB is the whole share";
}

TEST(ReadShare, SmallerBuffersSpendItTogether) {
  // TLS reads its ciphertext into a smaller buffer: several full reads
  // make the share.
  constexpr size_t kSmall = 17 * 1024;
  ReadShare share;
  size_t reads = 0;
  while (!share.spend(kSmall, kSmall)) ASSERT_LT(++reads, 100u);
  EXPECT_EQ(reads + 1, (ReadShare::kBytesPerTurn + kSmall - 1) / kSmall);
}

TEST(ReadShare, AShortReadOrANewTurnStartsItAgain) {
  constexpr size_t kSmall = 16 * 1024;
  ReadShare share;
  EXPECT_FALSE(share.spend(kSmall, kSmall));
  EXPECT_FALSE(share.spend(kSmall, kSmall));
  EXPECT_FALSE(share.spend(10, kSmall));  // the socket was emptied
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(share.spend(kSmall, kSmall)) << i;
  EXPECT_TRUE(share.spend(kSmall, kSmall));
  share.renew();  // its next turn
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(share.spend(kSmall, kSmall)) << i;
  EXPECT_TRUE(share.spend(kSmall, kSmall));
}

TEST(ReadShare, TheEndOrAnErrorSpendsNothing) {
  ReadShare share;
  EXPECT_FALSE(share.spend(UV_EOF, kBuffer));
  EXPECT_FALSE(share.spend(UV_ECONNRESET, kBuffer));
}

}  // namespace
}  // namespace hello
