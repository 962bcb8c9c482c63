// Workers, the access log, stats and graceful shutdown, over real sockets;
// graceful shutdown and resetting clients over TLS (--tls) too.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <simdjson.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cgroup_quota.h"
#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

// Sends `count` requests one after another on one connection, reading each answer.
int exchange(int port, int count, std::string_view request = kGet) {
  Client c(port);
  int answered = 0;
  for (int i = 0; i < count; ++i) {
    if (!c.send(request)) break;
    if (c.read_response().rfind("HTTP/1.1 ", 0) != 0) break;
    ++answered;
  }
  return answered;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Workers, StatsJsonTotalsAreTheSumOfWorkersAndOfWhatWasSent) {
  std::string json_path = temp_path("stats.json");
  ServerProcess s("sanic", {"-w", "2", "--stats-json", json_path});
  EXPECT_NE(s.banner().find("(2 workers; HTTP/1.1)"), std::string::npos) << s.banner();
  constexpr int kConnections = 64;
  constexpr int kEach = 10;
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int i = 0; i < kConnections; ++i)
    clients.emplace_back([&] { answered += exchange(s.port(), kEach); });
  for (auto& t : clients) t.join();
  ASSERT_EQ(answered, kConnections * kEach);
  EXPECT_EQ(exchange(s.port(), 3, "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n"), 3);
  ASSERT_EQ(s.stop(), 0);

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json_path).get(doc), simdjson::SUCCESS) << "not valid JSON";
  simdjson::dom::array workers = doc["workers"].get_array().value();
  simdjson::dom::object total = doc["total"].get_object().value();
  ASSERT_EQ(workers.size(), 2u);
  for (const char* key :
       {"connections", "requests", "bytes_in", "bytes_out", "parse_errors", "log_lines_dropped"}) {
    uint64_t sum = 0;
    for (auto w : workers) {
      sum += w[key].get_uint64().value();
    }
    EXPECT_EQ(sum, total[key].get_uint64().value()) << key;
  }
  for (const char* cls : {"2xx", "4xx", "5xx"}) {
    uint64_t sum = 0;
    for (auto w : workers) {
      sum += w["responses"][cls].get_uint64().value();
    }
    EXPECT_EQ(sum, total["responses"][cls].get_uint64().value()) << cls;
  }
  const uint64_t sent = kConnections * kEach + 3;
  EXPECT_EQ(total["requests"].get_uint64().value(), sent);
  EXPECT_EQ(total["responses"]["2xx"].get_uint64().value(), sent - 3);
  EXPECT_EQ(total["responses"]["4xx"].get_uint64().value(), 3u);
  EXPECT_EQ(total["connections"].get_uint64().value(), kConnections + 1u);
  // SO_REUSEPORT hashes connections over the listeners: with 65 of them,
  // a worker below 20% would be five standard deviations off.
  for (auto w : workers) {
    EXPECT_GE(w["requests"].get_uint64().value() * 5, sent) << "worker starved";
  }
}

TEST(Workers, FastStartsOneWorkerPerAllowedCpu) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpus = CPU_COUNT(&set);
  // As many as the affinity mask allows, or fewer where this machine's
  // cgroup has a CPU quota: both read here, not from the server.
  int quota = cgroup_quota_cpus();
  int expected = quota > 0 ? std::min(cpus, quota) : cpus;
  std::string json_path = temp_path("fast-stats.json");
  ServerProcess s("tornado", {"--fast", "--stats-json", json_path});
  const std::string banner = s.banner();
  ASSERT_EQ(s.stop(), 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(json_path).get(doc), simdjson::SUCCESS) << "not valid JSON";
  EXPECT_EQ(doc["workers"].get_array().value().size(), static_cast<size_t>(expected))
      << cpus << " CPUs allowed, a quota of " << quota << "; " << banner;
  std::string workers = std::to_string(expected) + (expected == 1 ? " worker, " : " workers, ");
  if (expected < cpus) {
    EXPECT_NE(banner.find("(" + workers + "--fast: " + std::to_string(expected) + " of the " +
                          std::to_string(cpus) + " CPUs it may run on, by the cgroup"),
              std::string::npos)
        << banner;
  } else {
    EXPECT_NE(banner.find("(" + workers + "--fast: the " + std::to_string(cpus) + " CPU"),
              std::string::npos)
        << banner;
  }
}

TEST(Workers, PinGivesEachWorkerOneCpu) {
  ServerProcess s("tornado", {"-w", "2", "--pin"});
  int single_cpu_threads = 0;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(s.pid()) + "/task")) {
    std::string status = read_file(task.path() / "status");
    size_t at = status.find("Cpus_allowed_list:\t");
    if (at == std::string::npos) continue;
    std::string list = status.substr(at + 19, status.find('\n', at) - at - 19);
    if (list.find_first_of(",-") == std::string::npos) ++single_cpu_threads;
  }
  EXPECT_EQ(single_cpu_threads, 2);
}

TEST(AccessLog, OneWellFormedLinePerResponse) {
  std::string log_path = temp_path("access.log");
  ServerProcess s("sanic", {"-w", "2", "--access-log=" + log_path});
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) clients.emplace_back([&] { exchange(s.port(), 100); });
  for (auto& t : clients) t.join();
  ASSERT_EQ(exchange(s.port(), 1, "GET /json?x=1 HTTP/1.0\r\n\r\n"), 1);
  ASSERT_EQ(exchange(s.port(), 1, "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n"), 1);
  ASSERT_EQ(s.stop(), 0);

  std::vector<std::string> lines = lines_of(read_file(log_path));
  ASSERT_EQ(lines.size(), 802u);
  const std::regex clf(
      R"(^127\.0\.0\.1 - - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET /[^ ]* HTTP/1\.[01]" \d{3} (\d+|-)$)");
  for (const std::string& line : lines) ASSERT_TRUE(std::regex_match(line, clf)) << line;
  // Each request's own line: the 800 GETs of /, the one of /json, the 404.
  auto lines_ending = [&](const std::string& tail) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.ends_with(tail); });
  };
  EXPECT_EQ(lines_ending("\"GET / HTTP/1.1\" 200 8"), 800);
  EXPECT_EQ(lines_ending("\"GET /json?x=1 HTTP/1.0\" 200 17"), 1);
  EXPECT_EQ(lines_ending("\"GET /nope HTTP/1.1\" 404 9"), 1);
}

TEST(AccessLog, WithoutPathGoesToStdout) {
  ServerProcess s("tornado", {"--access-log"});
  ASSERT_EQ(exchange(s.port(), 5), 5);
  ASSERT_EQ(s.stop(), 0);
  std::vector<std::string> lines = lines_of(s.all_of_stdout());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find("\"GET / HTTP/1.1\" 200 12"), std::string::npos) << lines[0];
}

TEST(AccessLog, AReaderThatStopsReadingDoesNotHoldTheExit) {
  // The test never reads the server's stdout: once the pipe is full the log
  // writer blocks, and shutdown must still end at its deadline.
  ServerProcess s("sanic", {"--access-log", "--shutdown-timeout", "1"});
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) clients.emplace_back([&] { exchange(s.port(), 1000); });
  for (auto& t : clients) t.join();
  auto start = Clock::now();
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait(scaled(4s)), 0);
  EXPECT_LT(Clock::now() - start, scaled(3s));
  EXPECT_NE(s.rest_of_stderr().find("access log: its reader stopped reading"), std::string::npos);
}

TEST(AccessLog, IsOffByDefault) {
  ServerProcess s("tornado");
  ASSERT_EQ(exchange(s.port(), 5), 5);
  ASSERT_EQ(s.stop(), 0);
  EXPECT_EQ(s.all_of_stdout(), "");
}

TEST(AccessLog, UnwritablePathIsOneLineAndExit2) {
  RunResult r =
      run_binary(binary_path("sanic"), {"-p", "0", "--access-log=/nonexistent-dir/access.log"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "hello-sanic: --access-log /nonexistent-dir/access.log: cannot open it: No such file or "
      "directory\n");
}

// --access-log-format json (docs/observability.md): one JSON object a line,
// its fields in their order, a shaped answer's decision with it.
TEST(AccessLog, JsonLinesHaveTheirFields) {
  std::string log_path = temp_path("access.json");
  ServerProcess s("sanic", {"--shape", "--access-log=" + log_path, "--access-log-format", "json"});
  ASSERT_EQ(exchange(s.port(), 3), 3);
  ASSERT_EQ(exchange(s.port(), 1, "GET /?status=503 HTTP/1.1\r\nHost: t\r\n\r\n"), 1);
  ASSERT_EQ(exchange(s.port(), 1, "HEAD /nope HTTP/1.0\r\n\r\n"), 1);
  ASSERT_EQ(s.stop(), 0);
  std::vector<std::string> lines = lines_of(read_file(log_path));
  ASSERT_EQ(lines.size(), 5u);
  const std::regex json(
      R"re(^\{"time":"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z","peer":"127\.0\.0\.1:\d+",)re"
      R"re("worker":0,"method":"(GET|HEAD)","target":"[^"]+","protocol":"HTTP/1\.[01]",)re"
      R"re("status":\d{3},"bytes":\d+,"service_us":\d+\.\d(,"shape_decision":"[^"]+")?\}$)re");
  simdjson::dom::parser parser;
  for (const std::string& line : lines) {
    ASSERT_TRUE(std::regex_match(line, json)) << line;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
  }
  EXPECT_NE(lines[0].find(R"("target":"/","protocol":"HTTP/1.1","status":200,"bytes":8,)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[3].find(R"("status":503,"bytes":8,"service_us":)"), std::string::npos)
      << lines[3];
  EXPECT_TRUE(lines[3].ends_with(R"(,"shape_decision":"status=503"})")) << lines[3];
  EXPECT_NE(
      lines[4].find(
          R"("method":"HEAD","target":"/nope","protocol":"HTTP/1.0","status":404,"bytes":0,)"),
      std::string::npos)
      << lines[4];
}

TEST(AccessLog, FormatWithoutTheLogIsOneLineAndExit2) {
  RunResult r = run_binary(binary_path("sanic"), {"-p", "0", "--access-log-format", "json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-sanic: --access-log-format needs --access-log (usage: hello-sanic [OPTIONS], "
            "see --help)\n");
  r = run_binary(binary_path("sanic"), {"-p", "0", "--access-log", "--access-log-format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("--access-log-format must be clf or json (got xml)"), std::string::npos)
      << r.err;
}

TEST(Stats, IntervalLinesAndExitSummary) {
  ServerProcess s("sanic", {"-w", "2", "--stats-interval", "0.2"});
  Client idle(s.port());
  // Idle after one answer (a silent client would be accepted a second late).
  ASSERT_TRUE(idle.send(kGet));
  ASSERT_EQ(idle.read_response().rfind("HTTP/1.1 200", 0), 0u);
  ASSERT_EQ(exchange(s.port(), 20), 20);
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(s.stop(), 0);
  std::string err = s.rest_of_stderr();
  const std::regex interval(R"(stats: \d+ req/s \(w0 \d+, w1 \d+\), \d+ open connections)");
  EXPECT_TRUE(std::regex_search(err, interval)) << err;
  EXPECT_NE(err.find("total: 2 connections, 21 requests"), std::string::npos) << err;
  EXPECT_NE(err.find("worker 1: "), std::string::npos) << err;
}

// `frozen`: the server is stopped (SIGSTOP) while the clients connect and
// send, so their connections wait in the listen queue, unaccepted, when
// SIGTERM arrives (not over TLS: the handshake needs a running server).
void expect_every_answer(const std::string& persona, int connections, int depth, bool frozen,
                         Tls tls = Tls::off) {
  std::vector<std::string> flags = {"-w", "2"};
  if (tls == Tls::on) flags.push_back("--tls");
  ServerProcess s(persona, flags);
  if (frozen) s.signal(SIGSTOP);
  std::string pipeline;
  for (int i = 0; i < depth; ++i) pipeline += kGet;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < connections; ++i) {
    clients.push_back(std::make_unique<Client>(s.port(), tls));
    ASSERT_TRUE(clients.back()->send(pipeline));
  }
  s.signal(SIGTERM);
  if (frozen) s.signal(SIGCONT);
  for (auto& c : clients) {
    auto all = c->read_to_eof(5s);
    ASSERT_TRUE(all.has_value()) << "connection not closed after shutdown";
    size_t responses = 0;
    for (size_t at = 0; (at = all->find("\r\n\r\nHello, world", at)) != std::string::npos; ++at)
      ++responses;
    EXPECT_EQ(responses, static_cast<size_t>(depth));
    if (tls == Tls::on) {
      EXPECT_TRUE(c->got_close_notify()) << "closed without close_notify";
    }
  }
  EXPECT_EQ(s.wait(), 0);
}

TEST(Shutdown, AnswersEveryPipelinedRequestSentBeforeTheSignal) {
  // 3,000 requests are about 80 KiB: more than one read of the server's.
  expect_every_answer("tornado", 8, 3000, false);
}

TEST(Shutdown, AnswersEveryPipelinedRequestSentBeforeTheSignalOverTls) {
  expect_every_answer("tornado", 8, 3000, false, Tls::on);
}

TEST(Shutdown, AnswersConnectionsStillWaitingToBeAccepted) {
  expect_every_answer("tornado", 200, 10, true);
}

TEST(Shutdown, IdleKeepAliveConnectionsCloseAtOnce) {
  // At once: long before the shutdown timeout, in any build (test_time.h).
  ServerProcess s("spring", {"--shutdown-timeout", "60"});
  Client c(s.port());
  ASSERT_TRUE(c.send(kGet));
  ASSERT_NE(c.read_response().find("Hello!!!"), std::string::npos);
  auto start = Clock::now();
  s.signal(SIGINT);
  EXPECT_TRUE(c.read_to_eof(scaled(2s)).has_value());
  EXPECT_EQ(s.wait(scaled(2s)), 0);
  EXPECT_LT(Clock::now() - start, scaled(2s));
}

TEST(Shutdown, DeadlineForceClosesAHalfSentRequest) {
  ServerProcess s("sanic", {"--shutdown-timeout", "0.5"});
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHo"));
  std::this_thread::sleep_for(50ms);
  auto start = Clock::now();
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait(scaled(3s)), 0);
  auto took = Clock::now() - start;
  EXPECT_GE(took, 400ms);
  EXPECT_LT(took, scaled(2s));
  EXPECT_TRUE(c.read_to_eof(1s).has_value());
}

TEST(Shutdown, SecondSignalExitsAtOnceWithNonZeroStatus) {
  ServerProcess s("sanic", {"--shutdown-timeout", "10"});
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHo"));
  std::this_thread::sleep_for(50ms);
  s.signal(SIGTERM);
  std::this_thread::sleep_for(100ms);
  s.signal(SIGTERM);
  int code = s.wait(1s);
  EXPECT_NE(code, -1) << "still running";
  EXPECT_NE(code, 0);
}

TEST(Lifecycle, ResettingClientsLeakNoDescriptors) {
  ServerProcess s("sanic", {"-w", "2"});
  ASSERT_EQ(exchange(s.port(), 1), 1);
  std::this_thread::sleep_for(100ms);
  const int baseline = s.open_fds();
  std::string big_request;
  for (int i = 0; i < 50; ++i) big_request += kGet;
  for (int batch = 0; batch < 10; ++batch) {
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 100; ++i) {
      clients.push_back(std::make_unique<Client>(s.port()));
      clients.back()->send(big_request);
    }
    for (auto& c : clients) c->reset();
  }
  // Still serving.
  EXPECT_EQ(exchange(s.port(), 3), 3);
  auto deadline = Clock::now() + 5s;
  while (s.open_fds() != baseline && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(s.open_fds(), baseline);
  EXPECT_EQ(s.stop(), 0);
}

// Over TLS: clients that reset in the middle of their pipelined requests
// (answers still being encrypted and sent) leave nothing behind.
TEST(Lifecycle, ResettingTlsClientsLeakNoDescriptors) {
  ServerProcess s("sanic", {"-w", "2", "--tls"});
  {
    Client warm(s.port(), Tls::on);
    ASSERT_TRUE(warm.send(kGet));
    ASSERT_EQ(warm.read_response().rfind("HTTP/1.1 200", 0), 0u);
  }
  std::this_thread::sleep_for(100ms);
  const int baseline = s.open_fds();
  std::string big_request;
  for (int i = 0; i < 50; ++i) big_request += kGet;
  for (int batch = 0; batch < 5; ++batch) {
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 40; ++i) {
      clients.push_back(std::make_unique<Client>(s.port(), Tls::on));
      clients.back()->send(big_request);
    }
    for (auto& c : clients) c->reset();
  }
  Client after(s.port(), Tls::on);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(after.send(kGet));
    EXPECT_EQ(after.read_response().rfind("HTTP/1.1 200", 0), 0u) << "still serving";
  }
  after.reset();
  EXPECT_TRUE(s.fds_reach(baseline, 5s))
      << s.open_fds() << " descriptors, " << baseline << " before";
  EXPECT_EQ(s.stop(), 0);
}

// Waits up to `limit` for the server to hold `fds` descriptors.
// As nginx does: when the closing request was the last byte the client
// sent, the server closes at once instead of waiting for the client's FIN.
TEST(Lifecycle, ClosesAtOnceWhenNothingIsLeftUnread) {
  ServerProcess s("sanic");
  ASSERT_EQ(exchange(s.port(), 1), 1);
  std::this_thread::sleep_for(100ms);
  const int baseline = s.open_fds();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(clients.back()->send("GET / HTTP/1.0\r\n\r\n"));
    auto answer = clients.back()->read_to_eof();
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  }
  // The clients keep their sockets open; the server holds none of them,
  // well before the 2 s it would wait for a client's FIN.
  EXPECT_TRUE(s.fds_reach(baseline, 500ms))
      << s.open_fds() << " descriptors, " << baseline << " before";
  EXPECT_EQ(s.stop(), 0);
}

// Bytes after the closing request: the server sends FIN and waits for the
// client's, so that closing with unread input does not reset the client
// before it has read the answer.
TEST(Lifecycle, WaitsForTheClientWhenInputIsLeftUnread) {
  ServerProcess s("sanic");
  ASSERT_EQ(exchange(s.port(), 1), 1);
  std::this_thread::sleep_for(100ms);
  const int baseline = s.open_fds();
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n"));
  auto answer = c.read_to_eof();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(answer->find("HTTP/1.1", 1), std::string::npos) << "one answer, then EOF";
  EXPECT_FALSE(s.fds_reach(baseline, 300ms)) << "closed without waiting";
  c.shutdown_write();
  EXPECT_TRUE(s.fds_reach(baseline, 1s)) << "the client's FIN ends the wait";
  EXPECT_EQ(s.stop(), 0);
}

TEST(Lifecycle, StartAndStopOnTheSamePortAHundredTimes) {
  int port;
  {
    ServerProcess probe("sanic");
    port = probe.port();
  }
  for (int i = 0; i < 100; ++i) {
    // Each start would fail with "address already in use" if the previous
    // process had left a listener behind.
    ServerProcess s("sanic", {"-w", "2", "-p", std::to_string(port)});
    ASSERT_EQ(s.port(), port);
    if (i % 10 == 0) {
      ASSERT_EQ(exchange(port, 1), 1);
    }
    ASSERT_EQ(s.stop(), 0) << "iteration " << i;
  }
}

}  // namespace
}  // namespace hello::test
