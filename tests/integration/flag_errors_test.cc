// Flags that do not go together, or that name what cannot be used: the
// binary says which in one line and exits before serving (2 for a usage
// error, 1 for an unhealthy --probe).
#include <gtest/gtest.h>

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
  EXPECT_EQ(r.err, "cannot listen on " + taken + " (--admin): address already in use\n");
  EXPECT_EQ(first.stop(), 0);
}

TEST(FlagErrors, AProbeAddressWithoutAPortIsUnhealthyAndSaysSo) {
  RunResult r = run_binary(binary_path("sanic"), {"--probe", "http://127.0.0.1/healthz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "hello-sanic: probe http://127.0.0.1/healthz: bad address \"127.0.0.1\": HOST:PORT "
            "expected\n");
}

}  // namespace
}  // namespace hello::test
