// How long a route's path may be: one fact for the HTTP/1 reader, which
// keeps at most this much of a request's path, and for the route file,
// which refuses a longer path (a request could never reach it).
#pragma once

#include <cstddef>

namespace hello {

// Routes sit at the root of short paths; a longer path matches none.
inline constexpr size_t kMaxPath = 64;

}  // namespace hello
