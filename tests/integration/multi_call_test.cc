// hello-family, every persona in one binary (servers/multi_call.cc.in):
// run under each persona's name, through a link as in the OCI image, or
// with the name as its first argument, it is that persona's binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_client.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

std::string multi_call_binary() {
  return (fs::path(binary_path("sanic")).parent_path() / "hello-family").string();
}

TEST(MultiCall, EachLinkIsThatPersonasBinary) {
  fs::path dir = temp_path("multi-call");
  fs::create_directories(dir);
  for (const PersonaInfo& p : read_personas()) {
    fs::path link = dir / ("hello-" + p.name);
    fs::create_symlink(multi_call_binary(), link);
    RunResult own = run_binary(binary_path(p.name), {"--help"});
    RunResult linked = run_binary(link.string(), {"--help"});
    EXPECT_EQ(linked.exit_code, 0) << p.name;
    EXPECT_EQ(linked.out, own.out) << p.name;
    EXPECT_NE(linked.out.find("hello-" + p.name + ": "), std::string::npos) << linked.out;
    RunResult named = run_binary(multi_call_binary(), {p.name, "--version"});
    EXPECT_EQ(named.exit_code, 0);
    EXPECT_EQ(named.out, run_binary(binary_path(p.name), {"--version"}).out);
  }
  fs::remove_all(dir);
}

TEST(MultiCall, AnotherNameIsOneLineAndExit2) {
  RunResult r = run_binary(multi_call_binary(), {"django"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("hello-family: run as hello-NAME", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1);
  RunResult help = run_binary(multi_call_binary(), {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find(" sanic "), std::string::npos) << help.out;
}

TEST(MultiCall, NamedFirstItsHelpIsThePersonasOwn) {
  for (const PersonaInfo& p : read_personas()) {
    RunResult named = run_binary(multi_call_binary(), {p.name, "--help"});
    EXPECT_EQ(named.exit_code, 0) << p.name;
    EXPECT_EQ(named.out, run_binary(binary_path(p.name), {"--help"}).out) << p.name;
  }
}

TEST(MultiCall, AnUnknownPersonaIsNamedAndThePersonasListed) {
  RunResult r = run_binary(multi_call_binary(), {"nosuch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown persona 'nosuch' (one of:"), std::string::npos) << r.err;
  for (const PersonaInfo& p : read_personas())
    EXPECT_NE(r.err.find(" " + p.name), std::string::npos) << p.name << ": " << r.err;
  EXPECT_LT(r.err.size(), 160u) << r.err;
  RunResult flag = run_binary(multi_call_binary(), {"-p", "5001"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("a persona first, not '-p'"), std::string::npos) << flag.err;
}

}  // namespace
}  // namespace hello::test
