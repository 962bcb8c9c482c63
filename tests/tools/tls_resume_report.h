// What tls_resume's threads saw together, printed (tls_resume_report.cc).
#pragma once

#include "tls_resume_client.h"

namespace tls_resume {

// The tallies as one JSON object on stdout (--json).
void print_json(const Tally& t, double seconds);
// The tallies as text on stdout.
void print_text(const Options& opt, const Tally& t, double seconds);

}  // namespace tls_resume
