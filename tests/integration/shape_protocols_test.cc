// One answer step for every protocol (docs/architecture.md#the-answer-step):
// the same shaped requests, sent with the same --seed over HTTP/1.1 and
// over HTTP/2 (h2c, prior knowledge), get the same decisions in the same
// order, and the same answers field for field (on personas that put a
// shape's lines in different places): status, the persona's
// fields with the shape's and the decision in the same places, the body.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "h2_connection.h"
#include "test_client.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

using Fields = std::vector<std::pair<std::string, std::string>>;

// An answer as both protocols can say it: its status, its fields in order
// (names in lower case, without the connection-specific ones HTTP/2 has
// not, the Date's value masked) and its body.
struct Heard {
  std::string status;
  Fields fields;
  std::string body;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void add_field(Heard& h, std::string name, std::string value) {
  name = lower(std::move(name));
  if (name == "connection" || name == "keep-alive") return;
  if (name == "date") value = "<date>";
  h.fields.emplace_back(std::move(name), std::move(value));
}

Heard heard_http1(const std::string& response) {
  Heard h;
  size_t end = response.find("\r\n\r\n");
  if (response.size() < 12 || end == std::string::npos) return h;
  h.status = response.substr(9, 3);
  for (size_t at = response.find("\r\n") + 2; at < end;) {
    size_t eol = response.find("\r\n", at);
    std::string line = response.substr(at, eol - at);
    size_t colon = line.find(':');
    size_t value = line.find_first_not_of(" \t", colon + 1);
    add_field(h, line.substr(0, colon), value == std::string::npos ? "" : line.substr(value));
    at = eol + 2;
  }
  h.body = response.substr(end + 4);
  return h;
}

Heard heard_http2(const Stream& s) {
  Heard h;
  for (const auto& [name, value] : s.field_list) {
    if (name == ":status")
      h.status = value;
    else
      add_field(h, name, value);
  }
  h.body = s.body;
  return h;
}

std::string decision_of(const Heard& h) {
  for (const auto& [name, value] : h.fields)
    if (name == "x-hello-shape-decision") return value;
  return "-";
}

// A bad parameter whose line fills the whole reason (192 bytes): the 400's
// body is that line and its newline both ways.
const std::string kLongBadKey = "/hello?" + std::string(200, 'k') + "%zz=1";

// Routes every persona answers the same way: one with a header of its own,
// one with a shape of its own (docs/routes.md).
constexpr std::string_view kRoutes = R"({"routes": [
  {"method": "GET", "path": "/hello", "body": "Hello!!!", "headers": [["X-Route", "1"]]},
  {"method": "GET", "path": "/shaped", "body": "shaped",
   "shape": "status=503:30&size=16:50&header=Retry-After:1"}]})";

// A target, and an X-Hello-Shape value (or none).
struct Shaped {
  const char* target;
  const char* shape;
};

// Mixes, so that one draw too many or too few shows in every decision
// after it; a shape's own fields, a 204 without a length, the route's own
// body, a route's own shape, a delay, a drip, two 400s, a 404 that shaping
// leaves alone, and a request that no parameter shapes.
const Shaped kRequests[] = {
    {"/hello?status=503:30,404:20&size=10:40,100:30&header=X-Env:Staging", nullptr},
    {"/json?delay=1ms:20&status=201:50&close=0&reset=0", nullptr},
    {"/hello?size=5", "status=204:50&header=A-B:1&header=c:two"},
    {"/hello?cb=42", nullptr},
    {"/shaped", nullptr},
    {"/shaped?cb=42", "status=202:50"},
    {"/hello?status=abc", nullptr},
    {kLongBadKey.c_str(), nullptr},
    {"/hello?drip=10ms&size=64:50&status=500:30", nullptr},
    {"/nope?status=503", nullptr},
    {"/hello?reset=false&close=0&delay=100us:50", "status=418:50"},
};
constexpr int kRounds = 25;

std::vector<Heard> over_http1(int port) {
  std::vector<Heard> out;
  auto c = std::make_unique<Client>(port);
  for (int round = 0; round < kRounds; ++round)
    for (const Shaped& r : kRequests) {
      std::string request = "GET " + std::string(r.target) + " HTTP/1.1\r\nHost: t\r\n";
      if (r.shape != nullptr) request += "X-Hello-Shape: " + std::string(r.shape) + "\r\n";
      if (!c->send(request + "\r\n")) return out;
      std::string response = c->read_response(false, 3s);
      // A persona that closes after every answer (flask's): one connection each.
      if (lower(response.substr(0, response.find("\r\n\r\n"))).find("connection: close") !=
          std::string::npos)
        c = std::make_unique<Client>(port);
      out.push_back(heard_http1(response));
    }
  return out;
}

std::vector<Heard> over_http2(int port) {
  std::vector<Heard> out;
  H2Connection c(port);
  for (int round = 0; round < kRounds; ++round)
    for (const Shaped& r : kRequests) {
      // One stream at a time: the requests end in the order HTTP/1 sends them.
      int32_t id = r.shape != nullptr ? c.get(r.target, r.shape) : c.get(r.target);
      if (!c.run({id})) return out;
      out.push_back(heard_http2(c.streams[id]));
    }
  return out;
}

class ShapeProtocols : public ::testing::TestWithParam<std::string> {};

// Every framework persona of servers/personas.txt: each puts a shape's
// lines in its own place (sanic last, flask and spring before the length).
std::vector<std::string> frameworks() {
  std::vector<std::string> names;
  for (const PersonaInfo& p : read_personas())
    if (p.kind == "framework") names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Personas, ShapeProtocols, ::testing::ValuesIn(frameworks()),
                         [](const auto& info) { return info.param; });

TEST_P(ShapeProtocols, TheSameSeedGivesTheSameDecisionsOverHttp1AndHttp2) {
  fs::path routes = fs::temp_directory_path() /
                    ("shape-protocols-" + std::to_string(getpid()) + "-" + GetParam() + ".json");
  std::ofstream(routes) << kRoutes;
  const std::vector<std::string> flags = {"--h2", "--shape", "--seed",   "5",
                                          "-w",   "1",       "--routes", routes.string()};
  ServerProcess one(GetParam(), flags);
  ServerProcess two(GetParam(), flags);
  std::vector<Heard> http1 = over_http1(one.port());
  std::vector<Heard> http2 = over_http2(two.port());
  size_t n = std::size(kRequests) * kRounds;
  ASSERT_EQ(http1.size(), n);
  ASSERT_EQ(http2.size(), n);
  std::vector<std::string> decisions1, decisions2;
  for (size_t i = 0; i < n; ++i) {
    decisions1.push_back(decision_of(http1[i]));
    decisions2.push_back(decision_of(http2[i]));
  }
  ASSERT_EQ(decisions1, decisions2) << "the same decisions in the same order";
  std::vector<std::string> kinds;
  for (size_t i = 0; i < n; ++i) {
    const char* target = kRequests[i % std::size(kRequests)].target;
    EXPECT_EQ(http1[i].status, http2[i].status) << i << " " << target;
    EXPECT_EQ(http1[i].fields, http2[i].fields) << i << " " << target;
    EXPECT_EQ(http1[i].body, http2[i].body) << i << " " << target;
    kinds.push_back(http1[i].status);
  }
  // The mixes were drawn both ways: every status they allow came up.
  for (const char* status : {"200", "201", "202", "204", "400", "404", "418", "500", "503"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), status), kinds.end()) << status;
  EXPECT_EQ(one.stop(), 0);
  EXPECT_EQ(two.stop(), 0);
  fs::remove(routes);
}

}  // namespace
}  // namespace hello::test
