// What delay_probe's run showed (delay_probe_report.cc): the summary that
// passes or fails, printed, and written as JSON and CSV.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "delay_probe_probe.h"

namespace delay_probe {

// What the run showed, and whether it passed.
struct Summary {
  size_t total = 0, answered = 0, errors = 0, kernel_stamps = 0;
  std::map<std::string, size_t> reasons;          // error text -> connections
  std::vector<int64_t> latencies;                 // answers with the expected status, sorted
  std::vector<int64_t> read_lags;                 // this process's delay in reading them, sorted
  size_t early = 0;                               // answers earlier than --min-ms
  std::vector<std::pair<double, double>> within;  // (ms, percent of all connections)
  Rss rss;
  double idle_per_conn = NAN, waiting_per_conn = NAN;  // bytes
  std::vector<std::pair<std::string, bool>> checks;    // (what, held)
  bool pass = true;
};

// The figures of a finished run against the options' checks.
Summary summarize(const Options& opt, const Probe& probe, const Rss& rss);
// The summary on stdout.
void print(const Options& opt, const Probe& probe, const Summary& s);
// The summary as JSON (--json).
std::string json(const Options& opt, const Probe& probe, const Summary& s);
// One line per connection (--csv).
std::string csv(const Options& opt, const Probe& probe);
// Writes `text` to `path`; false (said on stderr) if it could not.
bool write_file(const std::string& path, const std::string& text);

}  // namespace delay_probe
