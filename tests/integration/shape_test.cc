// Shaped answers over real sockets (docs/shaping.md): status and size mixes
// that follow their percentages and agree with X-Hello-Shape-Decision,
// seeded decisions that repeat, exact sized bodies, pipelined order,
// resets, closes, drips, 400s that keep the connection, and bad flags; and
// over TLS, sizes and drips through TLS, `close` with close_notify and
// `reset` without.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kAlphabet =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";

std::string get(std::string_view target, std::string_view headers = {}) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(headers) + "\r\n";
}

int status_of(const std::string& response) {
  return response.size() >= 12 ? std::stoi(response.substr(9, 3)) : -1;
}

std::string body_of(const std::string& response) {
  return response.substr(response.find("\r\n\r\n") + 4);
}

// The value of header `name` (given in lower case), or "" if absent.
std::string header_of(const std::string& response, std::string_view name) {
  std::string lower = response.substr(0, response.find("\r\n\r\n") + 2);
  for (char& c : lower) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  size_t at = lower.find("\r\n" + std::string(name) + ": ");
  if (at == std::string::npos) return {};
  at += name.size() + 4;
  return response.substr(at, response.find("\r\n", at) - at);
}

// `n` requests for `target` over one connection, pipelined `batch` at a
// time; the responses in order.
std::vector<std::string> ask(int port, std::string_view target, int n, int batch = 100) {
  Client c(port);
  std::vector<std::string> responses;
  std::string request = get(target);
  for (int sent = 0; sent < n; sent += batch) {
    int k = std::min(batch, n - sent);
    std::string burst;
    for (int i = 0; i < k; ++i) burst += request;
    EXPECT_TRUE(c.send(burst));
    for (int i = 0; i < k; ++i) {
      responses.push_back(c.read_response(false, 5s));
      if (status_of(responses.back()) < 0) {
        ADD_FAILURE() << "no response " << responses.size();
        return responses;
      }
    }
  }
  return responses;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A `drip=1s&size=10000` answer as it is read, from the request's send at
// t0: 100 pieces of 100 bytes, the k-th due k * 10 ms after the head
// (docs/architecture.md), so by t0 + T no more than T / 10 ms of them.
struct DripRead {
  Clock::time_point t0 = Clock::now();
  std::string got;
  int reads = 0;
  double head_ms = -1;
  size_t total = 0;
  size_t early = 0;  // the body's size at the first read ahead of its moment
  double early_ms = 0;

  void take(const char* buf, size_t n) {
    got.append(buf, n);
    ++reads;
    double ms = ms_since(t0);
    size_t end = got.find("\r\n\r\n");
    if (head_ms < 0 && end != std::string::npos) {
      head_ms = ms;
      total = end + 4 + 10000;
    }
    size_t body = total > 0 ? got.size() - (total - 10000) : 0;
    if (early == 0 && body > 100 * static_cast<size_t>(ms / 10)) {
      early = body;
      early_ms = ms;
    }
  }
  bool whole() const { return total > 0 && got.size() >= total; }
  // Long enough for the drip's second in any build (test_time.h).
  bool waiting() const { return !whole() && Clock::now() - t0 < 1s + scaled(2s); }
};

// What every drip of 10,000 bytes over 1 s must show once read.
void expect_a_drip(const DripRead& d) {
  double ms = ms_since(d.t0);
  ASSERT_EQ(d.got.size(), d.total);
  EXPECT_LT(d.head_ms, scaled_ms(50)) << "the head goes at once";
  EXPECT_EQ(d.early, 0u) << "body bytes ahead of their moment, " << d.early_ms << " ms in";
  EXPECT_GE(ms, 1000);
  EXPECT_LE(ms, 1000 + scaled_ms(100));
  EXPECT_GE(d.reads, 10) << "in pieces";
  std::string body = body_of(d.got);
  for (size_t i = 0; i < body.size(); ++i) ASSERT_EQ(body[i], kAlphabet[i % 64]) << i;
}

TEST(Shape, AStatusMixFollowsItsPercentagesAndTheDecisionsSayWhatWasDone) {
  ServerProcess s("sanic", {"--shape", "--seed", "7"});
  std::vector<std::string> responses = ask(s.port(), "/?status=503:20,404:5&delay=1ms:10", 10000);
  ASSERT_EQ(responses.size(), 10000u);
  std::map<int, int> statuses;
  int delayed = 0;
  for (const std::string& r : responses) {
    int status = status_of(r);
    ++statuses[status];
    std::string decision = header_of(r, "x-hello-shape-decision");
    bool slow = decision.starts_with("delay=1ms ");
    ASSERT_TRUE(slow || decision.starts_with("delay=0 ")) << decision;
    delayed += slow;
    ASSERT_EQ(decision.substr(decision.find(' ') + 1), "status=" + std::to_string(status));
  }
  EXPECT_NEAR(statuses[503] / 100.0, 20, 1.5);
  EXPECT_NEAR(statuses[404] / 100.0, 5, 1);
  EXPECT_EQ(statuses[503] + statuses[404] + statuses[200], 10000);
  EXPECT_NEAR(delayed / 100.0, 10, 1.5);
}

TEST(Shape, TheSameSeedGivesTheSameDecisionsOverOneConnection) {
  std::vector<std::string> runs[3];
  for (int run = 0; run < 3; ++run) {
    ServerProcess s("sanic", {"--shape", "--seed", run < 2 ? "7" : "8"});
    for (const std::string& r : ask(s.port(), "/?status=503:20,404:5&delay=100us:10", 2000))
      runs[run].push_back(header_of(r, "x-hello-shape-decision"));
  }
  ASSERT_EQ(runs[0].size(), 2000u);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_NE(runs[0], runs[2]) << "another seed, other decisions";
}

TEST(Shape, ASizedBodyIsExactlyThatManyBytesOfThePattern) {
  ServerProcess s("sanic", {"--shape"});
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/?size=1048576")));
  std::string r = c.read_response(false, 5s);
  EXPECT_EQ(header_of(r, "content-length"), "1048576");
  EXPECT_EQ(header_of(r, "content-type"), "text/plain; charset=utf-8");
  std::string body = body_of(r);
  ASSERT_EQ(body.size(), 1048576u);
  for (size_t i = 0; i < body.size(); ++i) ASSERT_EQ(body[i], kAlphabet[i % 64]) << i;
  // The connection goes on.
  ASSERT_TRUE(c.send(get("/")));
  EXPECT_EQ(body_of(c.read_response()), "Hello!!!");
}

TEST(Shape, ASizeMixFollowsItsPercentages) {
  ServerProcess s("sanic", {"--shape", "--seed", "3"});
  std::map<size_t, int> sizes;
  for (const std::string& r : ask(s.port(), "/?size=1024:10,512:5", 10000)) {
    std::string body = body_of(r);
    ASSERT_EQ(header_of(r, "x-hello-shape-decision"), "size=" + std::to_string(body.size()));
    ++sizes[body.size()];
  }
  EXPECT_NEAR(sizes[1024] / 100.0, 10, 1.5);
  EXPECT_NEAR(sizes[512] / 100.0, 5, 1);
  EXPECT_EQ(sizes[1024] + sizes[512] + sizes[8], 10000) << "the rest is the route's own body";
}

TEST(Shape, PipelinedSizesAndDelaysComeBackInOrder) {
  ServerProcess s("sanic", {"--shape"});
  Client c(s.port());
  std::string burst;
  const char* kShapes[] = {
      "size=70000&delay=20ms", "delay=1ms",          "size=3",    "", "size=200000",
      "delay=5ms&size=10",     "drip=30ms&size=100", "status=503"};
  int n = 0;
  for (int round = 0; round < 3; ++round)
    for (const char* shape : kShapes)
      burst += get("/?" + std::string(shape) + "&header=X-N:" + std::to_string(n++));
  ASSERT_TRUE(c.send(burst));
  for (int i = 0; i < n; ++i) {
    std::string r = c.read_response(false, 5s);
    ASSERT_EQ(header_of(r, "x-n"), std::to_string(i)) << r.substr(0, 300);
    std::string length = header_of(r, "content-length");
    ASSERT_EQ(body_of(r).size(), std::stoul(length));
  }
}

// The 5xx that shaping injected are counted apart from the server's own
// (hello_shaped_responses_total{kind="5xx"}), so an alert can leave them out.
TEST(Shape, Shaped5xxAreCountedApart) {
  ServerProcess s("sanic", {"--shape", "--stats-json", "/dev/stdout"});
  Client c(s.port());
  for (const char* q : {"/?status=503", "/?status=500", "/?status=599", "/?status=200",
                        "/?status=404", "/?delay=1ms", "/"}) {
    ASSERT_TRUE(c.send(get(q)));
    ASSERT_FALSE(c.read_response(false, 5s).empty()) << q;
  }
  EXPECT_EQ(s.stop(), 0);
  std::string out = s.all_of_stdout();
  EXPECT_NE(out.find("\"5xx\": 3}, \"parse_errors\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"shaping\": {\"shaped\": 6, \"resets\": 0, \"5xx\": 3, \"errors\": 0}"),
            std::string::npos)
      << out;
}

TEST(Shape, ResetEndsTheConnectionWithARstAndNoBytes) {
  ServerProcess s("sanic", {"--shape", "--stats-json", "/dev/stdout"});
  for (int i = 0; i < 5; ++i) {
    Client c(s.port());
    ASSERT_TRUE(c.send(get("/?reset=100")));
    struct pollfd p {
      c.fd(), POLLIN, 0
    };
    ASSERT_EQ(poll(&p, 1, 2000), 1);
    char buf[64];
    errno = 0;
    ssize_t got = recv(c.fd(), buf, sizeof buf, 0);
    EXPECT_EQ(got, -1);
    EXPECT_EQ(errno, ECONNRESET);
  }
  EXPECT_EQ(s.stop(), 0);
  EXPECT_NE(s.all_of_stdout().find("\"resets\": 5"), std::string::npos) << s.all_of_stdout();
}

TEST(Shape, CloseEndsTheConnectionAfterAboutItsShareOfAnswers) {
  ServerProcess s("sanic", {"--shape", "--seed", "11"});
  int answers = 0, closes = 0;
  while (answers < 2000) {
    Client c(s.port());
    for (int i = 0; i < 100 && answers < 2000; ++i) {
      ASSERT_TRUE(c.send(get("/?close=30")));
      std::string r = c.read_response();
      ASSERT_EQ(status_of(r), 200);
      ++answers;
      std::string decision = header_of(r, "x-hello-shape-decision");
      if (header_of(r, "connection") == "close") {
        ++closes;
        ASSERT_EQ(decision, "close=1");
        EXPECT_EQ(c.read_to_eof(), std::optional<std::string>("")) << "closed after it";
        break;
      }
      ASSERT_EQ(decision, "close=0");
    }
  }
  EXPECT_NEAR(closes / 20.0, 30, 3);
}

TEST(Shape, ADripSpreadsTheBodyOverItsDuration) {
  ServerProcess s("sanic", {"--shape"});
  Client c(s.port());
  DripRead d;
  ASSERT_TRUE(c.send(get("/?drip=1s&size=10000")));
  while (d.waiting()) {
    struct pollfd p {
      c.fd(), POLLIN, 0
    };
    if (poll(&p, 1, 100) != 1) continue;
    char buf[65536];
    ssize_t n = recv(c.fd(), buf, sizeof buf, 0);
    if (n <= 0) break;
    d.take(buf, static_cast<size_t>(n));
  }
  expect_a_drip(d);
}

TEST(ShapeTls, ASizedBodyArrivesWholeThroughTls) {
  ServerProcess s("sanic", {"--shape", "--tls"});
  Client c(s.port(), Tls::on);
  ASSERT_TRUE(c.send(get("/?size=1048576")));
  std::string r = c.read_response(false, 5s);
  EXPECT_EQ(header_of(r, "content-length"), "1048576");
  std::string body = body_of(r);
  ASSERT_EQ(body.size(), 1048576u);
  for (size_t i = 0; i < body.size(); ++i) ASSERT_EQ(body[i], kAlphabet[i % 64]) << i;
  ASSERT_TRUE(c.send(get("/")));
  EXPECT_EQ(body_of(c.read_response()), "Hello!!!");
  EXPECT_EQ(s.stop(), 0);
}

// Read with SSL_read itself, so that each piece of the drip is counted as
// it comes out of TLS.
TEST(ShapeTls, ADripSpreadsTheBodyOverItsDurationThroughTls) {
  ServerProcess s("sanic", {"--shape", "--tls"});
  Client c(s.port(), Tls::on);
  DripRead d;
  ASSERT_TRUE(c.send(get("/?drip=1s&size=10000")));
  while (d.waiting()) {
    struct pollfd p {
      c.fd(), POLLIN, 0
    };
    if (SSL_pending(c.ssl()) == 0 && poll(&p, 1, 100) != 1) continue;
    char buf[65536];
    size_t n = 0;
    if (SSL_read_ex(c.ssl(), buf, sizeof buf, &n) != 1) {
      ERR_clear_error();
      break;
    }
    d.take(buf, n);
  }
  expect_a_drip(d);
  EXPECT_EQ(s.stop(), 0);
}

TEST(ShapeTls, CloseEndsWithCloseNotifyThenTheFin) {
  ServerProcess s("sanic", {"--shape", "--tls"});
  for (int i = 0; i < 5; ++i) {
    Client c(s.port(), Tls::on);
    ASSERT_TRUE(c.send(get("/?close=true")));
    std::string r = c.read_response();
    ASSERT_EQ(status_of(r), 200) << r;
    EXPECT_EQ(header_of(r, "connection"), "close");
    EXPECT_EQ(header_of(r, "x-hello-shape-decision"), "close=1");
    EXPECT_EQ(c.read_to_eof(), std::optional<std::string>("")) << "closed after it";
    EXPECT_TRUE(c.got_close_notify()) << "a FIN without close_notify";
  }
  EXPECT_EQ(s.stop(), 0);
}

TEST(ShapeTls, ResetIsATcpResetWithoutCloseNotify) {
  ServerProcess s("sanic", {"--shape", "--tls", "--stats-json", "/dev/stdout"});
  for (int i = 0; i < 5; ++i) {
    Client c(s.port(), Tls::on);
    ASSERT_TRUE(c.send(get("/?reset=100")));
    struct pollfd p {
      c.fd(), POLLIN, 0
    };
    ASSERT_EQ(poll(&p, 1, 2000), 1);
    char buf[64];
    size_t n = 0;
    errno = 0;
    EXPECT_NE(SSL_read_ex(c.ssl(), buf, sizeof buf, &n), 1) << "bytes came: " << n;
    int err = SSL_get_error(c.ssl(), 0);
    int saved_errno = errno;
    ERR_clear_error();
    EXPECT_EQ(err, SSL_ERROR_SYSCALL);
    EXPECT_EQ(saved_errno, ECONNRESET) << strerror(saved_errno);
    EXPECT_FALSE(c.got_close_notify());
  }
  EXPECT_EQ(s.stop(), 0);
  EXPECT_NE(s.all_of_stdout().find("\"resets\": 5"), std::string::npos) << s.all_of_stdout();
}

TEST(Shape, ABadParameterIs400WithOneLineAndTheConnectionStaysUsable) {
  ServerProcess s("sanic", {"--shape"});
  Client c(s.port());
  const char* kBad[] = {"delay=abc",
                        "delay=-1ms",
                        "status=99",
                        "size=1e30",
                        "status=503:60,404:50",
                        "header=Bad%20Name:v",
                        "header=X-A:a%0D%0AB:c",
                        "delay=61s",
                        "size=16777217"};
  for (const char* bad : kBad) {
    ASSERT_TRUE(c.send(get("/?" + std::string(bad))));
    std::string r = c.read_response();
    EXPECT_EQ(status_of(r), 400) << bad;
    std::string body = body_of(r);
    ASSERT_FALSE(body.empty());
    EXPECT_EQ(body.find('\n'), body.size() - 1) << "one line: " << body;
    EXPECT_EQ(body.find(std::string(bad).substr(0, std::string(bad).find('='))), 0u) << body;
    ASSERT_TRUE(c.send(get("/")));
    EXPECT_EQ(body_of(c.read_response()), "Hello!!!") << "after " << bad;
  }
  // The same in the header.
  ASSERT_TRUE(c.send(get("/", "X-Hello-Shape: status=1000\r\n")));
  EXPECT_EQ(body_of(c.read_response()), "status=1000: not a status from 200 to 599\n");
}

TEST(Shape, EveryPersonaShapesInItsOwnLayout) {
  int frameworks = 0;
  for (const PersonaInfo& p : read_personas()) {
    if (p.kind != "framework") continue;
    ++frameworks;
    ServerProcess s(p.name, {"--shape"});
    Client c(s.port());
    // Every persona has /json (Spring's is chunked: a shaped one has a length).
    ASSERT_TRUE(c.send(get("/json?status=503&size=5&header=X-A:b")));
    std::string r = c.read_response();
    EXPECT_EQ(status_of(r), 503) << p.name << ": " << r;
    EXPECT_EQ(body_of(r), "01234") << p.name;
    EXPECT_EQ(header_of(r, "x-a"), "b") << p.name;
    EXPECT_EQ(header_of(r, "x-hello-shape-decision"), "status=503 size=5") << p.name;
  }
  EXPECT_GT(frameworks, 0) << "no framework persona in servers/personas.txt";
}

TEST(Shape, OffByDefaultAQueryChangesNothing) {
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/?status=503&size=5", "X-Hello-Shape: status=500\r\n")));
  std::string r = c.read_response();
  EXPECT_EQ(status_of(r), 200);
  EXPECT_EQ(body_of(r), "Hello!!!");
  EXPECT_EQ(header_of(r, "x-hello-shape-decision"), "");
}

TEST(Shape, TheDefaultAndARoutesShapeApplyToRequestsWithoutParameters) {
  fs::path routes =
      fs::temp_directory_path() / ("shape-routes-" + std::to_string(getpid()) + ".json");
  std::ofstream(routes) << R"({"routes": [{"method": "GET", "path": "/teapot", "body": "t", )"
                        << R"("shape": "status=418"}]})";
  ServerProcess s("sanic", {"--routes", routes.string(), "--shape-default", "status=503"});
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/")));
  EXPECT_EQ(status_of(c.read_response()), 503);
  ASSERT_TRUE(c.send(get("/teapot")));
  EXPECT_EQ(status_of(c.read_response()), 418);
  ASSERT_TRUE(c.send(get("/teapot?status=201")));
  EXPECT_EQ(status_of(c.read_response()), 201) << "the request's own parameters first";
  fs::remove(routes);
}

TEST(Shape, BadFlagsAreOneLineAndExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  fs::path routes = fs::temp_directory_path() / ("bad-shape-" + std::to_string(getpid()) + ".json");
  std::ofstream(routes) << R"({"routes": [{"method": "GET", "path": "/x", "body": "t", )"
                        << R"("shape": "delay=abc"}]})";
  const Case kCases[] = {
      {{"--shape-default", "delay=abc"}, "--shape-default: delay=abc: not a number"},
      {{"--shape-default", "status=503:101"}, "--shape-default: status=503:101"},
      {{"--shape-default", "delay=2s", "--max-delay", "1s"}, "delay=2s: over --max-delay"},
      {{"--seed", "abc"}, "--seed"},
      {{"--seed", "-1"}, "--seed"},
      {{"--max-size", "-1"}, "--max-size"},
      {{"--routes", routes.string()}, "bad \"shape\": delay=abc: not a number"},
  };
  for (const Case& k : kCases) {
    std::vector<std::string> args = k.args;
    args.insert(args.end(), {"-p", "0", "-H", "127.0.0.1"});
    RunResult r = run_binary(binary_path("sanic"), args);
    EXPECT_EQ(r.exit_code, 2) << k.says;
    EXPECT_NE(r.err.find(k.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  fs::remove(routes);
}

}  // namespace
}  // namespace hello::test
