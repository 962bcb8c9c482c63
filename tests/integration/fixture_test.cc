// Walks tests/fixtures/personas: every NAME/ROUTE.CASE.request becomes a test
// case that sends those bytes to hello-NAME and expects the .response bytes
// (Date value aside, which must be a current IMF-fixdate) and the .after
// state, over plain TCP and again over TLS (hello-NAME --tls): the bytes
// inside TLS are the same. Each runs again with --h2 (docs/http2.md):
// HTTP/1.1 beside HTTP/2 on the same port is unchanged, in clear and over
// TLS (the client offers no ALPN, so h2 is never selected). A new fixture
// file is a new test case; no code changes. A WebSocket handshake's case
// (NAME/websocket.CASE, docs/websocket.md) whose .after is "upgraded" then
// echoes a frame and closes as RFC 6455 says.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "test_client.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

struct FixtureCase {
  std::string persona;
  std::string base;  // path without the extension
  std::string name;  // test name: persona_route_case, _tls over TLS, _h2 with --h2
  Tls tls = Tls::off;
  bool h2 = false;  // the server runs with --h2
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
      for (bool h2 : {false, true}) {
        FixtureCase v = c;
        v.h2 = h2;
        if (h2) v.name += "_h2";
        cases.push_back(v);
        v.name = c.name + "_tls" + (h2 ? "_h2" : "");
        v.tls = Tls::on;
        cases.push_back(v);
      }
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const FixtureCase& a, const FixtureCase& b) { return a.name < b.name; });
  return cases;
}

// One server per persona, transport and --h2, started on first use and shared by its cases.
ServerProcess& server_for(const std::string& persona, Tls tls, bool h2) {
  static std::map<std::tuple<std::string, Tls, bool>, std::unique_ptr<ServerProcess>> servers;
  auto& s = servers[{persona, tls, h2}];
  if (!s) {
    std::vector<std::string> flags;
    if (tls == Tls::on) flags.push_back("--tls");
    if (h2) flags.push_back("--h2");
    s = std::make_unique<ServerProcess>(persona, flags);
  }
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
  ASSERT_TRUE(after == "open" || after == "close" || after == "upgraded") << after;

  Client client(server_for(c.persona, c.tls, c.h2).port(), c.tls);
  ASSERT_TRUE(client.send(request));
  // Date values are always 29 bytes, so the response is exactly as long as the fixture.
  std::string got = client.read_exactly(expected.size());
  std::string got_date, expected_date;
  EXPECT_EQ(mask_date(got, &got_date), mask_date(expected, &expected_date));
  if (!expected_date.empty()) {
    EXPECT_TRUE(is_current_http_date(got_date)) << got_date;
  }

  if (after == "upgraded") {
    // A WebSocket now (docs/websocket.md): a masked text frame is echoed
    // unmasked, and a close with 1000 is echoed before the server's FIN.
    // With permessage-deflate agreed the echo is compressed (RSV1): "hi"
    // as zlib's raw DEFLATE, flushed, its 00 00 FF FF taken off.
    bool deflate = expected.find("permessage-deflate") != std::string::npos;
    ASSERT_TRUE(client.send(std::string("\x81\x82\x01\x02\x03\x04", 6) + "\x69\x6b"));
    EXPECT_EQ(client.read_exactly(deflate ? 6 : 4),
              deflate ? std::string("\xc1\x04\xca\xc8\x04\x00", 6) : std::string("\x81\x02hi", 4));
    ASSERT_TRUE(client.send(std::string("\x88\x82\x00\x00\x00\x00\x03\xe8", 8)));
    EXPECT_EQ(client.read_exactly(4), std::string("\x88\x02\x03\xe8", 4));
    auto rest = client.read_to_eof();
    ASSERT_TRUE(rest.has_value()) << "connection left open after the close";
  } else if (after == "close") {
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
  std::vector<FixtureCase> cases = load_cases();
  ASSERT_FALSE(cases.empty()) << "no case under " << HELLO_FIXTURE_DIR;
  for (const FixtureCase& c : cases)
    if (c.tls == Tls::off && !c.h2) ++per_persona[c.persona];
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
  std::vector<FixtureCase> cases = load_cases();
  ASSERT_FALSE(cases.empty()) << "no case under " << HELLO_FIXTURE_DIR;
  for (const FixtureCase& c : cases) EXPECT_TRUE(names.count(c.persona)) << c.persona;
}

}  // namespace
}  // namespace hello::test
