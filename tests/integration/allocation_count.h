// What the allocation tests share: the counter of heap allocations (the
// replaced malloc and operator new, allocation_count.cc), the steady state
// they judge, and a worker on loopback with its clients.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "h2_frames.h"
#include "http1/session.h"
#include "http2/h2_session.h"
#include "http_bytes.h"
#include "observe/access_log.h"
#include "server/worker.h"
#include "test_persona.h"
#include "test_time.h"
#include "tls/tls_context.h"
#include "tls/tls_memory.h"

namespace hello {

// Whether allocations are counted now, and how many were (allocation_count.cc).
extern std::atomic<bool> counting;
extern std::atomic<uint64_t> allocations;

inline constexpr std::string_view kRequest = test::kWrkRequest;

// Counts the allocations `work` makes.
template <typename Work>
uint64_t allocations_in(Work work) {
  allocations = 0;
  counting = true;
  work();
  counting = false;
  return allocations.load();
}

struct Rounds {
  int singles;  // exchanges of one request
  int batches;  // exchanges of 16 pipelined requests (or streams)
};

// The steady state the tests judge: `warm_up` rounds of exchange(1) and
// exchange(16) (each true if every answer came back), then `counted` ones,
// whose allocations are returned and recorded for scripts/bench
// --performance, which reads the JSON report.
template <typename Exchange>
uint64_t steady_state_allocations(Exchange exchange, Rounds warm_up, Rounds counted) {
  auto run = [&](Rounds r) {
    for (int i = 0; i < r.singles; ++i)
      if (!exchange(1)) return false;
    for (int i = 0; i < r.batches; ++i)
      if (!exchange(16)) return false;
    return true;
  };
  EXPECT_TRUE(run(warm_up));
  bool answered = false;
  uint64_t n = allocations_in([&] { answered = run(counted); });
  EXPECT_TRUE(answered);
  ::testing::Test::RecordProperty("allocations", std::to_string(n));
  return n;
}

// Sends `request` and reads until `expected` bytes of answers have arrived.
inline bool round_trip(int fd, const char* request, size_t length, size_t expected, char* buf,
                       size_t size) {
  if (send(fd, request, length, MSG_NOSIGNAL) != static_cast<ssize_t>(length)) return false;
  size_t got = 0;
  while (got < expected) {
    ssize_t n = recv(fd, buf, size, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return got == expected;
}

// `rounds` times: sends `in` on every connection of `fds`, then reads
// `expected` bytes of answers from each.
inline void pipeline_rounds(const std::vector<int>& fds, const std::string& in, size_t expected,
                            int rounds, char* buf, size_t size) {
  for (int r = 0; r < rounds; ++r) {
    for (int fd : fds)
      ASSERT_EQ(send(fd, in.data(), in.size(), MSG_NOSIGNAL), static_cast<ssize_t>(in.size()));
    for (int fd : fds) {
      size_t got = 0;
      while (got < expected) {
        ssize_t n = recv(fd, buf, size, 0);
        ASSERT_GT(n, 0);
        got += static_cast<size_t>(n);
      }
      ASSERT_EQ(got, expected);
    }
  }
}

// Starts `worker` on its own thread, listening on a free loopback port;
// returns the address to connect to.
inline struct sockaddr_in start_on_loopback(Worker& worker) {
  struct sockaddr_in sa {};
  EXPECT_EQ(worker.init(), 0);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(worker.listen(reinterpret_cast<struct sockaddr*>(&sa)), 0);
  sa.sin_port = htons(static_cast<uint16_t>(worker.port()));
  worker.start(-1, nullptr);
  return sa;
}

// `n` client sockets connected to `sa`.
inline std::vector<int> connect_all(const struct sockaddr_in& sa, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    fds.push_back(socket(AF_INET, SOCK_STREAM, 0));
    EXPECT_EQ(connect(fds.back(), reinterpret_cast<const struct sockaddr*>(&sa), sizeof sa), 0);
  }
  return fds;
}

// Sends `in` on `fd` and reads its `answers` answers, the last of them the
// root's ("Hello!!!"): the length of one round's answers, learnt from the
// first; 0 if they did not come in 1,000 reads.
inline size_t first_round_length(int fd, const std::string& in, size_t answers, char* buf,
                                 size_t size) {
  if (send(fd, in.data(), in.size(), 0) != static_cast<ssize_t>(in.size())) return 0;
  size_t got = 0;
  auto whole = [&] {
    std::string_view seen(buf, got);
    size_t count = 0;
    for (size_t at = 0; (at = seen.find("HTTP/1.1 ", at)) != std::string_view::npos; ++at) ++count;
    return count == answers && seen.ends_with("Hello!!!");
  };
  for (int i = 0; i < 1000 && !whole(); ++i) {
    ssize_t n = recv(fd, buf + got, size - got, 0);
    if (n <= 0) return 0;
    got += static_cast<size_t>(n);
  }
  return whole() ? got : 0;
}

// As the servers do first thing in main: OpenSSL's blocks recycled.
inline const bool kRecycled = recycle_tls_memory();

}  // namespace hello
