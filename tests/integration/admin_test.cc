// The admin port (--admin, docs/observability.md): its routes, a scrape
// that promtool accepts, counts that agree with what was sent and with the
// exit summary, readiness that turns at SIGTERM while answers still leave,
// and the persona port's limits for its own requests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

// One request to the admin port; the whole answer (it closes).
std::string admin(int port, std::string_view method, std::string_view target) {
  Client c(port);
  c.send(std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: a\r\n\r\n");
  return c.read_to_eof(2s).value_or("");
}

int status_of(const std::string& r) {
  return r.size() >= 12 ? std::stoi(r.substr(9, 3)) : -1;
}

std::string body_of(const std::string& r) {
  size_t at = r.find("\r\n\r\n");
  return at == std::string::npos ? "" : r.substr(at + 4);
}

// The sum of every sample of `family` in an exposition.
uint64_t sum_of(const std::string& metrics, const std::string& family) {
  std::regex sample("^" + family + "\\{[^}]*\\} ([0-9]+)$", std::regex::multiline);
  uint64_t sum = 0;
  for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), sample);
       it != std::sregex_iterator(); ++it)
    sum += std::stoull((*it)[1]);
  return sum;
}

class AdminTest : public ::testing::Test {
 protected:
  AdminTest()
      : admin_port_(free_port()),
        json_(fs::temp_directory_path() / ("admin-" + std::to_string(getpid()) + ".json")),
        server_("sanic", {"-w", "2", "--admin", "127.0.0.1:" + std::to_string(admin_port_),
                          "--stats-json", json_.string(), "--header-timeout", "0.3"}) {}
  ~AdminTest() override { fs::remove(json_); }

  int admin_port_;
  fs::path json_;
  ServerProcess server_;
};

TEST_F(AdminTest, RoutesAnswer) {
  std::string r = admin(admin_port_, "GET", "/healthz");
  EXPECT_EQ(status_of(r), 200);
  EXPECT_EQ(body_of(r), "ok\n");
  EXPECT_EQ(body_of(admin(admin_port_, "GET", "/readyz")), "ready\n");
  r = admin(admin_port_, "GET", "/metrics");
  EXPECT_EQ(status_of(r), 200);
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(r.find("hello_build_info{version=\""), std::string::npos);
  EXPECT_NE(r.find("\nhello_ready 1\n"), std::string::npos);
  EXPECT_NE(r.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(r.find("hello_event_loop_idle_seconds_total{worker=\"1\"}"), std::string::npos);
  EXPECT_EQ(status_of(admin(admin_port_, "GET", "/nope")), 404);
  EXPECT_EQ(status_of(admin(admin_port_, "POST", "/metrics")), 405);
  EXPECT_EQ(status_of(admin(admin_port_, "GET", "/stats/reset")), 405);
}

// /metrics answers OpenMetrics to a scraper whose Accept header asks for it,
// in one header or several, however its bytes arrive, and text 0.0.4
// otherwise; HEAD has the GET's head (docs/observability.md).
TEST_F(AdminTest, MetricsNegotiatesOpenMetrics) {
  auto scrape = [&](std::initializer_list<std::string_view> pieces) {
    Client c(admin_port_);
    for (std::string_view piece : pieces) {
      EXPECT_TRUE(c.send(piece));
      std::this_thread::sleep_for(5ms);  // so that the server reads each piece on its own
    }
    return c.read_to_eof(2s).value_or("");
  };
  constexpr std::string_view kOpenMetrics =
      "\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n";
  constexpr std::string_view kText =
      "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n";
  std::string r =
      scrape({"GET /metrics HTTP/1.1\r\nHost: a\r\nAccept: application/openmetrics-text;"
              "version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n\r\n"});
  EXPECT_EQ(status_of(r), 200);
  EXPECT_NE(r.find(kOpenMetrics), std::string::npos) << r.substr(0, 200);
  EXPECT_TRUE(body_of(r).ends_with("\n# EOF\n"));
  EXPECT_NE(r.find("\n# TYPE hello_http_requests counter\n"), std::string::npos);
  EXPECT_NE(r.find("\nhello_http_requests_created{worker=\"1\",code=\"5xx\"} "), std::string::npos);
  // The field name and its value split across reads; two Accept headers,
  // read as one list.
  r = scrape({"GET /metrics HTTP/1.1\r\nHost: a\r\nAcc", "ept: applic",
              "ation/openmetrics-text\r\nACCEPT: text/plain;q=0.1\r\n\r\n"});
  EXPECT_NE(r.find(kOpenMetrics), std::string::npos) << r.substr(0, 200);
  for (std::string_view headers : {"", "Accept: text/plain\r\n", "Accept: */*\r\n",
                                   "Accept: application/openmetrics-text;q=0\r\n",
                                   "Accept: application/openmetrics-text;q=0.5, text/plain\r\n",
                                   "X-Accept: application/openmetrics-text\r\nAccept-Encoding: "
                                   "application/openmetrics-text\r\n"}) {
    r = scrape({"GET /metrics HTTP/1.1\r\nHost: a\r\n", headers, "\r\n"});
    EXPECT_NE(r.find(kText), std::string::npos) << headers << r.substr(0, 200);
    EXPECT_EQ(r.find("# EOF"), std::string::npos) << headers;
    EXPECT_EQ(r.find("_created"), std::string::npos) << headers;
  }
  // HEAD: the head of a GET, without its body.
  r = scrape({"HEAD /metrics HTTP/1.1\r\nHost: a\r\nAccept: application/openmetrics-text\r\n\r\n"});
  EXPECT_EQ(status_of(r), 200);
  EXPECT_NE(r.find(kOpenMetrics), std::string::npos) << r;
  EXPECT_EQ(body_of(r), "");
  std::smatch length;
  ASSERT_TRUE(std::regex_search(r, length, std::regex("\r\nContent-Length: ([0-9]+)\r\n"))) << r;
  EXPECT_GT(std::stoul(length[1]), 10000u);
}

TEST_F(AdminTest, PromtoolAcceptsTheScrape) {
  std::string metrics = body_of(admin(admin_port_, "GET", "/metrics"));
  ASSERT_FALSE(metrics.empty());
  fs::path file = fs::temp_directory_path() / ("scrape-" + std::to_string(getpid()) + ".txt");
  std::ofstream(file) << metrics;
  // promtool comes with Debian's prometheus package (scripts/setup).
  std::string command = "/usr/bin/promtool check metrics < " + file.string() + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  fs::remove(file);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "") << "promtool found problems";
}

TEST_F(AdminTest, CountsAgreeWithWhatWasSentAndWithTheSummary) {
  constexpr int kRequests = 500;
  constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  constexpr std::string_view kMissing = "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n";
  Client c(server_.port());
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(c.send(kGet));
    ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
  }
  ASSERT_TRUE(c.send(kMissing));
  ASSERT_EQ(status_of(c.read_response()), 404);
  // The worker times an answer just after it hands the bytes to the kernel
  // (Connection::after_feed: send_output(), then note_service()), so this
  // client may read the 404 a moment before its service time is counted:
  // wait, bounded, until the histogram holds it, then check every count.
  std::string metrics;
  for (int i = 0; i < 200; ++i) {
    metrics = body_of(admin(admin_port_, "GET", "/metrics"));
    if (sum_of(metrics, "hello_http_request_duration_seconds_count") >= kRequests + 1u) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(sum_of(metrics, "hello_http_requests_total"), kRequests + 1u);
  EXPECT_EQ(sum_of(metrics, "hello_connections_open"), 1u);
  std::string stats = body_of(admin(admin_port_, "GET", "/stats"));
  EXPECT_NE(stats.find("\"total\": {\"connections\": 1, \"requests\": 501,"), std::string::npos)
      << stats;
  // Every answer has its service time, in /stats and in the histogram.
  EXPECT_NE(stats.find("\"service_time_us\": {\"count\": 501, "), std::string::npos) << stats;
  EXPECT_EQ(sum_of(metrics, "hello_http_request_duration_seconds_count"), kRequests + 1u);
  // A reset starts a new window for /stats; the counters never go back.
  EXPECT_EQ(status_of(admin(admin_port_, "POST", "/stats/reset")), 200);
  stats = body_of(admin(admin_port_, "GET", "/stats"));
  EXPECT_NE(stats.find("\"total\": {\"connections\": 0, \"requests\": 0,"), std::string::npos)
      << stats;
  metrics = body_of(admin(admin_port_, "GET", "/metrics"));
  EXPECT_EQ(sum_of(metrics, "hello_http_requests_total"), kRequests + 1u);
  EXPECT_EQ(sum_of(metrics, "hello_http_request_bytes_total"),
            kRequests * kGet.size() + kMissing.size());
  EXPECT_EQ(server_.stop(), 0);
  std::string json = read_file(json_.string());
  EXPECT_NE(json.find("\"total\": {\"connections\": 1, \"requests\": 501,"), std::string::npos)
      << json;
  std::string summary = server_.rest_of_stderr();
  EXPECT_NE(summary.find("total: 1 connections, 501 requests"), std::string::npos) << summary;
  EXPECT_NE(summary.find("total: 501 requests, p50 "), std::string::npos) << summary;
  EXPECT_NE(json.find("\"service_time_us\": {\"count\": 501, "), std::string::npos) << json;
}

// The exit summary's service-time block times answers, its requests line
// counts requests: a 400 to a malformed request and a 408 at the header
// timeout are answers but not requests, and a line says so.
TEST_F(AdminTest, SummarySaysWhatTheServiceTimeCountsBeyondTheRequests) {
  {
    Client c(server_.port());
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      ASSERT_EQ(body_of(c.read_response()), "Hello!!!");
    }
  }
  {
    Client c(server_.port());  // malformed: 400, and the connection ends
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost a\r\n\r\n"));
    ASSERT_EQ(status_of(c.read_to_eof().value_or("")), 400);
  }
  {
    Client c(server_.port());  // the header timeout (0.3 s): 408
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\n"));
    ASSERT_EQ(status_of(c.read_to_eof().value_or("")), 408);
  }
  std::string metrics;
  for (int i = 0; i < 200; ++i) {
    metrics = body_of(admin(admin_port_, "GET", "/metrics"));
    if (sum_of(metrics, "hello_http_request_duration_seconds_count") >= 5) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(sum_of(metrics, "hello_http_request_duration_seconds_count"), 5u);
  EXPECT_EQ(server_.stop(), 0);
  std::string summary = server_.rest_of_stderr();
  EXPECT_NE(summary.find("total: 3 connections, 3 requests,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("    total: 5 requests, p50 "), std::string::npos) << summary;
  EXPECT_NE(summary.find("\n    (2 answers timed beyond the 3 requests: answers to malformed "
                         "requests and 408s at the header timeout are timed, not counted as "
                         "requests)\n"),
            std::string::npos)
      << summary;
  std::string json = read_file(json_.string());
  EXPECT_NE(json.find("\"total\": {\"connections\": 3, \"requests\": 3,"), std::string::npos)
      << json;
}

TEST_F(AdminTest, ClosedConnectionsAreCountedByReason) {
  {
    Client c(server_.port());  // the client closes
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    c.read_response();
  }
  {
    Client c(server_.port());  // the answer ends it
    ASSERT_TRUE(c.send("GET / HTTP/1.0\r\n\r\n"));
    c.read_to_eof();
  }
  {
    Client c(server_.port());  // the header timeout (0.3 s) ends it
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\n"));
    c.read_to_eof();
  }
  std::string metrics;
  for (int i = 0; i < 50; ++i) {
    metrics = body_of(admin(admin_port_, "GET", "/metrics"));
    if (sum_of(metrics, "hello_connections_closed_total") == 3) break;
    std::this_thread::sleep_for(20ms);
  }
  auto closed = [&](const std::string& reason) {
    std::regex sample("^hello_connections_closed_total\\{worker=\"[0-9]+\",reason=\"" + reason +
                          "\"\\} ([0-9]+)$",
                      std::regex::multiline);
    uint64_t n = 0;
    for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), sample);
         it != std::sregex_iterator(); ++it)
      n += std::stoull((*it)[1]);
    return n;
  };
  EXPECT_EQ(closed("client"), 1u) << metrics;
  EXPECT_EQ(closed("answered"), 1u);
  EXPECT_EQ(closed("header_timeout"), 1u);
  EXPECT_EQ(sum_of(metrics, "hello_connections_closed_total"), 3u);
  // Three answers (200, 200 and the 408), each timed.
  EXPECT_EQ(sum_of(metrics, "hello_http_requests_total"), 3u);
  EXPECT_EQ(sum_of(metrics, "hello_http_request_duration_seconds_count"), 3u);
}

TEST_F(AdminTest, ReadinessTurnsAtSigtermWhileAnswersStillLeave) {
  Client slow(server_.port());
  // A request half sent: the stop waits for it (up to the header timeout).
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\n"));
  EXPECT_EQ(body_of(admin(admin_port_, "GET", "/readyz")), "ready\n");
  server_.signal(SIGTERM);
  // Polled until it turns (bounded in count and time), and it must turn
  // while the half-sent request is still held: not answered, not closed.
  std::string r;
  auto until = std::chrono::steady_clock::now() + scaled(2s);
  for (int i = 0; i < 1000 && std::chrono::steady_clock::now() < until; ++i) {
    r = admin(admin_port_, "GET", "/readyz");
    if (status_of(r) == 503) break;
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(status_of(r), 503);
  EXPECT_EQ(body_of(r), "stopping\n");
  struct pollfd held {
    slow.fd(), POLLIN, 0
  };
  EXPECT_EQ(poll(&held, 1, 0), 0) << "readiness turned only after the in-flight request ended";
  EXPECT_NE(admin(admin_port_, "GET", "/metrics").find("\nhello_ready 0\n"), std::string::npos)
      << "the gauge says what /readyz says";
  EXPECT_EQ(status_of(admin(admin_port_, "GET", "/healthz")), 200) << "alive until exit";
  ASSERT_TRUE(slow.send("Host: a\r\n\r\n"));
  EXPECT_EQ(body_of(slow.read_response()), "Hello!!!") << "in-flight requests are answered";
  EXPECT_EQ(server_.wait(5s), 0);
}

TEST_F(AdminTest, TheAdminPortHasThePersonaPortsLimits) {
  // Malformed: 400 and close.
  {
    Client c(admin_port_);
    c.send("GARBAGE\r\n\r\n");
    EXPECT_EQ(status_of(c.read_to_eof(2s).value_or("")), 400);
  }
  // Oversized header: 431.
  {
    Client c(admin_port_);
    c.send("GET /metrics HTTP/1.1\r\nHost: a\r\nX: " + std::string(20000, 'a') + "\r\n\r\n");
    EXPECT_EQ(status_of(c.read_to_eof(2s).value_or("")), 431);
  }
  // Slowloris: 408 at the header timeout (0.3 s here).
  {
    Client c(admin_port_);
    c.send("GET /metrics HTTP/1.1\r\nHo");
    EXPECT_EQ(status_of(c.read_to_eof(2s).value_or("")), 408);
  }
  // A body: 413.
  {
    Client c(admin_port_);
    c.send("POST /stats/reset HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n");
    EXPECT_EQ(status_of(c.read_to_eof(2s).value_or("")), 413);
  }
  EXPECT_EQ(status_of(admin(admin_port_, "GET", "/healthz")), 200) << "still serving";
}

TEST(Admin, ABadAddressIsOneLineAndExit2) {
  for (const char* bad : {"9100", "localhost:", ":9100", "127.0.0.1:99999", "[::1:9100"}) {
    RunResult r = run_binary(binary_path("sanic"), {"-p", "0", "--admin", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--admin: bad address"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

}  // namespace
}  // namespace hello::test
