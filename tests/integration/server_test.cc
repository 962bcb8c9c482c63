// The binaries over real loopback sockets: flags, exits, Date refresh,
// pipelining and closes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "test_client.h"

namespace hello::test {
namespace {

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

TEST(Server, PrintsListeningLineWithTheRealPort) {
  ServerProcess s("sanic");
  EXPECT_EQ(s.banner(),
            "listening on http://127.0.0.1:" + std::to_string(s.port()) + " (1 worker; HTTP/1.1)");
  EXPECT_GT(s.port(), 0);
  EXPECT_EQ(s.stop(), 0) << "SIGTERM exits 0";
}

TEST(Server, DateIsRefreshedEverySecond) {
  ServerProcess s("tornado");
  Client c(s.port());
  std::string first, second;
  ASSERT_TRUE(c.send(kGet));
  mask_date(c.read_response(), &first);
  std::this_thread::sleep_for(2100ms);
  ASSERT_TRUE(c.send(kGet));
  mask_date(c.read_response(), &second);
  EXPECT_TRUE(is_current_http_date(first)) << first;
  EXPECT_TRUE(is_current_http_date(second, 1s)) << second;
  EXPECT_NE(first, second);
}

TEST(Server, PipelinedRequestsAnsweredInOrder) {
  ServerProcess s("sanic");
  Client c(s.port());
  // Sent in two pieces that cut the second request in half.
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\nGET /js"));
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(c.send("on HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_NE(c.read_response().find("\r\n\r\nHello!!!"), std::string::npos);
  EXPECT_NE(c.read_response().find("\r\n\r\n{\"hello\":\"world\"}"), std::string::npos);
  EXPECT_EQ(c.read_response().rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
}

TEST(Server, MalformedRequestGets400AndClose) {
  ServerProcess s("spring");
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n"));
  auto all = c.read_to_eof();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->rfind("HTTP/1.1 400 \r\n", 0), 0u) << *all;
  EXPECT_NE(all->find("Connection: close\r\n"), std::string::npos);
}

TEST(Server, HalfClosedClientStillGetsItsAnswer) {
  ServerProcess s("aiohttp");
  Client c(s.port());
  ASSERT_TRUE(c.send("GET /index HTTP/1.1\r\nHost: t\r\n\r\n"));
  c.shutdown_write();
  auto all = c.read_to_eof();
  ASSERT_TRUE(all.has_value());
  EXPECT_NE(all->find("\r\n\r\nHello World"), std::string::npos);
}

TEST(Server, JsonFlagAnswersRootWithJson) {
  ServerProcess s("sanic", {"--json"});
  Client c(s.port());
  ASSERT_TRUE(c.send(kGet));
  std::string r = c.read_response();
  EXPECT_NE(r.find("content-type: application/json\r\n\r\n{\"hello\":\"world\"}"),
            std::string::npos)
      << r;
}

TEST(Server, KeepAliveFlagKeepsFlaskOpen) {
  ServerProcess plain("flask");
  Client a(plain.port());
  ASSERT_TRUE(a.send(kGet));
  EXPECT_NE(a.read_response().find("Connection: close\r\n"), std::string::npos);
  EXPECT_TRUE(a.read_to_eof().has_value());

  ServerProcess kept("flask", {"--keep-alive"});
  Client b(kept.port());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b.send(kGet));
    std::string r = b.read_response();
    EXPECT_NE(r.find("\r\n\r\nHello!!!"), std::string::npos);
    EXPECT_EQ(r.find("Connection: close"), std::string::npos);
  }
}

// Holds a plain listening socket on an ephemeral loopback port.
class Squatter {
 public:
  Squatter() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa {};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    EXPECT_EQ(bind(fd_, reinterpret_cast<struct sockaddr*>(&sa), len), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    getsockname(fd_, reinterpret_cast<struct sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
  }
  ~Squatter() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_;
};

TEST(Server, PortInUseIsOneLineAndExit1) {
  Squatter squatter;
  std::string port = std::to_string(squatter.port());
  RunResult r = run_binary(binary_path("sanic"), {"-H", "127.0.0.1", "-p", port});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hello-sanic: cannot listen on 127.0.0.1:" + port +
                       ": address already in use (choose another with --port, or -p 0 for any "
                       "free port)\n");
}

TEST(Server, SecondServerOnTheSamePortIsRefused) {
  // SO_REUSEPORT must not let two servers silently share a port.
  ServerProcess first("sanic");
  std::string port = std::to_string(first.port());
  RunResult r = run_binary(binary_path("tornado"), {"-H", "127.0.0.1", "-p", port});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hello-tornado: cannot listen on 127.0.0.1:" + port +
                       ": address already in use (choose another with --port, or -p 0 for any "
                       "free port)\n");
}

TEST(Server, BadFlagsPrintAUsageLineAndExit2) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"-p", "70000"}, {"-p", "abc"}, {"-H", "not a host!"}, {"extra"}}) {
    RunResult r = run_binary(binary_path("sanic"), args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_NE(r.err.find("usage: hello-sanic"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Server, HelpAndVersionExit0) {
  RunResult help = run_binary(binary_path("tornado"), {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--host", "--port", "--json", "--keep-alive", "--version"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  RunResult version = run_binary(binary_path("tornado"), {"-V"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("hello-tornado ", 0), 0u) << version.out;
}

// Each binary takes its name, summary and default port from its line of
// servers/personas.txt.
TEST(Server, HelpSaysThePersonasLine) {
  std::vector<PersonaInfo> personas = read_personas();
  ASSERT_FALSE(personas.empty());
  for (const PersonaInfo& p : personas) {
    RunResult help = run_binary(binary_path(p.name), {"--help"});
    EXPECT_EQ(help.exit_code, 0) << p.name;
    EXPECT_EQ(help.out.rfind("hello-" + p.name + ": " + p.summary + "\n", 0), 0u) << help.out;
    EXPECT_NE(help.out.find("Default: " + std::to_string(p.port) + ".  Env: HELLO_PORT"),
              std::string::npos)
        << help.out;
  }
}

// Issue 34: every persona's --help is read in an 80-column terminal, its
// summary line too.
TEST(Server, EveryPersonasHelpFitsIn80Columns) {
  for (const PersonaInfo& p : read_personas()) {
    RunResult help = run_binary(binary_path(p.name), {"--help"});
    size_t start = 0;
    for (size_t end; (end = help.out.find('\n', start)) != std::string::npos; start = end + 1)
      EXPECT_LE(end - start, 80u) << p.name << ": " << help.out.substr(start, end - start);
  }
}

}  // namespace
}  // namespace hello::test
