// Whole-worker stalls (--stall), over real sockets: a request sent as a
// stall begins waits for all of it, and only that one; periodic stalls keep
// their period; every worker stalls over the same window and counts it; a
// stop during a stall waits for that stall only; a bad SPEC is one line and
// exit 2.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <simdjson.h>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

// Far more than one connection sends in the few seconds of a test (about
// 20,000 a second here); it bounds the loop should the clock be stuck.
constexpr size_t kMaxRequests = 1000000;

// A latency this long is a stall's (the shortest stall tested is 200 ms);
// this machine alone holds a thread for up to 40 ms (tests/tools/README.md).
constexpr double kLongMs = 150;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One request and its answer.
struct Exchange {
  Clock::time_point sent;
  Clock::time_point answered;
  double ms() const { return ms_between(sent, answered); }
};

// Requests one after another on one keep-alive connection for `length`,
// each sent once the one before is answered.
std::vector<Exchange> one_at_a_time(int port, std::chrono::milliseconds length) {
  Client c(port);
  std::vector<Exchange> done;
  auto end = Clock::now() + length;
  for (size_t i = 0; i < kMaxRequests; ++i) {
    Exchange e{Clock::now(), {}};
    if (e.sent >= end) break;
    if (!c.send(kGet)) {
      ADD_FAILURE() << "send failed after " << i << " requests";
      break;
    }
    std::string r = c.read_response(false, 2s);
    e.answered = Clock::now();
    if (r.rfind("HTTP/1.1 200 OK\r\n", 0) != 0) {
      ADD_FAILURE() << "request " << i << " answered " << r;
      break;
    }
    done.push_back(e);
  }
  return done;
}

std::vector<Exchange> long_ones(const std::vector<Exchange>& all) {
  std::vector<Exchange> slow;
  std::copy_if(all.begin(), all.end(), std::back_inserter(slow),
               [](const Exchange& e) { return e.ms() >= kLongMs; });
  return slow;
}

double median_ms(const std::vector<Exchange>& all) {
  std::vector<double> ms;
  for (const Exchange& e : all) ms.push_back(e.ms());
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

// The "stalls" of each worker in a --stats-json file, then the total.
std::vector<uint64_t> stalls_in(const std::string& json_path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array workers;
  uint64_t total = 0;
  if (parser.load(json_path).get(doc) != simdjson::SUCCESS ||
      doc["workers"].get(workers) != simdjson::SUCCESS ||
      doc["total"]["stalls"].get(total) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not a --stats-json file: " << read_file(json_path);
    return {};
  }
  std::vector<uint64_t> stalls;
  for (simdjson::dom::element w : workers) {
    uint64_t n = 0;
    EXPECT_EQ(w["stalls"].get(n), simdjson::SUCCESS);
    stalls.push_back(n);
  }
  stalls.push_back(total);
  return stalls;
}

// Stalls at 1 s and 2 s: the request sent as each begins waits about
// 200 ms, the ones between are answered at once, and the second stall ends
// a period after the first.
TEST(Stall, EveryPeriodOneRequestWaitsTheWholeStall) {
  std::string json = temp_path("stall-stats.json");
  ServerProcess s("sanic", {"--stall", "200ms/1s", "--stats-json", json});
  std::vector<Exchange> all = one_at_a_time(s.port(), 2500ms);
  ASSERT_GE(all.size(), 1000u);
  std::vector<Exchange> slow = long_ones(all);
  ASSERT_EQ(slow.size(), 2u) << "one long wait per stall";
  for (const Exchange& e : slow) {
    EXPECT_GE(e.ms(), 190.0);
    EXPECT_LT(e.ms(), 200.0 + scaled_ms(200.0));
  }
  EXPECT_LT(median_ms(all), scaled_ms(20.0));
  // Each stall ends at its fixed time, epoch + k s + 200 ms: one period
  // apart (1,000 ms, give or take this client's scheduling on a busy
  // machine), where stalls counted from the end of the one before would
  // be 1,200 ms apart.
  double period = ms_between(slow[0].answered, slow[1].answered);
  EXPECT_GE(period, 900.0);
  EXPECT_LE(period, 1100.0);
  printf("%zu requests, median %.3f ms; stalled %.3f and %.3f ms, ends %.3f ms apart\n", all.size(),
         median_ms(all), slow[0].ms(), slow[1].ms(), period);
  ASSERT_EQ(s.stop(), 0);
  EXPECT_EQ(stalls_in(json), (std::vector<uint64_t>{2, 2}));
  fs::remove(json);
  std::string summary = s.rest_of_stderr();
  EXPECT_NE(summary.find("    total: "), std::string::npos) << summary;
  EXPECT_NE(summary.find(", 2 stalls\n"), std::string::npos) << summary;
}

// One stall, 500 ms after start: exactly one request waits, for 300 ms.
TEST(Stall, AOneOffStallHoldsOneRequest) {
  std::string json = temp_path("stall-stats.json");
  ServerProcess s("sanic", {"--stall", "300ms@500ms", "--stats-json", json});
  std::vector<Exchange> all = one_at_a_time(s.port(), 1500ms);
  ASSERT_GE(all.size(), 1000u);
  std::vector<Exchange> slow = long_ones(all);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_GE(slow[0].ms(), 290.0);
  EXPECT_LT(slow[0].ms(), 300.0 + scaled_ms(200.0));
  EXPECT_LT(median_ms(all), scaled_ms(20.0));
  ASSERT_EQ(s.stop(), 0);
  EXPECT_EQ(stalls_in(json), (std::vector<uint64_t>{1, 1}));
  fs::remove(json);
}

// Two workers, 16 connections (each worker has some, but with odds of
// 2^-15): every connection waits once, and all the waits overlap: there
// is a moment when every connection, on either worker, is held. (When
// each wait ends, as this client sees it, depends on when its thread next
// runs: 170 ms apart under ASan on a loaded machine.)
TEST(Stall, EveryWorkerStallsOverTheSameWindow) {
  std::string json = temp_path("stall-stats.json");
  ServerProcess s("sanic", {"-w", "2", "--stall", "300ms@300ms", "--stats-json", json});
  constexpr int kConnections = 16;
  std::vector<std::vector<Exchange>> runs(kConnections);
  std::vector<std::thread> clients;
  for (int i = 0; i < kConnections; ++i)
    clients.emplace_back([&, i] { runs[i] = one_at_a_time(s.port(), 1000ms); });
  for (auto& t : clients) t.join();
  Clock::time_point last_sent = Clock::time_point::min();
  Clock::time_point first_answered = Clock::time_point::max();
  for (int i = 0; i < kConnections; ++i) {
    std::vector<Exchange> slow = long_ones(runs[i]);
    ASSERT_EQ(slow.size(), 1u) << "connection " << i;
    last_sent = std::max(last_sent, slow[0].sent);
    first_answered = std::min(first_answered, slow[0].answered);
  }
  double together_ms = ms_between(last_sent, first_answered);
  EXPECT_GT(together_ms, 0.0) << "the stalls of the two workers did not overlap";
  printf("every connection held at once for %.3f ms\n", together_ms);
  ASSERT_EQ(s.stop(), 0);
  EXPECT_EQ(stalls_in(json), (std::vector<uint64_t>{1, 1, 2}));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array workers;
  ASSERT_EQ(parser.load(json).get(doc), simdjson::SUCCESS);
  ASSERT_EQ(doc["workers"].get(workers), simdjson::SUCCESS);
  for (simdjson::dom::element w : workers) {
    uint64_t connections = 0;
    ASSERT_EQ(w["connections"].get(connections), simdjson::SUCCESS);
    EXPECT_GE(connections, 1u) << "a worker had no connection";
  }
  fs::remove(json);
}

// SIGTERM in the middle of the first of stalls that come every 500 ms:
// the request waiting is answered when the stall ends, no other stall
// begins, and the process exits 0 (a stall timer still running when the
// timers close would fail a check and abort it). With --shutdown-timeout 0
// the stop is forced at once; it also waits for the stall only.
TEST(Stall, AStopDuringAStallWaitsForThatStallOnly) {
  for (bool force : {false, true}) {
    SCOPED_TRACE(force ? "forced" : "graceful");
    std::string json = temp_path(force ? "stall-forced.json" : "stall-graceful.json");
    std::vector<std::string> flags = {"--stall", "400ms/500ms", "--stats-json", json};
    if (force) flags.insert(flags.end(), {"--shutdown-timeout", "0"});
    ServerProcess s("sanic", flags);
    // The stalls count from a clock the server reads just before it
    // listens and prints its banner, which ServerProcess has read: so the
    // server's clock is at most the banner's way ahead of this one (a
    // clock read before the start would trail it by the whole start-up,
    // hundreds of ms under ASan on a busy machine).
    auto started = Clock::now();
    auto c = std::make_unique<Client>(s.port());
    ASSERT_TRUE(c->send(kGet));
    ASSERT_EQ(c->read_response().rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
    // The first stall lasts from 500 to 900 ms after the server's start.
    std::this_thread::sleep_until(started + 650ms);
    ASSERT_TRUE(c->send(kGet));
    struct pollfd p {
      c->fd(), POLLIN, 0
    };
    ASSERT_EQ(poll(&p, 1, 50), 0) << "answered: the server is not stalled";
    auto signalled = Clock::now();
    s.signal(SIGTERM);
    if (!force) {
      EXPECT_EQ(c->read_response(false, scaled(2s)).rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
      // Answered as the stall ends, 900 ms after the start.
      EXPECT_LT(ms_between(started, Clock::now()), 900.0 + scaled_ms(100.0));
      // The drain ends the connection, now idle; our FIN ends its linger.
      EXPECT_TRUE(c->read_to_eof(scaled(1s)).has_value());
    }
    c = nullptr;
    EXPECT_EQ(s.wait(scaled(5s)), 0);
    double stop_ms = ms_between(signalled, Clock::now());
    // What is left of the stall (about 200 ms) and the drain's check (50
    // ms), with room for a busy machine; that no second stall began is
    // the count of stalls below.
    EXPECT_LT(stop_ms, scaled_ms(550.0)) << "the stop waited for more than one stall";
    printf("%s: exited %.3f ms after the signal\n", force ? "forced" : "graceful", stop_ms);
    EXPECT_EQ(stalls_in(json), (std::vector<uint64_t>{1, 1}));
    fs::remove(json);
  }
}

// Every persona takes --stall; a bad SPEC is one line naming it, exit 2.
TEST(Stall, ABadSpecIsOneLineAndExit2) {
  RunResult r = run_binary(binary_path("sanic"), {"--stall", "200ms"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-sanic: --stall: bad value \"200ms\": not DURATION/EVERY or DURATION@AT "
            "(usage: hello-sanic [OPTIONS], see --help)\n");
  for (const char* bad :
       {"0/1s", "1s/1s", "2s/1s", "abc/1s", "1ms/", "61s/120s", "1ms@", "-1ms@1s"}) {
    r = run_binary(binary_path("sanic"), {"--stall", "1ms/1s", "--stall", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind("hello-sanic: --stall: bad value \"" + std::string(bad) + "\": ", 0), 0u)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  for (const PersonaInfo& persona : read_personas()) {
    r = run_binary(binary_path(persona.name), {"--stall", "1s/1s"});
    EXPECT_EQ(r.exit_code, 2) << persona.name;
    EXPECT_EQ(r.err, "hello-" + persona.name +
                         ": --stall: bad value \"1s/1s\": EVERY 1s must be longer than DURATION "
                         "1s (usage: hello-" +
                         persona.name + " [OPTIONS], see --help)\n");
    r = run_binary(binary_path(persona.name), {"--help"});
    EXPECT_EQ(r.exit_code, 0) << persona.name;
    EXPECT_NE(r.out.find("--stall SPEC"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("coordinated omission"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace hello::test
