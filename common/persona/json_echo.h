// The JSON echo of a route file's echo routes: a request body parsed with
// simdjson and sent back minified. Its parser and output space are one per
// worker thread and grow to the largest body seen: nothing is allocated per
// request once warm.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hello {

// The readable bytes simdjson needs past a body's end (SIMDJSON_PADDING):
// a body buffer reserves them up front.
inline constexpr size_t kJsonPadding = 64;

struct EchoResult {
  bool ok;                // the body is JSON
  std::string_view text;  // the minified body, or one line saying why it is not JSON
};

// Parses and minifies `body`, which gains simdjson's padding capacity. The
// text is valid until the next call on this thread.
EchoResult echo_json(std::string& body);

}  // namespace hello
