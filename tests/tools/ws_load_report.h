// What ws_load's run showed (ws_load_report.cc): one summary line on
// stdout, one line per failure reason on stderr, and the JSON of --json.
#pragma once

#include <cstdio>
#include <string>

#include "ws_load.h"
#include "ws_load_run.h"

namespace ws_load {

// tool_cpu_s over the measured seconds: near 1.0, the tool, not the
// server, set the pace.
double tool_busy(const Result& r);
// The summary line on stdout.
void print_summary(const Options& opt, const Result& r);
// One line per failure reason, with its count, on stderr.
void print_failures(const Result& r);
// The result as one JSON object on one line.
std::string json(const Options& opt, const Result& r);
// Writes `text` to `file` (opened at the start) and closes it; false, said
// on stderr, if it could not.
bool write_json(std::FILE* file, const std::string& path, const std::string& text);

}  // namespace ws_load
