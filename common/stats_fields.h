// The one list of what a worker counts. WorkerStats (the live counters),
// StatsSnapshot (a copy), its +=, the exit summary and the --stats-json file
// are all made from it: a new counter is one line here.
#pragma once

#include <cstdint>

namespace hello {

// When a counter appears in the exit summary and the JSON.
enum class StatsShown : uint8_t {
  always,      // in every summary line and in the JSON
  if_nonzero,  // in the JSON always, in a summary line only when it happened
  live_only,   // in neither: a gauge for the --stats-interval line
};

}  // namespace hello

// X(member, JSON object, JSON key, summary text, shown), in the order the
// summary and the JSON print them:
//   member        the Counter of WorkerStats and the number of StatsSnapshot
//   JSON object   the object of --stats-json it is nested in, "" for none;
//                 the fields of one object are adjacent
//   JSON key      its key in --stats-json
//   summary text  its part of a summary line, {} standing for the number
//   shown         a StatsShown
// The keys and texts are what README.md documents; the unit test
// tests/unit/stats_report_test.cc holds them byte for byte.
// clang-format off
#define HELLO_STATS_FIELDS(X)                                                                  \
  /* Accepted. */                                                                              \
  X(connections, "", "connections", "{} connections", always)                                  \
  /* Complete requests answered. */                                                            \
  X(requests, "", "requests", "{} requests", always)                                           \
  X(bytes_in, "", "bytes_in", "{} bytes in", always)                                           \
  /* Response bytes produced, headers and bodies. */                                           \
  X(bytes_out, "", "bytes_out", "{} bytes out", always)                                        \
  /* Responses by status class, error responses included. */                                   \
  X(responses_2xx, "responses", "2xx", "2xx {}", always)                                       \
  X(responses_3xx, "responses", "3xx", "3xx {}", if_nonzero)                                   \
  X(responses_4xx, "responses", "4xx", "4xx {}", always)                                       \
  X(responses_5xx, "responses", "5xx", "5xx {}", always)                                       \
  /* Requests rejected as malformed. */                                                        \
  X(parse_errors, "", "parse_errors", "{} parse errors", always)                               \
  X(log_lines_dropped, "", "log_lines_dropped", "{} log lines dropped", always)                \
  /* Closed at once: over --max-connections. */                                                \
  X(connections_rejected, "", "connections_rejected", "{} connections rejected", if_nonzero)   \
  /* Failed accepts, such as EMFILE. */                                                        \
  X(accept_errors, "", "accept_errors", "{} accept errors", if_nonzero)                        \
  /* Whole-worker pauses of --stall. */                                                        \
  X(stalls, "", "stalls", "{} stalls", if_nonzero)                                             \
  /* Answers shaped (docs/shaping.md), resets among them, and 400s for bad parameters. */      \
  X(shaped, "shaping", "shaped", "{} shaped", if_nonzero)                                      \
  X(resets, "shaping", "resets", "{} reset", if_nonzero)                                       \
  X(shape_errors, "shaping", "errors", "{} bad shaping parameters", if_nonzero)                \
  /* Open now. */                                                                              \
  X(open, "", "", "", live_only)
// clang-format on
