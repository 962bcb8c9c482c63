// One case per row of the hardening table (docs/hardening.md), over a real
// socket: the status the server answers and whether it then closes; every
// row over plain TCP and again over TLS (hello-sanic --tls, the row's name
// with "_tls"): the bytes inside TLS get the same answers.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <thread>
#include <utility>

#include "test_client.h"

namespace hello::test {
namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string name;
  std::string request;
  int status;  // of the last response
  bool closes;
  std::vector<std::string> flags = {};
  int responses = 1;
  Tls tls = Tls::off;
};

// Names the row in test output instead of dumping its bytes.
void PrintTo(const Row& row, std::ostream* os) {
  *os << row.name;
}

std::string repeat(std::string_view s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

std::string headers(int count) {
  std::string r;
  for (int i = 0; i < count; ++i) r += "X-H" + std::to_string(i) + ": v\r\n";
  return r;
}

int status_of(const std::string& response) {
  if (response.size() < 12 || response.rfind("HTTP/1.", 0) != 0) return 0;
  return std::stoi(response.substr(9, 3));
}

// The rows of smuggling, the request line, the version, the limits of the
// head and the body, and keep-alive.
std::vector<Row> head_rows() {
  const std::string get = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  return {
      {"ClTe",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       400, true},
      {"TeCl",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: "
       "5\r\n\r\n0\r\n\r\n",
       400, true},
      {"DuplicateContentLength",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400, true},
      {"InvalidContentLength", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\nx", 400,
       true},
      {"TransferEncodingGzip", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
       true},
      {"TransferEncodingIdentity",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 501, true},
      {"TransferEncodingXchunked",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", 501, true},
      {"InvalidMethod", "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400, true},
      {"SpaceBeforeColon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, true},
      {"ControlCharacter", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n", 400, true},
      {"BareCr", "GET / HTTP/1.1\rHost: a\r\n\r\n", 400, true},
      {"ObsFold", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", 400, true},
      {"MissingHost", "GET / HTTP/1.1\r\n\r\n", 400, true},
      {"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, true},
      {"Http20", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505, true},
      {"Http09", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505, true},
      {"Http30", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505, true},
      {"Http12", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 200, false},
      {"Http19", "GET / HTTP/1.9\r\nHost: a\r\n\r\n", 200, false},
      {"Http15Close", "GET / HTTP/1.5\r\nHost: a\r\nConnection: close\r\n\r\n", 200, true},
      {"Http12WithoutHost", "GET / HTTP/1.2\r\n\r\n", 400, true},
      {"MalformedVersion", "GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400, true},
      {"MalformedHigherVersion", "GET / HTTP/1.2x\r\nHost: a\r\n\r\n", 505, true},
      {"RequestLineTooLong",
       "GET /" + std::string(2000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n",
       414,
       true,
       {"--max-header-bytes", "1024"}},
      {"HeadTooLarge",
       "GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(2000, 'a') + "\r\n\r\n",
       431,
       true,
       {"--max-header-bytes", "1024"}},
      {"TooManyHeaders", "GET / HTTP/1.1\r\nHost: a\r\n" + headers(101) + "\r\n", 431, true},
      {"BodyTooLarge",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n",
       413,
       true,
       {"--max-body-bytes", "100"}},
      {"ChunkedBodyTooLarge",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" +
           std::string(101, 'x') + "\r\n0\r\n\r\n",
       413,
       true,
       {"--max-body-bytes", "100"}},
      {"BodyWithinLimitIsSkipped",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x') + get,
       200,
       false,
       {"--max-body-bytes", "100"},
       2},
      {"UnknownExpect", "GET / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\n\r\n", 417, false},
      {"Head", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 200, false},
      {"RequestAfterConnectionClose",
       "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + get, 200, true},
      {"Http10", "GET / HTTP/1.0\r\n\r\n", 200, true},
      {"Http10KeepAlive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200, false},
      {"Pipelined", get + get + get, 200, false, {}, 3},
  };
}

// The rows of chunked bodies and their extensions, field syntax, the
// Transfer-Encoding list, Host and the request target.
std::vector<Row> framing_and_target_rows() {
  const std::string get = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  return {
      // No chunk data follows: the answer must not wait for it.
      {"ChunkSizeOverTheLimit",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n", 413,
       true},
      {"ChunksOverTheLimitTogether",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" +
           std::string(64, 'x') + "\r\n40\r\n",
       413,
       true,
       {"--max-body-bytes", "100"}},
      // No end of the size line comes: the answer must not wait for it.
      {"ChunkExtensionTooLong",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;a=" +
           std::string(1100, 'b'),
       413,
       true,
       {"--max-header-bytes", "1024"}},
      {"ChunkExtensionsWithinTheLimit",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;a=" +
           std::string(900, 'b') + "\r\nx\r\n0;c\r\n\r\n" + get,
       200,
       false,
       {"--max-header-bytes", "1024"},
       2},
      // Valid (RFC 9112 section 7.1.1), but refused by llhttp 8.1.
      {"ChunkExtensionAfterATokenValue",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
       "chunked\r\n\r\n1;a=b;c=d\r\nx\r\n0\r\n\r\n",
       400, true},
      {"ChunkExtensionWithASpace",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1; a=b\r\nx\r\n0\r\n\r\n",
       400, true},
      {"EmptyFieldName", "GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", 400, true},
      // No chunk data follows: the answer must not wait for it.
      {"EmptyFieldValues", "GET / HTTP/1.1\r\nHost: a\r\nX-A:\r\nX-B: \r\n\r\n", 200, false},
      {"TransferEncodingIdentityChunked",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n", 501,
       true},
      {"TransferEncodingGzipChunked",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501,
       true},
      {"TransferEncodingOnTwoLines",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       501, true},
      {"HostWithASpace", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, true},
      {"HostWithASlash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, true},
      {"EmptyHost", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400, true},
      {"EmptyHostBeforeAPort", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400, true},
      {"AbsoluteForm", "GET http://x/ HTTP/1.1\r\nHost: a\r\n\r\n", 200, false},
      {"AbsoluteFormWithoutPath", "GET HTTPS://x?q=1 HTTP/1.1\r\nHost: a\r\n\r\n", 200, false},
      {"Fragment", "GET /#x HTTP/1.1\r\nHost: a\r\n\r\n", 400, true},
      {"FragmentAfterAQuery", "GET /?q=1#x HTTP/1.1\r\nHost: a\r\n\r\n", 400, true},
      {"FragmentInAbsoluteForm", "GET http://x/#x HTTP/1.1\r\nHost: a\r\n\r\n", 400, true},
  };
}

std::vector<Row> rows() {
  std::vector<Row> all = head_rows();
  for (Row& row : framing_and_target_rows()) all.push_back(std::move(row));
  return all;
}

// Every row over plain TCP, then over TLS.
std::vector<Row> rows_over_both() {
  std::vector<Row> all = rows();
  for (Row row : rows()) {
    row.name += "_tls";
    row.tls = Tls::on;
    all.push_back(row);
  }
  return all;
}

// The row's server: its flags, and --tls over TLS.
std::vector<std::string> server_flags(const Row& row) {
  std::vector<std::string> flags = row.flags;
  if (row.tls == Tls::on) flags.push_back("--tls");
  return flags;
}

// Blocks SIGPIPE in this thread while it lives, and takes any that came:
// over TLS the client writes with write(2), which has no MSG_NOSIGNAL, to
// a server that may already have answered and closed.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
  }
  ~NoSigpipe() {
    struct timespec now = {0, 0};
    while (sigtimedwait(&pipe_, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_;
  sigset_t saved_;
};

class HardeningTest : public ::testing::TestWithParam<Row> {};

TEST_P(HardeningTest, AnswersAndClosesAsTheTableSays) {
  const Row& row = GetParam();
  ServerProcess s("sanic", server_flags(row));
  Client c(s.port(), row.tls);
  ASSERT_TRUE(c.send(row.request));
  bool head = row.request.rfind("HEAD", 0) == 0;
  std::string response = c.read_response(head);
  // Pipelined rows: the last answer counts; all must be there.
  for (int i = 1; i < row.responses; ++i) response = c.read_response();
  EXPECT_EQ(status_of(response), row.status) << response;
  if (row.status >= 400 && row.closes) {
    EXPECT_NE(response.find("connection: close\r\n"), std::string::npos) << response;
  }
  if (head) {
    EXPECT_NE(response.find("content-length: 8\r\n"), std::string::npos);
    EXPECT_EQ(response.find("Hello!!!"), std::string::npos) << "HEAD got a body";
  }
  auto rest = c.read_to_eof(row.closes ? 2000ms : 300ms);
  EXPECT_EQ(rest.has_value(), row.closes);
  if (rest) {
    EXPECT_EQ(*rest, "") << "answered after the close";
  }
  // Over TLS a close is said inside TLS first, whatever the answer was.
  if (row.tls == Tls::on && row.closes) {
    EXPECT_TRUE(c.got_close_notify()) << "EOF without close_notify";
  }
}

INSTANTIATE_TEST_SUITE_P(Table, HardeningTest, ::testing::ValuesIn(rows_over_both()),
                         [](const auto& info) { return info.param.name; });

// The same rows sent a byte at a time, each byte its own read: the answer
// must not depend on where the reads split the request.
class HardeningBytewiseTest : public ::testing::TestWithParam<Row> {};

TEST_P(HardeningBytewiseTest, AnswersAsWhenSentWhole) {
  const Row& row = GetParam();
  ServerProcess s("sanic", server_flags(row));
  Client c(s.port(), row.tls);
  // Over TLS each byte is its own record (one SSL_write each).
  NoSigpipe no_sigpipe;
  for (char ch : row.request) {
    // Once the server has answered and closed, the rest may be refused.
    if (!c.send(std::string_view(&ch, 1))) break;
    std::this_thread::sleep_for(100us);
  }
  bool head = row.request.rfind("HEAD", 0) == 0;
  std::string response = c.read_response(head);
  for (int i = 1; i < row.responses; ++i) response = c.read_response();
  EXPECT_EQ(status_of(response), row.status) << response;
  auto rest = c.read_to_eof(row.closes ? 3000ms : 300ms);
  EXPECT_EQ(rest.has_value(), row.closes);
}

INSTANTIATE_TEST_SUITE_P(Table, HardeningBytewiseTest, ::testing::ValuesIn(rows_over_both()),
                         [](const auto& info) { return info.param.name; });

// The personas that answer in the request's version say HTTP/1.1 to a
// higher minor version, which they answer as HTTP/1.1 (RFC 9110 section 2.5).
TEST(Hardening, EchoedVersionOfAHigherMinorIsHttp11) {
  for (const char* persona : {"gunicorn", "aiohttp"}) {
    ServerProcess s(persona);
    Client c(s.port());
    ASSERT_TRUE(c.send("GET /json HTTP/1.3\r\nHost: a\r\n\r\n"));
    std::string response = c.read_response();
    EXPECT_EQ(response.rfind("HTTP/1.1 200 ", 0), 0u) << persona << ": " << response;
  }
}

TEST(Hardening, ExpectContinueGetsAnInterimAnswerFirst) {
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send(
      "POST /json HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(c.read_exactly(25), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.send("hello"));
  EXPECT_EQ(status_of(c.read_response()), 405);
  EXPECT_FALSE(c.read_to_eof(300ms).has_value()) << "closed";
}

TEST(Hardening, PipelinedRequestsSentOneByteAtATime) {
  ServerProcess s("tornado");
  Client c(s.port());
  std::string pipeline = repeat("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 3);
  for (char ch : pipeline) {
    ASSERT_TRUE(c.send(std::string_view(&ch, 1)));
    std::this_thread::sleep_for(1ms);
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(status_of(c.read_response()), 200);
}

TEST(Hardening, SlowlorisGets408AtTheHeaderDeadline) {
  ServerProcess s("sanic", {"--header-timeout", "1"});
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\nX-"));
  auto start = Clock::now();
  auto all = c.read_to_eof(4s);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(status_of(*all), 408) << *all;
  EXPECT_GE(Clock::now() - start, 900ms);
}

TEST(Hardening, IdleKeepAliveClosesAtTheIdleDeadline) {
  ServerProcess s("spring", {"--keepalive-timeout", "1"});
  Client c(s.port());
  // Tomcat announces its timeout only to an HTTP/1.0 client that keeps alive.
  ASSERT_TRUE(c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  std::string r = c.read_response();
  EXPECT_NE(r.find("Keep-Alive: timeout=1\r\n"), std::string::npos) << r;
  auto start = Clock::now();
  auto rest = c.read_to_eof(4s);
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(*rest, "");
  EXPECT_GE(Clock::now() - start, 900ms);
}

TEST(Hardening, HalfClosedClientGetsItsAnswer) {
  ServerProcess s("sanic");
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  c.shutdown_write();
  auto all = c.read_to_eof();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(status_of(*all), 200);
}

TEST(Hardening, ClientThatNeverReadsIsClosedAtTheSendDeadlineWhileOthersAreServed) {
  ServerProcess s("sanic", {"--send-timeout", "1"});
  long rss_before = proc_status_kib(s.pid(), "VmRSS");
  ASSERT_GT(rss_before, 0) << "the server's VmRSS could not be read";
  Client hog(s.port());
  // 100,000 pipelined requests (2.7 MB) whose answers are never read.
  std::string batch = repeat("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1000);
  std::thread writer([&] {
    auto until = Clock::now() + 5s;
    for (int i = 0; i < 100 && Clock::now() < until; ++i)
      if (!hog.send(batch)) break;
  });
  std::this_thread::sleep_for(300ms);
  long rss_during = proc_status_kib(s.pid(), "VmRSS");
  Client other(s.port());
  ASSERT_TRUE(other.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_EQ(status_of(other.read_response()), 200);
  // The send deadline (1 s) plus the once-a-second check, with slack.
  std::this_thread::sleep_for(3s);
  writer.join();
  // Closed with unread data in its buffers, the server's socket sent a reset:
  // draining what reached us ends in ECONNRESET or EOF, never in "wait".
  char buf[65536];
  ssize_t n;
  int rounds = 0;
  while ((n = recv(hog.fd(), buf, sizeof buf, MSG_DONTWAIT)) > 0 && ++rounds < 10000) {
  }
  EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << "still open: " << strerror(errno);
  EXPECT_GT(rss_during, 0) << "the server's VmRSS could not be read";
  EXPECT_LT(rss_during - rss_before, 16 * 1024) << "KiB of RSS growth";
  EXPECT_EQ(s.stop(), 0);
}

TEST(Hardening, OutOfDescriptorsShedsWithoutSpinningAndRecovers) {
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit low = saved;
  low.rlim_cur = 64;
  // The child inherits the limit; the test process gets its own back at once.
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::unique_ptr<ServerProcess> s;
  try {
    // Two workers: each has its own reserve descriptor, and either can take
    // the one the other frees, which is when libuv alone would spin.
    s = std::make_unique<ServerProcess>("sanic", std::vector<std::string>{"-w", "2"});
  } catch (...) {
  }
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(s);

  auto cpu_ticks = [&] {
    std::string stat = read_file("/proc/" + std::to_string(s->pid()) + "/stat");
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::string field;
    long ticks = 0;
    for (int i = 3; i <= 15 && in >> field; ++i)
      if (i == 14 || i == 15) ticks += std::stol(field);
    return ticks;
  };
  {
    std::vector<std::unique_ptr<Client>> flood;
    for (int i = 0; i < 200; ++i) flood.push_back(std::make_unique<Client>(s->port()));
    std::this_thread::sleep_for(200ms);
    long before = cpu_ticks();
    std::this_thread::sleep_for(1s);
    // Spinning on accept would burn about 100 ticks a second.
    EXPECT_LT(cpu_ticks() - before, 30) << "spinning while out of descriptors";
  }
  // The flood is gone: new clients are served again.
  std::this_thread::sleep_for(200ms);
  Client c(s->port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_EQ(status_of(c.read_response(false, 3s)), 200);
  EXPECT_EQ(s->stop(), 0);
}

TEST(Hardening, MaxConnectionsClosesTheExcessAtOnce) {
  ServerProcess s("sanic", {"--max-connections", "2"});
  Client a(s.port()), b(s.port());
  ASSERT_TRUE(a.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_EQ(status_of(a.read_response()), 200);
  ASSERT_TRUE(b.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_EQ(status_of(b.read_response()), 200);
  Client third(s.port());
  auto r = third.read_to_eof(2s);
  ASSERT_TRUE(r.has_value()) << "third connection left open";
  EXPECT_EQ(*r, "");
  EXPECT_EQ(s.stop(), 0);
  EXPECT_NE(s.rest_of_stderr().find("1 connections rejected"), std::string::npos);
}

}  // namespace
}  // namespace hello::test
