// What a request may weigh, whatever the protocol (docs/hardening.md):
// the limits the options set (--max-header-bytes, --max-body-bytes) and
// those every heart keeps alike. HTTP/1 counts them in its reader, HTTP/2
// hands them to its session's guard (http2/h2_limits.h).
#pragma once

#include <cstddef>

namespace hello {

// The limits a worker's options set for every heart.
struct Limits {
  // Request line plus headers, and a chunked body's chunk extensions and
  // trailers with them; beyond it 431, or 414 if the request line alone is
  // too long, or 413 if a chunk extension takes it there. HTTP/2: the
  // header list's size (SETTINGS_MAX_HEADER_LIST_SIZE).
  size_t max_header_bytes = 16384;
  // A body beyond it (by Content-Length or by counting chunks or DATA) gets 413.
  size_t max_body_bytes = 1048576;
  // More header lines than this get 431; nginx and Node allow about as many
  // as fit in their byte limits, and no benchmark client sends more than 10.
  static constexpr size_t kMaxHeaders = 100;
};

// The shaping parameters of one request (its query and X-Hello-Shape
// values, joined by '&') may be this long; beyond it 400.
inline constexpr size_t kMaxShapeText = 4096;

// A request keeps at most this much of its target for the access log,
// which shows no more (an HTTP/2 :path is cut here too).
inline constexpr size_t kMaxLoggedTarget = 256;

}  // namespace hello
