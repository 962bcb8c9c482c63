// Flags that do not go together, or that name what cannot be used: the
// binary says which in one line and exits before serving (2 for a usage
// error, 1 for an unhealthy --probe).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "test_client.h"

namespace hello::test {
namespace {

std::string usage_line(const std::string& text) {
  return "hello-sanic: " + text + " (usage: hello-sanic [OPTIONS], see --help)\n";
}

RunResult sanic(std::vector<std::string> args) {
  args.insert(args.begin(), {"-H", "127.0.0.1", "-p", "0"});
  return run_binary(binary_path("sanic"), args);
}

TEST(FlagErrors, ATlsKeyNeedsItsCertificateAndACertificateItsKey) {
  RunResult key_alone = sanic({"--tls-key", "/k.pem"});
  EXPECT_EQ(key_alone.exit_code, 2);
  EXPECT_EQ(key_alone.err, usage_line("--tls-key needs --tls-cert"));
  RunResult cert_alone = sanic({"--tls-cert", "/c.pem"});
  EXPECT_EQ(cert_alone.exit_code, 2);
  EXPECT_EQ(cert_alone.err, usage_line("--tls-cert needs --tls-key"));
}

TEST(FlagErrors, AKeyTypeIsOnlyForACertificateMadeAtStart) {
  RunResult r = sanic({"--tls-cert", "/c.pem", "--tls-key", "/k.pem", "--tls-key-type", "rsa2048"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            usage_line("--tls-key-type is for a certificate made at start, not with --tls-cert"));
}

TEST(FlagErrors, EveryTlsSettingNeedsTls) {
  const std::vector<std::vector<std::string>> settings = {
      {"--tls-key-type", "rsa2048"},
      {"--tls-write-cert", "/c.pem"},
      {"--tls-min", "1.3"},
      {"--tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256"},
      {"--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"},
      {"--tls-groups", "X25519"},
      {"--tls-tickets", "2"},
      {"--tls-no-resume"}};
  for (const std::vector<std::string>& flag : settings) {
    RunResult r = sanic(flag);
    EXPECT_EQ(r.exit_code, 2) << flag[0];
    EXPECT_EQ(r.err, usage_line(flag[0] + " needs --tls"));
  }
}

TEST(FlagErrors, ACertificateThatCannotBeWrittenStopsTheStart) {
  RunResult r = sanic({"--tls", "--tls-write-cert", "/nonexistent-dir/cert.pem"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-sanic: --tls-write-cert /nonexistent-dir/cert.pem: No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(FlagErrors, ACipherListOpenSslRefusesStopsTheStart) {
  RunResult r = sanic({"--tls", "--tls-ciphers", "NO-SUCH-CIPHER"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-sanic: --tls-ciphers 'NO-SUCH-CIPHER': OpenSSL takes none of it (no cipher "
            "match)\n");
}

TEST(FlagErrors, TicketsAreFromZeroToFourAndNoResumeIsNoCount) {
  RunResult five = sanic({"--tls", "--tls-tickets", "5"});
  EXPECT_EQ(five.exit_code, 2);
  EXPECT_EQ(five.err, usage_line("--tls-tickets must be from 0 to 4 (got 5)"));
  RunResult both = sanic({"--tls", "--tls-no-resume", "--tls-tickets", "2"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, usage_line("--tls-tickets excludes --tls-no-resume"));
}

TEST(FlagErrors, TheFloorCannotBeShaped) {
  for (const std::string flag : {"--shape", "--shape-default"}) {
    std::vector<std::string> args = {"-H", "127.0.0.1", "-p", "0", flag};
    if (flag == "--shape-default") args.push_back("status=503");
    RunResult r = run_binary(binary_path("floor"), args);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_EQ(r.err, "hello-floor: " + flag +
                         ": hello-floor parses nothing and answers every request alike\n");
  }
}

TEST(FlagErrors, AnAdminAddressInUseStopsTheStart) {
  ServerProcess first("sanic");
  std::string taken = "127.0.0.1:" + std::to_string(first.port());
  RunResult r = sanic({"--admin", taken});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "hello-sanic: cannot listen on " + taken + " (--admin): address already in use\n");
  EXPECT_EQ(first.stop(), 0);
}

TEST(FlagErrors, AProbeAddressWithoutAPortIsUnhealthyAndSaysSo) {
  RunResult r = run_binary(binary_path("sanic"), {"--probe", "http://127.0.0.1/healthz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "hello-sanic: probe http://127.0.0.1/healthz: bad address \"127.0.0.1\": HOST:PORT "
            "expected\n");
}

// --- Every flag that takes a value, and its variable, with a bad value ---
//
// The flags are read from --help, which lists every option of the parser
// (tests/unit/server/help_test.cc checks that); a flag whose value kind has
// no bad values below fails the test, so a new flag cannot be forgotten.

// A flag as --help shows it: its value kind ("SECONDS"; empty for a switch)
// and its variable.
struct HelpFlag {
  std::string flag, kind, var;
};

std::vector<HelpFlag> flags_of_help() {
  RunResult help = run_binary(binary_path("sanic"), {"--help"});
  std::vector<HelpFlag> flags;
  std::regex option(R"(^  (?:-\w, )?(--[\w-]+)(?: (\S+)|\[=(\S+)\])?$)");
  std::regex env(R"(Env: (\w+))");
  size_t start = 0;
  for (size_t end; (end = help.out.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = help.out.substr(start, end - start);
    std::smatch m;
    if (std::regex_match(line, m, option))
      flags.push_back({m[1], m[2].matched ? m[2].str() : m[3].str(), ""});
    else if (!flags.empty() && std::regex_search(line, m, env))
      flags.back().var = m[1];
  }
  return flags;
}

// Bad values by the kind --help names, each a mistake a user makes: a word
// for a number, a sign, a bound crossed, a number too long for any type,
// a unit left out, a path that cannot be.
const std::map<std::string, std::vector<std::string>> kBadValues = {
    {"PORT", {"abc", "", "-1", "65536", "99999999999999999999", "1e400"}},
    {"N", {"two", "-1", "1.5", "99999999999999999999", "1e400"}},
    {"SECONDS", {"abc", "-1", "1e400", "1e308", "nan", "100000"}},
    {"BYTES", {"lots", "-1", "99999999999999999999", "1e400"}},
    {"DURATION", {"5x", "10", "-1s"}},
    {"SPEC", {"5", "1s/0s"}},
    // No name a resolver would be asked about: these fail in getaddrinfo itself.
    {"ADDRESS", {"", "bad host", "::1::1"}},
    {"HOST:PORT", {"nonsense", "127.0.0.1:99999"}},
    {"PATH", {"/nonexistent-dir/x"}},
    {"[=PATH]", {"/nonexistent-dir/x"}},
    {"FILE", {"/nonexistent-dir/x.pem"}},
    {"FILE.json", {"/nonexistent-dir/x.json"}},
    {"FORMAT", {"xml"}},
    {"TYPE", {"dsa"}},
    {"VERSION", {"1.1"}},
    {"LIST", {"NO-SUCH-THING"}},
    {"PARAMS", {"delay=abc"}},
    // --probe's answer is its exit status (1 when unhealthy), not a usage error.
    {"URL", {}},
};

// What a flag needs beside it for its value to be read at all.
const std::map<std::string, std::vector<std::string>> kCompanions = {
    {"--tls-cert", {"--tls-key", "/nonexistent-dir/key.pem"}},
    {"--tls-key-type", {"--tls"}},
    {"--tls-write-cert", {"--tls"}},
    {"--tls-min", {"--tls"}},
    {"--tls-ciphers", {"--tls"}},
    {"--tls-ciphersuites", {"--tls"}},
    {"--tls-groups", {"--tls"}},
    {"--tls-tickets", {"--tls"}},
    {"--h2-max-streams", {"--h2"}},
    {"--access-log-format", {"--access-log"}},
};

// The rules of acceptance 2 of issue 34 for one error, as a failure message
// (empty when every rule holds).
std::string judge(const RunResult& r, const std::string& named) {
  const std::string& e = r.err;
  if (r.exit_code != 2) return "exit " + std::to_string(r.exit_code) + ", not 2";
  if (e.empty() || e.find('\n') != e.size() - 1) return "not exactly one line";
  if (e.rfind("hello-sanic: ", 0) != 0) return "not prefixed with hello-sanic: ";
  if (e.find(named) == std::string::npos) return "does not name " + named;
  if (e.size() - 1 >= 160) return "160 characters or more";
  if (e.find("inf") != std::string::npos || e.find("e+308") != std::string::npos)
    return "says inf or e+308";
  if (std::regex_search(e, std::regex("[0-9]{13}"))) return "a run of more than 12 digits";
  return "";
}

// Sets one variable for the life of a check.
class Variable {
 public:
  Variable(const std::string& name, const std::string& value) : name_(name) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~Variable() { unsetenv(name_.c_str()); }
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

 private:
  std::string name_;
};

// Runs hello-sanic with `args`, the flag's companions and, unless the flag
// is one of them, a loopback address and port 0 (a bad value that were
// taken would then serve nowhere that matters, and time out).
RunResult run_bad(const HelpFlag& f, std::vector<std::string> args) {
  if (auto it = kCompanions.find(f.flag); it != kCompanions.end())
    args.insert(args.end(), it->second.begin(), it->second.end());
  if (f.flag != "--port") args.insert(args.end(), {"-p", "0"});
  if (f.flag != "--host") args.insert(args.end(), {"-H", "127.0.0.1"});
  return run_binary(binary_path("sanic"), args, 3s);
}

TEST(FlagErrors, EveryValueFlagAndItsVariableSayABadValueInOneLine) {
  std::vector<HelpFlag> flags = flags_of_help();
  ASSERT_GT(flags.size(), 30u) << "--help lists the options";
  int checked = 0;
  for (const HelpFlag& f : flags) {
    if (f.kind.empty()) continue;  // a switch: its variable is checked below
    auto values = kBadValues.find(f.kind);
    ASSERT_NE(values, kBadValues.end())
        << f.flag << " takes " << f.kind << ": add its bad values to kBadValues";
    for (const std::string& value : values->second) {
      RunResult by_flag = run_bad(f, {f.flag, value});
      EXPECT_EQ(judge(by_flag, f.flag), "") << f.flag << " '" << value << "': " << by_flag.err;
      if (f.var.empty()) continue;
      if (value.empty()) continue;  // an empty variable counts as unset
      Variable v(f.var, value);
      RunResult by_env = run_bad(f, {});
      EXPECT_EQ(judge(by_env, f.var), "") << f.var << "='" << value << "': " << by_env.err;
      checked += 2;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(FlagErrors, EverySwitchsVariableSaysABadValueInOneLine) {
  for (const HelpFlag& f : flags_of_help()) {
    if (!f.kind.empty() || f.var.empty()) continue;
    Variable v(f.var, "maybe");
    RunResult r = run_bad(f, {});
    EXPECT_EQ(judge(r, f.var), "") << f.var << "=maybe: " << r.err;
  }
}

TEST(FlagErrors, PortStandsForHelloPortAndSaysSo) {
  Variable v("PORT", "abc");
  RunResult r = run_binary(binary_path("sanic"), {"-H", "127.0.0.1"}, 3s);
  EXPECT_EQ(judge(r, "PORT=\"abc\""), "") << r.err;
}

TEST(FlagErrors, ANumberIsSaidInPlainWords) {
  RunResult r = sanic({"--header-timeout", "0"});
  EXPECT_EQ(r.err, usage_line("--header-timeout must be more than 0 seconds (got 0)"));
  r = run_binary(binary_path("sanic"), {"--port", "abc"});
  EXPECT_EQ(r.err, usage_line("--port: 'abc' is not a number"));
  r = sanic({"--workers", "two"});
  EXPECT_EQ(r.err, usage_line("--workers: 'two' is not a number"));
  r = sanic({"--max-body-bytes", "2000000000000"});
  EXPECT_EQ(r.err, usage_line("--max-body-bytes must be from 0 to 1 TiB (got 200000000000...)"));
  r = sanic({"--tls", "--tls-min", "1.1"});
  EXPECT_EQ(r.err, usage_line("--tls-min must be 1.2 or 1.3 (got 1.1)"));
  r = run_binary(binary_path("sanic"), {"-H", "127.0.0.1", "--port"});
  EXPECT_EQ(r.err, usage_line("--port needs a value (PORT)"));
  r = run_binary(binary_path("sanic"), {"-H", "127.0.0.1", "-p", "0", "--port", "1"});
  EXPECT_EQ(r.err, usage_line("--port is given twice"));
}

}  // namespace
}  // namespace hello::test
