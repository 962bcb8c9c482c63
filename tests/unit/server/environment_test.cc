// Configuration from the environment (server/environment.h): every flag's
// variable, set to a sample value, configures what the flag with that value
// does; the flag beats the variable; PORT stands for HELLO_PORT; a bad
// value is one line naming the variable.
#include "server/environment.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/options.h"
#include "test_persona.h"

namespace hello {
namespace {

using test::kTestPersona;

// A value for every flag that differs from its default; "" for a flag
// without one (its variable is then "1").
struct Sample {
  const char* flag;
  const char* value;
};
const Sample kSamples[] = {
    {"--host", "127.0.0.1"},
    {"--port", "5050"},
    {"--json", ""},
    {"--routes", "/tmp/routes.json"},
    {"--keep-alive", ""},
    {"--workers", "3"},
    {"--fast", ""},
    {"--pin", ""},
    {"--access-log", "/tmp/access.log"},
    {"--access-log-format", "json"},
    {"--stats-interval", "2"},
    {"--stats-json", "/tmp/stats.json"},
    {"--shutdown-timeout", "3"},
    {"--max-header-bytes", "4096"},
    {"--max-body-bytes", "100"},
    {"--header-timeout", "4"},
    {"--keepalive-timeout", "7"},
    {"--max-delay", "5s"},
    {"--shape", ""},
    {"--shape-default", "delay=1ms"},
    {"--seed", "42"},
    {"--max-size", "1000"},
    {"--stall", "200ms/5s"},
    {"--send-timeout", "9"},
    {"--max-connections", "77"},
    {"--h2", ""},
    {"--h2-max-streams", "9"},
    {"--no-defer-accept", ""},
    {"--admin", "127.0.0.1:9999"},
    {"--tls", ""},
    {"--tls-cert", "cert.pem"},
    {"--tls-key", "key.pem"},
    {"--tls-key-type", "rsa2048"},
    {"--tls-write-cert", "written.pem"},
    {"--tls-min", "1.3"},
    {"--tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"},
    {"--tls-groups", "X25519"},
    {"--tls-tickets", "2"},
    {"--tls-no-resume", ""},
    {"--probe-timeout", "2.5"},
};

// Sets variables for the life of a test and removes them after.
class Environment {
 public:
  Environment& set(const std::string& name, const std::string& value) {
    setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
    return *this;
  }
  ~Environment() {
    for (const std::string& name : names_) unsetenv(name.c_str());
  }

 private:
  std::vector<std::string> names_;
};

// The configuration that `args` and then the environment give, as CLI11
// writes it (every option's value, defaults included); empty after an
// error, whose line is in `err`.
std::string configured(std::vector<std::string> args, std::string* err = nullptr,
                       Options* out = nullptr) {
  Options own;
  Options& opt = out != nullptr ? *out : own;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  args.insert(args.begin(), "hello-test");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app->parse(static_cast<int>(argv.size()), argv.data());
  testing::internal::CaptureStderr();
  bool ok = apply_environment(*app, opt);
  std::string text = testing::internal::GetCapturedStderr();
  if (err != nullptr) *err = text;
  return ok ? app->config_to_str(true, false) : "";
}

TEST(Environment, EveryFlagHasASample) {
  Options opt;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  std::set<std::string> sampled;
  for (const Sample& s : kSamples) sampled.insert(s.flag);
  for (const CLI::Option* o : app->get_options()) {
    if (o->get_lnames().empty()) continue;
    std::string flag = "--" + o->get_lnames()[0];
    if (flag == "--help" || flag == "--version" || flag == "--probe") continue;
    EXPECT_EQ(sampled.count(flag), 1u) << flag << " has no sample: add one to kSamples";
  }
}

TEST(Environment, EachVariableConfiguresWhatItsFlagDoes) {
  const std::string defaults = configured({});
  for (const Sample& s : kSamples) {
    std::string var = env_name(std::string(s.flag).substr(2));
    std::vector<std::string> args = {s.flag};
    if (*s.value != '\0') args.push_back(s.value);
    std::string by_flag = configured(args);
    std::string by_env, err;
    {
      Environment env;
      env.set(var, *s.value != '\0' ? s.value : "1");
      by_env = configured({}, &err);
    }
    EXPECT_EQ(err, "") << var;
    EXPECT_EQ(by_env, by_flag) << var;
    EXPECT_NE(by_env, defaults) << var << " changed nothing";
  }
}

TEST(Environment, NamesAreTheFlagsInCapitals) {
  EXPECT_EQ(env_name("shape-default"), "HELLO_SHAPE_DEFAULT");
  EXPECT_EQ(env_name("h2"), "HELLO_H2");
  EXPECT_EQ(env_name("tls-no-resume"), "HELLO_TLS_NO_RESUME");
}

TEST(Environment, AFlagBeatsItsVariableAndAVariableTheDefault) {
  Environment env;
  env.set("HELLO_WORKERS", "3");
  Options by_env;
  configured({}, nullptr, &by_env);
  EXPECT_EQ(by_env.workers, 3);
  Options by_flag;
  configured({"-w", "5"}, nullptr, &by_flag);
  EXPECT_EQ(by_flag.workers, 5);
  EXPECT_TRUE(by_flag.from_environment.empty());
}

TEST(Environment, PortStandsForHelloPortWhichBeatsIt) {
  Environment env;
  env.set("PORT", "5050");
  Options opt;
  configured({}, nullptr, &opt);
  EXPECT_EQ(opt.port, 5050);
  EXPECT_EQ(given_as(opt, "--port"), "PORT");
  env.set("HELLO_PORT", "5052");
  Options both;
  configured({}, nullptr, &both);
  EXPECT_EQ(both.port, 5052);
  Options flag;
  configured({"-p", "5051"}, nullptr, &flag);
  EXPECT_EQ(flag.port, 5051);
}

TEST(Environment, AnEmptyVariableIsUnset) {
  Environment env;
  env.set("HELLO_WORKERS", "").set("HELLO_ADMIN", "");
  Options opt;
  EXPECT_NE(configured({}, nullptr, &opt), "");
  EXPECT_EQ(opt.workers, 1);
  EXPECT_EQ(opt.admin, "");
}

TEST(Environment, BooleansAndLists) {
  for (const char* yes : {"1", "true", "YES", "on"}) {
    Environment env;
    env.set("HELLO_H2", yes);
    Options opt;
    configured({}, nullptr, &opt);
    EXPECT_TRUE(opt.worker.h2) << yes;
  }
  for (const char* no : {"0", "false", "No", "off"}) {
    Environment env;
    env.set("HELLO_H2", no);
    Options opt;
    configured({}, nullptr, &opt);
    EXPECT_FALSE(opt.worker.h2) << no;
  }
  Environment env;
  env.set("HELLO_STALL", "200ms/5s,500ms@3s").set("HELLO_ACCESS_LOG", "-");
  Options opt;
  std::string config = configured({}, nullptr, &opt);
  EXPECT_EQ(opt.stalls, (std::vector<std::string>{"200ms/5s", "500ms@3s"}));
  EXPECT_EQ(opt.access_log_path, "");
  EXPECT_NE(config.find("access-log=\"\""), std::string::npos) << config;
}

TEST(Environment, ABadValueIsOneLineNamingTheVariable) {
  struct Bad {
    const char* var;
    const char* value;
  };
  for (Bad bad : {Bad{"HELLO_WORKERS", "many"}, Bad{"HELLO_WORKERS", "0"}, Bad{"PORT", "70000"},
                  Bad{"HELLO_FAST", "maybe"}, Bad{"HELLO_TLS_MIN", "1.1"},
                  Bad{"HELLO_HEADER_TIMEOUT", "-1"}, Bad{"HELLO_PROBE_TIMEOUT", "x"}}) {
    Environment env;
    env.set(bad.var, bad.value);
    std::string err;
    EXPECT_EQ(configured({}, &err), "") << bad.var << "=" << bad.value;
    std::string start = std::string("hello-test: ") + bad.var + "=\"" + bad.value + "\": ";
    EXPECT_EQ(err.rfind(start, 0), 0u) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << "one line: " << err;
  }
}

TEST(Environment, ExclusiveFlagsGiveWayToTheCommandLineOrClash) {
  Environment env;
  env.set("HELLO_FAST", "1");
  Options opt;
  configured({"-w", "2"}, nullptr, &opt);
  EXPECT_FALSE(opt.fast);
  EXPECT_EQ(opt.workers, 2);
  env.set("HELLO_WORKERS", "2");
  std::string err;
  EXPECT_EQ(configured({}, &err), "");
  EXPECT_NE(err.find("HELLO_FAST=\"1\": cannot be set with HELLO_WORKERS"), std::string::npos)
      << err;
}

TEST(Environment, ATicketCountFromTheEnvironmentGivesWayToNoResume) {
  Environment env;
  env.set("HELLO_TLS_TICKETS", "3");
  Options opt;
  configured({"--tls", "--tls-no-resume"}, nullptr, &opt);
  EXPECT_TRUE(opt.tls_no_resume);
  EXPECT_EQ(opt.tls.tickets, 1);  // the variable gave way (the checks make it 0)
  Options by_env;
  configured({"--tls"}, nullptr, &by_env);
  EXPECT_EQ(by_env.tls.tickets, 3);
}

TEST(Environment, LaterChecksNameTheVariable) {
  Environment env;
  env.set("HELLO_TLS_MIN", "1.3");
  Options opt;
  configured({}, nullptr, &opt);
  EXPECT_EQ(given_as(opt, "--tls-min"), "HELLO_TLS_MIN");
  EXPECT_EQ(given_as(opt, "--tls-groups"), "--tls-groups");
}

}  // namespace
}  // namespace hello
