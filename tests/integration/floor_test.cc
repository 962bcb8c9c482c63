// hello-floor over a socket: the worker hands its connections to the floor
// heart, which answers every CRLF CRLF with the same bytes, whatever came
// before it and however the reads split it, and parses nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "test_client.h"

namespace hello::test {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kAnswer =
    "HTTP/1.1 200 OK\r\ncontent-length: 8\r\ncontent-type: text/plain\r\n\r\nHello!!!";

TEST(Floor, EveryBlankLineIsAnsweredWithTheSameBytesWhateverPrecedesIt) {
  ServerProcess s("floor");
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\nnot HTTP at all\r\n\r\nPOST /x\r\n\r\n"));
  c.shutdown_write();
  std::optional<std::string> all = c.read_to_eof();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(*all, std::string(kAnswer) + std::string(kAnswer) + std::string(kAnswer));
  EXPECT_EQ(s.stop(), 0);
}

TEST(Floor, ABlankLineSplitAcrossWritesIsAnsweredOnce) {
  ServerProcess s("floor");
  Client c(s.port());
  for (std::string_view piece : {"GET / HTTP/1.1\r\n\r", "\n", "\r", "\n\r\n"}) {
    ASSERT_TRUE(c.send(piece));
    std::this_thread::sleep_for(20ms);  // most likely a read each; the answer is the same if not
  }
  c.shutdown_write();
  std::optional<std::string> all = c.read_to_eof();
  ASSERT_TRUE(all.has_value());
  // "\r\n\r\n" once, then "\r\n\r\n" again from the last three pieces.
  EXPECT_EQ(*all, std::string(kAnswer) + std::string(kAnswer));
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace hello::test
