// A persona for unit tests whose every variant is visibly different, so a
// test can tell which header layout the heart chose.
#pragma once

#include <cstddef>
#include <string_view>

#include "persona/persona.h"

namespace hello::test {

// How many times hello-floor must answer `input`: its CRLF CRLFs that do not
// overlap, counted a byte at a time (the reference for its memchr matcher).
inline size_t blank_lines(std::string_view input) {
  size_t count = 0;
  int state = 0;
  for (char c : input) {
    state = c == "\r\n\r\n"[state] ? state + 1 : (c == '\r' ? 1 : 0);
    if (state == 4) {
      ++count;
      state = 0;
    }
  }
  return count;
}

inline constexpr Body kTestJson{"application/json", "{\"hello\":\"world\"}"};

inline constexpr Route kTestRoutes[] = {
    {"/", {"text/plain", "Hello!!!"}},
    {"/json", kTestJson},
};

inline constexpr Persona kTestPersona{
    .name = "test",
    .summary = "unit-test persona",
    .port = 1,
    .head =
        "Date: {date}\r\nContent-Type: {type}\r\n{extra}Content-Length: {length}\r\n{connection}",
    .connection = {.keep_alive_10 = "Connection: keep-alive\r\n",
                   .close_10 = "",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .allow_header = "Allow: GET, HEAD\r\n",
    .routes = kTestRoutes,
    .json = kTestJson,
    .error_type = "text/plain",
    .error_format = "{code} {reason}",
};

// The test persona with bodies that carry no length: one chunked, one
// ended by closing the connection.
inline constexpr Route kTestFramedRoutes[] = {
    {"/", {"text/plain", "Hello!!!"}},
    {"/chunked", {"application/json", "{\"hello\":\"world\"}", {}, Framing::chunked}},
    {"/close", {"text/plain", "bye", {}, Framing::close}},
};

inline constexpr Persona kTestFramedPersona = [] {
  Persona p = kTestPersona;
  p.routes = kTestFramedRoutes;
  return p;
}();

}  // namespace hello::test
