// HTTP status codes the core can answer, and their reason phrases.
#pragma once

#include <array>
#include <string_view>

namespace hello {

// Every error status the core may send; the response table prebuilds one
// response for each, so this list bounds what the heart can answer.
inline constexpr std::array<int, 11> kErrorStatuses = {400, 404, 405, 408, 413, 414,
                                                       417, 426, 431, 501, 505};

// The reason phrase of `status` (RFC 9110 and the IANA registry), or ""
// for an unregistered one.
std::string_view reason_phrase(int status);

}  // namespace hello
