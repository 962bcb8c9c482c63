// Counts heap allocations per WebSocket message after warm-up, in a real
// worker over loopback (docs/websocket.md): none for an echo, one message
// at a time or 16 in one write, plain, fragmented, and with
// permessage-deflate agreed (zlib's streams are made at the upgrade).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "server/worker.h"
#include "test_persona.h"

#include "allocation_count.h"

namespace hello {
namespace {

constexpr WebSocketPersona kEcho{
    .path = "/ws",
    .switching =
        "HTTP/1.1 101 Switching Protocols\r\nDate: {date}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extensions}\r\n",
    .extensions_line = "Sec-WebSocket-Extensions: permessage-deflate\r\n",
    .deflate = true,
};

constexpr Persona kWsPersona = [] {
  Persona p = test::kTestPersona;
  p.websocket = kEcho;
  return p;
}();

// A masked client frame (RFC 6455 section 5.2), with the mask 0: the
// payload goes as it is.
std::string client_frame(uint8_t first, std::string_view payload) {
  std::string f{static_cast<char>(first), static_cast<char>(0x80 | payload.size())};
  f.append(4, '\0');
  return f + std::string(payload);
}

// Opens a WebSocket on `sa` (offering deflate with `deflate`); false if no 101.
bool upgrade(int fd, bool deflate) {
  std::string request =
      "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
  if (deflate) request += "Sec-WebSocket-Extensions: permessage-deflate\r\n";
  request += "\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    return false;
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && recv(fd, &c, 1, 0) == 1) head += c;
  return head.starts_with("HTTP/1.1 101 ");
}

// Reads `frames` whole server frames (short, unfragmented) into `buf`.
bool read_frames(int fd, int frames, char* buf, size_t size) {
  size_t got = 0;
  size_t at = 0;
  for (int seen = 0; seen < frames;) {
    while (got - at >= 2 && got - at >= 2u + (static_cast<uint8_t>(buf[at + 1]) & 0x7fu)) {
      at += 2u + (static_cast<uint8_t>(buf[at + 1]) & 0x7fu);
      if (++seen == frames) return at == got;
    }
    if (at > 0) {
      memmove(buf, buf + at, got - at);
      got -= at;
      at = 0;
    }
    ssize_t n = recv(fd, buf + got, size - got, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

void expect_no_allocation_per_message(bool deflate, bool fragmented) {
  Worker worker(kWsPersona, {}, {}, 0, nullptr);
  struct sockaddr_in sa = start_on_loopback(worker);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_TRUE(upgrade(fd, deflate));
  // 16 bytes of text: one frame, or three fragments.
  std::string one = fragmented ? client_frame(0x01, "hello ") + client_frame(0x00, "wor") +
                                     client_frame(0x80, "ld, again!")
                               : client_frame(0x81, "hello world, hi!");
  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += one;
  char buf[65536];
  auto exchange = [&](int n) {
    const std::string& in = n == 1 ? one : sixteen;
    if (send(fd, in.data(), in.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(in.size()))
      return false;
    return read_frames(fd, n, buf, sizeof buf);
  };
  EXPECT_EQ(steady_state_allocations(exchange, {1000, 100}, {10000, 1000}), 0u);
  close(fd);
  worker.stop(false);
  worker.join();
}

TEST(Allocation, AWebSocketEchoAllocatesNothingPerMessage) {
  expect_no_allocation_per_message(false, false);
}

TEST(Allocation, AFragmentedWebSocketMessageAllocatesNothing) {
  expect_no_allocation_per_message(false, true);
}

TEST(Allocation, PermessageDeflateAllocatesNothingPerMessage) {
  expect_no_allocation_per_message(true, false);
}

}  // namespace
}  // namespace hello
