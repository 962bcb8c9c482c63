// Request bytes and routes the tests, the fuzzer and the micro-benchmark
// share, written once: what wrk sends, JSON POSTs (by length and chunked),
// the route file routes of the echo and of answers that wait, and cutting
// an input at every byte. Header-only and without GoogleTest, so the
// fuzzer and the benchmark use it too.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include <llhttp.h>

#include "persona/routes_file.h"

namespace hello::test {

// What `wrk -t1 -c64 http://127.0.0.1:8080/` sends for each request.
inline constexpr std::string_view kWrkRequest =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n";

// `bytes` `n` times over, as a pipelining client sends them.
inline std::string repeat(std::string_view bytes, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += bytes;
  return out;
}

// A POST of `body` to `path` with Content-Length.
inline std::string post(std::string_view body, std::string_view path = "/echo") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         std::string(body);
}

// A chunked POST to `path` whose body arrives as `chunks`, one chunk each.
inline std::string chunked_post(std::initializer_list<std::string_view> chunks,
                                std::string_view path = "/echo") {
  std::string out =
      "POST " + std::string(path) + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::string_view c : chunks) {
    char size[20];
    snprintf(size, sizeof size, "%zx\r\n", c.size());
    out += size;
    out += c;
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

// A route file's JSON echo route: POST `path`.
inline FileRoute echo_route(std::string path = "/echo", uint64_t delay_us = 0) {
  FileRoute r;
  r.method = HTTP_POST;
  r.path = std::move(path);
  r.kind = FileRoute::Kind::echo;
  r.content_type = "application/json";
  r.delay_us = delay_us;
  return r;
}

// A route file's fixed text route: GET `path` answers `body` after `delay_us`.
inline FileRoute text_route(std::string path, std::string body, uint64_t delay_us = 0) {
  FileRoute r;
  r.method = HTTP_GET;
  r.path = std::move(path);
  r.content_type = "text/plain";
  r.content = std::move(body);
  r.delay_us = delay_us;
  return r;
}

// Calls `fn(first, second)` for every cut of `input` in two, the empty
// halves included.
template <typename Fn>
void for_each_split(std::string_view input, Fn fn) {
  for (size_t split = 0; split <= input.size(); ++split)
    fn(input.substr(0, split), input.substr(split), split);
}

}  // namespace hello::test
