// delay_probe's summary, printed and written as JSON and CSV.
#include "delay_probe_report.h"

#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

namespace delay_probe {
namespace {

// Nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

constexpr double kPercentiles[] = {50, 90, 99, 99.9};

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

// A number, or null for what was not measured.
std::string json_number(double x) {
  return std::isnan(x) ? "null" : fmt::format("{}", x);
}

}  // namespace

Summary summarize(const Options& opt, const Probe& probe, const Rss& rss) {
  Summary s;
  s.total = probe.conns().size();
  for (const Conn& c : probe.conns()) {
    if (c.phase == Phase::kFailed) {
      ++s.reasons[c.error];
    } else if (c.phase != Phase::kAnswered) {
      internal_error("a connection neither answered nor failed at the end");
    } else if (c.reader.status() != opt.expect_status) {
      ++s.reasons[fmt::format("status {} instead of {}", c.reader.status(), opt.expect_status)];
    } else {
      s.latencies.push_back(c.arrived_ns - c.sent_ns);
      if (c.kernel_stamp) s.read_lags.push_back(c.read_ns - c.arrived_ns);
    }
  }
  std::sort(s.latencies.begin(), s.latencies.end());
  std::sort(s.read_lags.begin(), s.read_lags.end());
  s.answered = s.latencies.size();
  s.errors = s.total - s.answered;
  s.kernel_stamps = s.read_lags.size();
  s.checks.emplace_back(fmt::format("every answer arrived with status {}", opt.expect_status),
                        s.errors == 0);
  if (opt.min_ms) {
    auto first_ok = std::lower_bound(s.latencies.begin(), s.latencies.end(),
                                     std::llround(*opt.min_ms * kNsPerMs));
    s.early = static_cast<size_t>(first_ok - s.latencies.begin());
    s.checks.emplace_back(fmt::format("none earlier than {} ms", *opt.min_ms), s.early == 0);
  }
  std::vector<double> bounds = opt.within;
  for (auto [percent, bound] : opt.checks) bounds.push_back(bound);
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  auto share = [&](double bound) {
    auto end =
        std::upper_bound(s.latencies.begin(), s.latencies.end(), std::llround(bound * kNsPerMs));
    return 100.0 * static_cast<double>(end - s.latencies.begin()) / static_cast<double>(s.total);
  };
  for (double bound : bounds) s.within.emplace_back(bound, share(bound));
  for (auto [percent, bound] : opt.checks)
    s.checks.emplace_back(fmt::format("{}% within {} ms", percent, bound), share(bound) >= percent);
  s.rss = rss;
  if (rss.before >= 0 && rss.idle >= 0)
    s.idle_per_conn = static_cast<double>(rss.idle - rss.before) / static_cast<double>(s.total);
  if (rss.before >= 0 && rss.waiting >= 0)
    s.waiting_per_conn =
        static_cast<double>(rss.waiting - rss.before) / static_cast<double>(s.total);
  if (opt.rss_pid > 0)
    s.checks.emplace_back(fmt::format("VmRSS of pid {} read three times", opt.rss_pid),
                          !std::isnan(s.idle_per_conn) && !std::isnan(s.waiting_per_conn));
  if (opt.max_rss_per_waiting)
    s.checks.emplace_back(
        fmt::format("at most {} bytes of RSS per waiting connection", *opt.max_rss_per_waiting),
        s.waiting_per_conn <= *opt.max_rss_per_waiting);
  for (const auto& check : s.checks) s.pass = s.pass && check.second;
  return s;
}

void print(const Options& opt, const Probe& probe, const Summary& s) {
  fmt::print("delay_probe: GET {} on {}:{}, {} connections, spread {} s, timeout {} s\n", opt.path,
             opt.host, opt.port, s.total, opt.spread, opt.timeout);
  fmt::print("connected   {}/{} in {:.3f} ms; requests sent in {:.3f} ms\n", probe.connected(),
             s.total, ms(probe.connect_ns()), ms(probe.send_ns()));
  fmt::print("answered    {}/{} with status {}; errors {}\n", s.answered, s.total,
             opt.expect_status, s.errors);
  for (const auto& [why, n] : s.reasons) fmt::print("  error     {} x {}\n", n, why);
  if (!s.latencies.empty()) {
    fmt::print("latency ms  min {:.3f}", ms(s.latencies.front()));
    for (double p : kPercentiles) fmt::print("  p{} {:.3f}", p, ms(percentile(s.latencies, p)));
    fmt::print("  max {:.3f}\n", ms(s.latencies.back()));
  }
  if (!s.read_lags.empty())
    fmt::print("read lag ms p50 {:.3f}  p99 {:.3f}  max {:.3f} (arrival to this process's read)\n",
               ms(percentile(s.read_lags, 50)), ms(percentile(s.read_lags, 99)),
               ms(s.read_lags.back()));
  if (s.kernel_stamps < s.answered)
    fmt::print("  {} of {} answers timed at their read: no kernel arrival stamp\n",
               s.answered - s.kernel_stamps, s.answered);
  if (int64_t drift = probe.clock_drift_ns(); drift > 100'000)
    fmt::print(
        "  warning: the wall clock moved {:.3f} ms against the monotonic one during the run;"
        " arrival stamps are off by up to that\n",
        ms(drift));
  if (opt.min_ms) fmt::print("early       {} answers earlier than {} ms\n", s.early, *opt.min_ms);
  for (auto [bound, percent] : s.within)
    fmt::print("within      {} ms: {:.2f}% of all connections\n", bound, percent);
  if (opt.rss_pid > 0) {
    auto kib = [](int64_t b) {
      return b < 0 ? std::string("unread") : fmt::format("{} KiB", b / 1024);
    };
    fmt::print("RSS pid {}  before {}, idle {}, waiting {} (server fds {} -> {})\n", opt.rss_pid,
               kib(s.rss.before), kib(s.rss.idle), kib(s.rss.waiting), s.rss.fds_before,
               s.rss.fds_idle);
    fmt::print(
        "RSS added   {:.0f} bytes per idle connection, {:.0f} bytes per waiting connection\n",
        s.idle_per_conn, s.waiting_per_conn);
  }
  for (const auto& [what, held] : s.checks)
    fmt::print("check       {}: {}\n", what, held ? "ok" : "FAILED");
  fmt::print("{}\n", s.pass ? "PASS" : "FAIL");
}

std::string json(const Options& opt, const Probe& probe, const Summary& s) {
  std::string out = "{\n";
  out += fmt::format("  \"host\": {},\n  \"port\": {},\n  \"path\": {},\n", json_string(opt.host),
                     opt.port, json_string(opt.path));
  out += fmt::format("  \"connections\": {},\n  \"connected\": {},\n  \"answered\": {},\n", s.total,
                     probe.connected(), s.answered);
  out += fmt::format("  \"errors\": {},\n  \"error_reasons\": {{", s.errors);
  const char* sep = "";
  for (const auto& [why, n] : s.reasons) {
    out += fmt::format("{}{}: {}", sep, json_string(why), n);
    sep = ", ";
  }
  out += "},\n";
  out += fmt::format("  \"connect_ms\": {:.3f},\n  \"send_ms\": {:.3f},\n", ms(probe.connect_ns()),
                     ms(probe.send_ns()));
  out += "  \"latency_ms\": ";
  if (s.latencies.empty()) {
    out += "null,\n";
  } else {
    out += fmt::format("{{\"min\": {:.3f}", ms(s.latencies.front()));
    for (double p : kPercentiles)
      out += fmt::format(", \"p{}\": {:.3f}", p, ms(percentile(s.latencies, p)));
    out += fmt::format(", \"max\": {:.3f}}},\n", ms(s.latencies.back()));
  }
  out += fmt::format("  \"read_lag_ms\": {{\"p50\": {:.3f}, \"p99\": {:.3f}, \"max\": {:.3f}}},\n",
                     ms(percentile(s.read_lags, 50)), ms(percentile(s.read_lags, 99)),
                     ms(s.read_lags.empty() ? 0 : s.read_lags.back()));
  out += fmt::format("  \"kernel_stamps\": {},\n", s.kernel_stamps);
  out += fmt::format("  \"min_ms\": {},\n  \"early\": {},\n",
                     opt.min_ms ? json_number(*opt.min_ms) : "null", s.early);
  out += "  \"within_percent\": {";
  sep = "";
  for (auto [bound, percent] : s.within) {
    out += fmt::format("{}\"{}\": {:.4f}", sep, bound, percent);
    sep = ", ";
  }
  out += "},\n";
  auto bytes = [](int64_t b) { return b < 0 ? std::string("null") : fmt::format("{}", b); };
  out += fmt::format(
      "  \"rss_pid\": {},\n  \"rss_bytes\": {{\"before\": {}, \"idle\": {}, \"waiting\": {}}},\n",
      opt.rss_pid > 0 ? fmt::format("{}", opt.rss_pid) : "null", bytes(s.rss.before),
      bytes(s.rss.idle), bytes(s.rss.waiting));
  out += fmt::format(
      "  \"rss_bytes_per_idle_connection\": {},\n  \"rss_bytes_per_waiting_connection\": {},\n",
      json_number(s.idle_per_conn), json_number(s.waiting_per_conn));
  out += "  \"checks\": [";
  sep = "";
  for (const auto& [what, held] : s.checks) {
    out += fmt::format("{}{{\"check\": {}, \"ok\": {}}}", sep, json_string(what), held);
    sep = ", ";
  }
  out += fmt::format("],\n  \"pass\": {}\n}}\n", s.pass);
  return out;
}

// One line per connection, to see when the slow answers came.
std::string csv(const Options& opt, const Probe& probe) {
  std::string out = "connection,sent_ms,latency_ms,read_lag_ms,status,error\n";
  const auto& conns = probe.conns();
  for (size_t i = 0; i < conns.size(); ++i) {
    const Conn& c = conns[i];
    out += fmt::format("{},", i);
    if (c.sent_ns != 0) out += fmt::format("{:.3f}", ms(c.sent_ns - probe.first_send()));
    out += ",";
    if (c.phase == Phase::kAnswered)
      out += fmt::format("{:.3f},{:.3f},{}", ms(c.arrived_ns - c.sent_ns),
                         ms(c.read_ns - c.arrived_ns), c.reader.status());
    else
      out += ",,";
    bool wrong = c.phase == Phase::kAnswered && c.reader.status() != opt.expect_status;
    out += fmt::format(",{}\n", wrong ? "unexpected status" : c.error);
  }
  return out;
}

bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok) fmt::print(stderr, "delay_probe: cannot write {}: {}\n", path, strerror(errno));
  return ok;
}

}  // namespace delay_probe
