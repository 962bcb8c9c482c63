// The IMF-fixdate of RFC 9110 section 5.6.7, as sent in the Date header.
#pragma once

#include <cstddef>
#include <ctime>

namespace hello {

// "Sun, 06 Nov 1994 08:49:37 GMT" is always this long.
inline constexpr size_t kHttpDateLength = 29;

// Writes the IMF-fixdate of `t` to `out` (exactly kHttpDateLength bytes, no NUL).
void format_http_date(time_t t, char* out);

}  // namespace hello
