#include "http1/floor_session.h"

#include <cstring>

#include "base/check.h"

namespace hello {

// memchr finds each LF and the three bytes before it are compared; a match
// that straddles reads is finished byte by byte by a four-state matcher
// (the state is the length of the longest suffix read so far that begins
// CRLF CRLF).
Fed FloorSession::feed(const char* data, size_t len, std::string& out) {
  // One byte of the matcher: the state after `c`, 4 on a match.
  auto step = [](uint8_t state, char c) -> uint8_t {
    return c == "\r\n\r\n"[state] ? state + 1 : (c == '\r' ? 1 : 0);
  };
  const PreparedResponse& r = table_.route(0, Variant::keep_alive_11);
  const char* p = data;
  const char* end = data + len;
  size_t answered = 0;
  uint8_t matched = matched_;
  for (; matched != 0 && p < end; ++p) {
    matched = step(matched, *p);
    if (matched == 4) {
      ++answered;
      matched = 0;
    }
  }
  // Bytes before `from` belong to a match already counted or to no match.
  const char* from = p;
  while (p < end) {
    const char* lf = static_cast<const char*>(memchr(p, '\n', static_cast<size_t>(end - p)));
    if (lf == nullptr) break;
    if (lf - from >= 3 && lf[-1] == '\r' && lf[-2] == '\n' && lf[-3] == '\r') {
      ++answered;
      from = lf + 1;
    }
    p = lf + 1;
  }
  // Past the straddling match (if any), the state depends only on the
  // last three bytes that are not part of a match.
  if (from < end) {
    matched = 0;
    for (const char* q = end - from > 3 ? end - 3 : from; q < end; ++q) matched = step(matched, *q);
  }
  matched_ = matched;
  for (size_t i = 0; i < answered; ++i) out.append(r.bytes);
  sink_.answered_ok(static_cast<uint32_t>(answered));
  Fed fed;
  fed.partial = matched != 0;
  fed.answered = static_cast<uint32_t>(answered);
  fed.consumed = len;
  return fed;
}

Fed FloorSession::resume(std::string&) {
  HELLO_CHECK(!"hello-floor never defers an answer");
  return {};
}

// A floor has no request to time out: the connection just ends.
void FloorSession::time_out(std::string&) {}

}  // namespace hello
