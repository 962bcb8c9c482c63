// The fixture the HTTP/1 session's tests share (session_test.cc,
// session_routes_test.cc, session_conformance_test.cc): a session over the
// test persona's response table, fed whole or cut in two.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "http1/session.h"
#include "test_persona.h"

namespace hello {

class SessionTest : public ::testing::Test {
 protected:
  explicit SessionTest(const Persona& p = test::kTestPersona, TableOptions o = {})
      : table_(p, o), session_(table_, sink_) {}

  // Feeds `bytes` in one piece and returns what the session answered.
  std::string feed(std::string_view bytes) {
    std::string out;
    fed_ = session_.feed(bytes.data(), bytes.size(), out);
    open_ = fed_.next != Fed::Next::close;
    return out;
  }
  // Feeds `a` then `b` to a fresh session: one input cut in two.
  std::string feed_cut(std::string_view a, std::string_view b) {
    session_.reset();
    std::string out = feed(a);
    return out + feed(b);
  }
  std::string route(std::string_view path, Variant v) {
    return table_.route(table_.find_route(path), v).bytes;
  }
  std::string error(int status, Variant v) { return table_.error(status, v).bytes; }
  std::string head_only(const std::string& response) {
    return response.substr(0, response.find("\r\n\r\n") + 4);
  }

  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Session session_;
  Fed fed_;
  bool open_ = true;
};

inline constexpr std::string_view kGet11 = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

}  // namespace hello
