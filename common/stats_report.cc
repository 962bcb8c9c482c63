#include "stats_report.h"

#include <fmt/format.h>

namespace hello {

namespace {

// Each counter and the snapshot field that copies it, so that copying and
// summing walk one list instead of repeating every name.
struct Field {
  Counter WorkerStats::*counter;
  uint64_t StatsSnapshot::*value;
};

constexpr Field kFields[] = {
    {&WorkerStats::connections, &StatsSnapshot::connections},
    {&WorkerStats::connections_rejected, &StatsSnapshot::connections_rejected},
    {&WorkerStats::accept_errors, &StatsSnapshot::accept_errors},
    {&WorkerStats::open, &StatsSnapshot::open},
    {&WorkerStats::requests, &StatsSnapshot::requests},
    {&WorkerStats::bytes_in, &StatsSnapshot::bytes_in},
    {&WorkerStats::bytes_out, &StatsSnapshot::bytes_out},
    {&WorkerStats::responses_2xx, &StatsSnapshot::responses_2xx},
    {&WorkerStats::responses_4xx, &StatsSnapshot::responses_4xx},
    {&WorkerStats::responses_5xx, &StatsSnapshot::responses_5xx},
    {&WorkerStats::parse_errors, &StatsSnapshot::parse_errors},
    {&WorkerStats::log_lines_dropped, &StatsSnapshot::log_lines_dropped},
};

}  // namespace

StatsSnapshot StatsSnapshot::of(const WorkerStats& s) {
  StatsSnapshot r;
  for (const Field& f : kFields) r.*f.value = (s.*f.counter).get();
  return r;
}

StatsSnapshot& StatsSnapshot::operator+=(const StatsSnapshot& o) {
  for (const Field& f : kFields) this->*f.value += o.*f.value;
  return *this;
}

namespace {

StatsSnapshot total_of(const std::vector<StatsSnapshot>& workers) {
  StatsSnapshot t;
  for (const StatsSnapshot& w : workers) t += w;
  return t;
}

std::string text_row(const std::string& who, const StatsSnapshot& s) {
  std::string row = fmt::format(
      "{:>9}: {} connections, {} requests, {} bytes in, {} bytes out, 2xx {}, 4xx {}, 5xx {}, "
      "{} parse errors, {} log lines dropped",
      who, s.connections, s.requests, s.bytes_in, s.bytes_out, s.responses_2xx, s.responses_4xx,
      s.responses_5xx, s.parse_errors, s.log_lines_dropped);
  // Only worth a mention when they happened.
  if (s.connections_rejected > 0)
    row += fmt::format(", {} connections rejected", s.connections_rejected);
  if (s.accept_errors > 0) row += fmt::format(", {} accept errors", s.accept_errors);
  return row + "\n";
}

std::string json_fields(const StatsSnapshot& s) {
  return fmt::format(
      "\"connections\": {}, \"requests\": {}, \"bytes_in\": {}, \"bytes_out\": {}, "
      "\"responses\": {{\"2xx\": {}, \"4xx\": {}, \"5xx\": {}}}, \"parse_errors\": {}, "
      "\"log_lines_dropped\": {}, \"connections_rejected\": {}, \"accept_errors\": {}",
      s.connections, s.requests, s.bytes_in, s.bytes_out, s.responses_2xx, s.responses_4xx,
      s.responses_5xx, s.parse_errors, s.log_lines_dropped, s.connections_rejected,
      s.accept_errors);
}

}  // namespace

std::string interval_line(const std::vector<StatsSnapshot>& before,
                          const std::vector<StatsSnapshot>& now, double seconds) {
  std::string per_worker;
  uint64_t total = 0;
  uint64_t open = 0;
  for (size_t i = 0; i < now.size(); ++i) {
    uint64_t n = now[i].requests - before[i].requests;
    total += n;
    open += now[i].open;
    per_worker += fmt::format("{}w{} {:.0f}", i ? ", " : "", i, static_cast<double>(n) / seconds);
  }
  return fmt::format("stats: {:.0f} req/s ({}), {} open connections\n",
                     static_cast<double>(total) / seconds, per_worker, open);
}

std::string summary_text(const std::vector<StatsSnapshot>& workers) {
  std::string out = "summary:\n";
  for (size_t i = 0; i < workers.size(); ++i)
    out += text_row(fmt::format("worker {}", i), workers[i]);
  out += text_row("total", total_of(workers));
  return out;
}

std::string summary_json(const std::vector<StatsSnapshot>& workers) {
  std::string out = "{\"workers\": [";
  for (size_t i = 0; i < workers.size(); ++i)
    out += fmt::format("{}{{\"id\": {}, {}}}", i ? ", " : "", i, json_fields(workers[i]));
  out += fmt::format("], \"total\": {{{}}}}}\n", json_fields(total_of(workers)));
  return out;
}

}  // namespace hello
