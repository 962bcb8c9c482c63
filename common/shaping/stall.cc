#include "shaping/stall.h"

#include <fmt/format.h>

#include "base/duration.h"

namespace hello {

namespace {

// Parses one part of a SPEC, named `part` in the reason for refusing it.
bool parse_part(std::string_view part, std::string_view text, uint64_t& us, std::string& why) {
  if (parse_duration(text, us, why)) return true;
  why = fmt::format("{}: {}", part, why);
  return false;
}

}  // namespace

bool parse_stall(std::string_view text, Stall& stall, std::string& why) {
  size_t at = text.find_first_of("/@");
  if (at == std::string_view::npos) {
    why = "not DURATION/EVERY or DURATION@AT";
    return false;
  }
  bool periodic = text[at] == '/';
  Stall s;
  if (!parse_part("DURATION", text.substr(0, at), s.duration_us, why)) return false;
  if (s.duration_us == 0) {
    why = "DURATION must be more than 0";
    return false;
  }
  if (s.duration_us > kMaxStallUs) {
    why = fmt::format("DURATION {} is over {}", format_duration(s.duration_us),
                      format_duration(kMaxStallUs));
    return false;
  }
  if (!periodic) {
    if (!parse_part("AT", text.substr(at + 1), s.at_us, why)) return false;
    stall = s;
    return true;
  }
  if (!parse_part("EVERY", text.substr(at + 1), s.every_us, why)) return false;
  // A stall that lasts its whole period would never let the worker run.
  if (s.every_us <= s.duration_us) {
    why = fmt::format("EVERY {} must be longer than DURATION {}", format_duration(s.every_us),
                      format_duration(s.duration_us));
    return false;
  }
  s.at_us = s.every_us;
  stall = s;
  return true;
}

}  // namespace hello
