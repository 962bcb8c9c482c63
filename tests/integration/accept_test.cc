// How connections begin and end on the wire: accepted at their first bytes
// (TCP_DEFER_ACCEPT, unless --no-defer-accept), and the last answer sent
// with the FIN.
#include <gtest/gtest.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_segs_in
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "test_client.h"

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;

// Segments the client has received on the connection so far.
uint32_t segments_in(int fd) {
  struct tcp_info info = {};
  socklen_t len = sizeof info;
  EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len), 0);
  return info.tcpi_segs_in;
}

// The exit summary's connection count after a client connected and said
// nothing for 0.4 s.
std::string connections_after_silence(const std::vector<std::string>& flags) {
  ServerProcess s("sanic", flags);
  Client silent(s.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(s.stop(), 0);
  return s.rest_of_stderr();
}

// The kernel retransmits the SYN-ACK of a silent client after 1 s; only
// then is it accepted. Well before that, the server has not seen it.
TEST(DeferAccept, ASilentClientIsNotAcceptedAtItsHandshake) {
  std::string err = connections_after_silence({});
  EXPECT_NE(err.find("total: 0 connections"), std::string::npos) << err;
}

TEST(DeferAccept, OffAcceptsAtTheHandshake) {
  std::string err = connections_after_silence({"--no-defer-accept"});
  EXPECT_NE(err.find("total: 1 connections"), std::string::npos) << err;
}

// Accepted about a second late, a silent client then has the header
// timeout like any other: it is not kept forever.
TEST(DeferAccept, ASilentClientStillTimesOut) {
  ServerProcess s("sanic", {"--header-timeout", "0.3"});
  Client silent(s.port());
  auto start = Clock::now();
  auto rest = silent.read_to_eof(std::chrono::seconds(6));
  ASSERT_TRUE(rest.has_value()) << "a silent client was never accepted and closed";
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(900));
}

// The client receives the SYN-ACK, the ACK of its request, and the answer
// with the FIN in one segment: 3 segments, where an answer followed by a
// FIN of its own makes 4. Input left unread behind the answer ends with a
// FIN too (shutdown, then the wait for the client's), not a reset.
class LastAnswer : public ::testing::TestWithParam<bool> {};

TEST_P(LastAnswer, LeavesWithTheFin) {
  std::vector<std::string> flags;
  if (!GetParam()) flags.push_back("--no-defer-accept");
  ServerProcess s("sanic", flags);
  for (std::string_view request :
       {"GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n"}) {
    Client c(s.port());
    ASSERT_TRUE(c.send(request));
    auto all = c.read_to_eof();
    ASSERT_TRUE(all.has_value()) << request;
    EXPECT_NE(all->find("\r\n\r\nHello!!!"), std::string::npos) << *all;
    EXPECT_LE(segments_in(c.fd()), 3u) << request;
  }
}

INSTANTIATE_TEST_SUITE_P(DeferAccept, LastAnswer, ::testing::Bool());

// A worker accepts 64 connections a loop turn, then goes on the next turn:
// a burst queued while it was stopped (SIGSTOP) is answered in full.
TEST(AcceptBatch, EveryConnectionOfABurstIsAnswered) {
  ServerProcess s("sanic");
  s.signal(SIGSTOP);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 300; ++i) {
    clients.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(clients.back()->send("GET / HTTP/1.0\r\n\r\n"));
  }
  s.signal(SIGCONT);
  int answered = 0;
  auto deadline = Clock::now() + std::chrono::seconds(5);  // for all of them
  for (auto& c : clients) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto all = c->read_to_eof(std::max(left, std::chrono::milliseconds(1)));
    if (all.has_value() && all->find("\r\n\r\nHello!!!") != std::string::npos) ++answered;
  }
  EXPECT_EQ(answered, 300);
  ASSERT_EQ(s.stop(), 0);
  std::string err = s.rest_of_stderr();
  EXPECT_NE(err.find("total: 300 connections, 300 requests"), std::string::npos) << err;
}

}  // namespace
}  // namespace hello::test
