// The binaries' configuration from the environment and their health check
// (docs/containers.md): PORT and HELLO_* as a container sets them, a bad
// value's one line and exit 2, and --probe against the admin port, healthy,
// missing and stopping.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "test_client.h"

namespace hello::test {
namespace {

// Sets one variable for the life of a test.
class Variable {
 public:
  Variable(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~Variable() { unsetenv(name_); }
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

 private:
  const char* name_;
};

std::string body_of(const std::string& r) {
  size_t at = r.find("\r\n\r\n");
  return at == std::string::npos ? "" : r.substr(at + 4);
}

TEST(Environment, PortSetsThePort) {
  int port = free_port();
  Variable v("PORT", std::to_string(port));
  ServerProcess s("sanic");
  EXPECT_EQ(s.port(), port) << s.banner();
  Client c(s.port());
  ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_EQ(body_of(c.read_response()), "Hello!!!");
}

TEST(Environment, TheFlagBeatsPort) {
  int port = free_port();
  Variable v("PORT", std::to_string(port == 65535 ? port - 1 : port + 1));
  ServerProcess s("sanic", {"-p", std::to_string(port)});
  EXPECT_EQ(s.port(), port) << s.banner();
}

TEST(Environment, VariablesReachTheServer) {
  Variable workers("HELLO_WORKERS", "2");
  Variable h2("HELLO_H2", "yes");
  ServerProcess s("tornado");
  EXPECT_NE(s.banner().find("(2 workers; HTTP/1.1, h2c)"), std::string::npos) << s.banner();
  Client c(s.port());
  ASSERT_TRUE(c.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
  // The server's SETTINGS frame: HTTP/2 is on.
  std::string frame = c.read_exactly(9);
  ASSERT_EQ(frame.size(), 9u);
  EXPECT_EQ(frame[3], 0x4) << "a SETTINGS frame";
}

TEST(Environment, ABadValueNamesItsVariableAndExits2) {
  Variable v("HELLO_MAX_CONNECTIONS", "lots");
  RunResult r = run_binary(binary_path("sanic"), {"-p", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("hello-sanic: HELLO_MAX_CONNECTIONS=\"lots\": ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

class ProbeTest : public ::testing::Test {
 protected:
  ProbeTest()
      : admin_port_(free_port()),
        admin_("127.0.0.1:" + std::to_string(admin_port_)),
        server_("sanic", {"--admin", admin_, "--header-timeout", "2"}) {}

  RunResult probe(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--probe"};
    all.insert(all.end(), args.begin(), args.end());
    return run_binary(binary_path("flask"), all);
  }

  int admin_port_;
  std::string admin_;
  ServerProcess server_;
};

TEST_F(ProbeTest, AHealthyServerIsExit0AndOneLine) {
  RunResult r = probe({"http://" + admin_ + "/readyz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello-flask: probe http://" + admin_ + "/readyz: 200 OK\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(ProbeTest, ABarePathUsesTheAdminAddressAndLoopbackForAWildcard) {
  Variable v("HELLO_ADMIN", "0.0.0.0:" + std::to_string(admin_port_));
  RunResult r = probe({"/healthz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello-flask: probe http://127.0.0.1:" + std::to_string(admin_port_) +
                       "/healthz: 200 OK\n");
}

TEST_F(ProbeTest, AnythingButA2xxIsExit1) {
  RunResult missing = probe({"http://" + admin_ + "/nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "hello-flask: probe http://" + admin_ + "/nope: 404 Not Found\n");
  RunResult refused = probe({"http://127.0.0.1:" + std::to_string(free_port()) + "/healthz"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(": Connection refused\n"), std::string::npos) << refused.err;
  RunResult no_admin = probe({"/readyz"});
  EXPECT_EQ(no_admin.exit_code, 1);
  EXPECT_NE(no_admin.err.find("needs the admin address"), std::string::npos) << no_admin.err;
  RunResult https = probe({"https://" + admin_ + "/"});
  EXPECT_EQ(https.exit_code, 1);
}

TEST_F(ProbeTest, AStoppingServerIsUnready) {
  Client slow(server_.port());
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\n"));  // holds the stop open
  ASSERT_EQ(probe({"http://" + admin_ + "/readyz"}).exit_code, 0);
  server_.signal(SIGTERM);
  RunResult r;
  for (int i = 0; i < 50; ++i) {
    r = probe({"http://" + admin_ + "/readyz"});
    if (r.exit_code == 1) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hello-flask: probe http://" + admin_ + "/readyz: 503 Service Unavailable\n");
  EXPECT_EQ(probe({"http://" + admin_ + "/healthz"}).exit_code, 0) << "alive until it exits";
  ASSERT_TRUE(slow.send("Host: a\r\n\r\n"));
  EXPECT_EQ(body_of(slow.read_response()), "Hello!!!");
}

}  // namespace
}  // namespace hello::test
