#include "observe/stats_report.h"

#include <fmt/format.h>

#include <iterator>

namespace hello {

namespace {

// The JSON writer closes a nested object when the next field is not in it,
// so the fields of one object must be adjacent.
constexpr bool json_objects_adjacent() {
  for (size_t i = 1; i < std::size(kStatsFields); ++i) {
    std::string_view object = kStatsFields[i].json_object;
    if (object.empty() || object == kStatsFields[i - 1].json_object) continue;
    for (size_t j = 0; j + 1 < i; ++j)
      if (kStatsFields[j].json_object == object) return false;
  }
  return true;
}
static_assert(json_objects_adjacent(), "HELLO_STATS_FIELDS: split JSON object");

// A gauge (a metric not ending in _total, such as the streams open now)
// says what is, not what happened since: /stats/reset leaves it as it is.
constexpr bool is_gauge(const StatsField& f) {
  return !f.metric.empty() && !f.metric.ends_with("_total");
}

}  // namespace

StatsSnapshot StatsSnapshot::of(const WorkerStats& s) {
  StatsSnapshot r;
  for (const StatsField& f : kStatsFields) r.*f.value = (s.*f.counter).get();
  return r;
}

StatsSnapshot StatsSnapshot::since(const StatsSnapshot& earlier) const {
  StatsSnapshot r = *this;
  for (const StatsField& f : kStatsFields)
    if (f.shown != StatsShown::live_only && !is_gauge(f)) r.*f.value -= earlier.*f.value;
  return r;
}

StatsSnapshot& StatsSnapshot::operator+=(const StatsSnapshot& o) {
  for (const StatsField& f : kStatsFields) this->*f.value += o.*f.value;
  return *this;
}

namespace {

StatsSnapshot total_of(const std::vector<StatsSnapshot>& workers) {
  StatsSnapshot t;
  for (const StatsSnapshot& w : workers) t += w;
  return t;
}

std::string text_row(const std::string& who, const StatsSnapshot& s) {
  std::string row = fmt::format("{:>9}:", who);
  const char* separator = " ";
  for (const StatsField& f : kStatsFields) {
    uint64_t value = s.*f.value;
    if (f.shown == StatsShown::live_only || f.shown == StatsShown::json_only ||
        (f.shown == StatsShown::if_nonzero && value == 0))
      continue;
    row += separator;
    row += fmt::format(fmt::runtime(f.text), value);
    separator = ", ";
  }
  return row + "\n";
}

std::string json_fields(const StatsSnapshot& s) {
  std::string out;
  std::string_view object;  // the nested object open now, "" for none
  bool first = true;        // the next member is the first of its object
  for (const StatsField& f : kStatsFields) {
    if (f.shown == StatsShown::live_only) continue;
    if (f.json_object != object) {
      if (!object.empty()) {
        out += '}';
        first = false;
      }
      if (!f.json_object.empty()) {
        out += fmt::format("{}\"{}\": {{", first ? "" : ", ", f.json_object);
        first = true;
      }
      object = f.json_object;
    }
    out += fmt::format("{}\"{}\": {}", first ? "" : ", ", f.json_key, s.*f.value);
    first = false;
  }
  if (!object.empty()) out += '}';
  return out;
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

ServiceTimeFigures service_time_figures(const LatencySnapshot& s) {
  auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000; };
  return {s.count(),
          us(s.quantile_ns(0.5)),
          us(s.quantile_ns(0.9)),
          us(s.quantile_ns(0.99)),
          us(s.quantile_ns(0.999)),
          us(s.max_ns())};
}

namespace {

LatencySnapshot latency_total(const std::vector<LatencySnapshot>& workers) {
  LatencySnapshot t;
  for (const LatencySnapshot& w : workers) t += w;
  return t;
}

// "21.5us", "1.25ms", "2.10s": three significant figures or so.
std::string duration_text(double us) {
  if (us < 1000) return fmt::format("{:.1f}us", us);
  if (us < 1000000) return fmt::format("{:.2f}ms", us / 1000);
  return fmt::format("{:.2f}s", us / 1000000);
}

std::string service_row(const std::string& who, const LatencySnapshot& s) {
  ServiceTimeFigures f = service_time_figures(s);
  return fmt::format("{:>9}: {} requests, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}\n", who, f.count,
                     duration_text(f.p50_us), duration_text(f.p90_us), duration_text(f.p99_us),
                     duration_text(f.p999_us), duration_text(f.max_us));
}

// The service time times answers handed to the kernel, the requests line
// counts complete requests: where the two counts differ, one line says why.
std::string timed_apart(uint64_t timed, uint64_t requests) {
  if (timed > requests)
    return fmt::format(
        "    ({} answers timed beyond the {} requests: answers to malformed requests and 408s at "
        "the header timeout are timed, not counted as requests)\n",
        timed - requests, requests);
  if (timed < requests)
    return fmt::format(
        "    ({} of the {} requests not timed: a request answered by a shaped reset over HTTP/1 "
        "sends nothing to time)\n",
        requests - timed, requests);
  return "";
}

std::string figures_json(const ServiceTimeFigures& f) {
  return fmt::format(
      "{{\"count\": {}, \"p50\": {:.1f}, \"p90\": {:.1f}, \"p99\": {:.1f}, \"p99_9\": {:.1f}, "
      "\"max\": {:.1f}}}",
      f.count, f.p50_us, f.p90_us, f.p99_us, f.p999_us, f.max_us);
}

std::string service_json(const LatencySnapshot& s) {
  return ", \"service_time_us\": " + figures_json(service_time_figures(s));
}

// A worker's (or, with every worker's idle time added, the total's) live
// fields: its open connections and its loop's idle seconds.
std::string live_json(const StatsSnapshot& s, double idle_s) {
  return fmt::format(", \"open\": {}, \"loop_idle_s\": {:.6f}", s.open, idle_s);
}

}  // namespace

std::string summary_text(const std::vector<StatsSnapshot>& workers,
                         const std::vector<LatencySnapshot>* service_time) {
  std::string out = "summary:\n";
  for (size_t i = 0; i < workers.size(); ++i)
    out += text_row(fmt::format("worker {}", i), workers[i]);
  StatsSnapshot total = total_of(workers);
  out += text_row("total", total);
  if (service_time != nullptr) {
    out += "service time (first byte of a request to its answer handed to the kernel):\n";
    for (size_t i = 0; i < service_time->size(); ++i)
      out += service_row(fmt::format("worker {}", i), (*service_time)[i]);
    LatencySnapshot timed = latency_total(*service_time);
    out += service_row("total", timed);
    out += timed_apart(timed.count(), total.requests);
  }
  return out;
}

std::string summary_json(const std::vector<StatsSnapshot>& workers,
                         const std::vector<LatencySnapshot>* service_time,
                         const LiveFigures* live) {
  std::string out = "{";
  double idle_total = 0;
  if (live != nullptr) {
    out += fmt::format(
        "\"persona\": \"{}\", \"version\": \"{}\", \"uptime_s\": {:.6f}, \"window_s\": {:.6f}, ",
        live->persona, live->version, live->uptime_s, live->window_s);
    for (double idle : live->loop_idle_s) idle_total += idle;
  }
  out += "\"workers\": [";
  for (size_t i = 0; i < workers.size(); ++i) {
    double idle = live != nullptr && i < live->loop_idle_s.size() ? live->loop_idle_s[i] : 0;
    out += fmt::format("{}{{\"id\": {}, {}{}{}}}", i ? ", " : "", i, json_fields(workers[i]),
                       service_time != nullptr ? service_json((*service_time)[i]) : "",
                       live != nullptr ? live_json(workers[i], idle) : "");
  }
  StatsSnapshot total = total_of(workers);
  out += fmt::format("], \"total\": {{{}{}{}}}", json_fields(total),
                     service_time != nullptr ? service_json(latency_total(*service_time)) : "",
                     live != nullptr ? live_json(total, idle_total) : "");
  if (live != nullptr)
    out += fmt::format(", \"recent\": {{\"seconds\": {:.6f}, \"service_time_us\": {}}}",
                       live->recent_s, figures_json(live->recent));
  return out + "}\n";
}

}  // namespace hello
