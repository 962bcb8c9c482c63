#include "stats_report.h"

#include <fmt/format.h>

namespace hello {

StatsSnapshot StatsSnapshot::of(const WorkerStats& s) {
  StatsSnapshot r;
  r.connections = s.connections.get();
  r.connections_rejected = s.connections_rejected.get();
  r.accept_errors = s.accept_errors.get();
  r.open = s.open.get();
  r.requests = s.requests.get();
  r.bytes_in = s.bytes_in.get();
  r.bytes_out = s.bytes_out.get();
  r.responses_2xx = s.responses_2xx.get();
  r.responses_4xx = s.responses_4xx.get();
  r.responses_5xx = s.responses_5xx.get();
  r.parse_errors = s.parse_errors.get();
  r.log_lines_dropped = s.log_lines_dropped.get();
  return r;
}

StatsSnapshot& StatsSnapshot::operator+=(const StatsSnapshot& o) {
  connections += o.connections;
  connections_rejected += o.connections_rejected;
  accept_errors += o.accept_errors;
  open += o.open;
  requests += o.requests;
  bytes_in += o.bytes_in;
  bytes_out += o.bytes_out;
  responses_2xx += o.responses_2xx;
  responses_4xx += o.responses_4xx;
  responses_5xx += o.responses_5xx;
  parse_errors += o.parse_errors;
  log_lines_dropped += o.log_lines_dropped;
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
