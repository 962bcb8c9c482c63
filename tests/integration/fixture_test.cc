// Walks tests/fixtures/personas: every NAME/ROUTE.CASE.request becomes a test
// case that sends those bytes to hello-NAME and expects the .response bytes
// (Date value aside, which must be a current IMF-fixdate) and the .after
// state, over plain TCP and again over TLS (hello-NAME --tls): the bytes
// inside TLS are the same. A new fixture file is a new test case; no code
// changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "test_client.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

struct FixtureCase {
  std::string persona;
  std::string base;  // path without the extension
  std::string name;  // test name: persona_route_case, and _tls over TLS
  Tls tls = Tls::off;
};

// Names the case in test output instead of dumping its bytes.
void PrintTo(const FixtureCase& c, std::ostream* os) {
  *os << c.base;
}

std::vector<FixtureCase> load_cases() {
  std::vector<FixtureCase> cases;
  for (const auto& dir : fs::directory_iterator(HELLO_FIXTURE_DIR)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(dir.path())) {
      if (file.path().extension() != ".request") continue;
      FixtureCase c;
      c.persona = dir.path().filename();
      c.base = (file.path().parent_path() / file.path().stem()).string();
      c.name = c.persona + "_" + file.path().stem().string();
      std::replace_if(
          c.name.begin(), c.name.end(), [](char ch) { return !isalnum(ch); }, '_');
      cases.push_back(c);
      c.name += "_tls";
      c.tls = Tls::on;
      cases.push_back(c);
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const FixtureCase& a, const FixtureCase& b) { return a.name < b.name; });
  return cases;
}

// One server per persona and transport, started on first use and shared by its cases.
ServerProcess& server_for(const std::string& persona, Tls tls) {
  static std::map<std::pair<std::string, Tls>, std::unique_ptr<ServerProcess>> servers;
  auto& s = servers[{persona, tls}];
  if (!s)
    s = std::make_unique<ServerProcess>(
        persona, tls == Tls::on ? std::vector<std::string>{"--tls"} : std::vector<std::string>{});
  return *s;
}

class FixtureTest : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(FixtureTest, AnswersLikeTheFramework) {
  const FixtureCase& c = GetParam();
  std::string request = read_file(c.base + ".request");
  std::string expected = read_file(c.base + ".response");
  std::string after = read_file(c.base + ".after");
  after.erase(after.find_last_not_of("\r\n \t") + 1);
  ASSERT_FALSE(request.empty());
  ASSERT_FALSE(expected.empty());
  ASSERT_TRUE(after == "open" || after == "close") << after;

  Client client(server_for(c.persona, c.tls).port(), c.tls);
  ASSERT_TRUE(client.send(request));
  // Date values are always 29 bytes, so the response is exactly as long as the fixture.
  std::string got = client.read_exactly(expected.size());
  std::string got_date, expected_date;
  EXPECT_EQ(mask_date(got, &got_date), mask_date(expected, &expected_date));
  if (!expected_date.empty()) {
    EXPECT_TRUE(is_current_http_date(got_date)) << got_date;
  }

  if (after == "close") {
    auto rest = client.read_to_eof();
    ASSERT_TRUE(rest.has_value()) << "connection left open";
    EXPECT_EQ(*rest, "") << "bytes after the response";
  } else {
    // Still open: the same request on the same connection is answered again.
    ASSERT_TRUE(client.send(request));
    EXPECT_EQ(mask_date(client.read_exactly(expected.size())), mask_date(expected));
  }
}

INSTANTIATE_TEST_SUITE_P(Personas, FixtureTest, ::testing::ValuesIn(load_cases()),
                         [](const auto& info) { return info.param.name; });

// Every framework persona of servers/personas.txt is checked against its
// framework; hello-floor answers like none.
TEST(FixtureFiles, EveryPersonaHasCases) {
  std::map<std::string, int> per_persona;
  for (const FixtureCase& c : load_cases())
    if (c.tls == Tls::off) ++per_persona[c.persona];
  std::vector<PersonaInfo> personas = read_personas();
  ASSERT_FALSE(personas.empty());
  for (const PersonaInfo& p : personas) {
    if (p.kind == "framework") {
      EXPECT_GT(per_persona[p.name], 0) << p.name;
    } else {
      EXPECT_EQ(per_persona[p.name], 0) << p.name;
    }
  }
}

TEST(FixtureFiles, EveryFolderIsAPersona) {
  std::set<std::string> names;
  for (const PersonaInfo& p : read_personas()) names.insert(p.name);
  for (const FixtureCase& c : load_cases()) EXPECT_TRUE(names.count(c.persona)) << c.persona;
}

}  // namespace
}  // namespace hello::test
