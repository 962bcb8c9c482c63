// Whole files written at once: the exit summary's JSON, a certificate.
#pragma once

#include <string>

namespace hello {

// Writes `text` to `path`, replacing it; false if it cannot (errno says why).
bool write_file(const std::string& path, const std::string& text);

}  // namespace hello
