#include "observe/metrics.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>

namespace hello {

namespace {

// The # HELP line of each family of HELLO_STATS_FIELDS.
struct FamilyHelp {
  std::string_view family;
  std::string_view help;
};
constexpr FamilyHelp kHelp[] = {
    {"hello_connections_accepted_total", "Connections accepted."},
    {"hello_http2_requests_total",
     "Requests answered over HTTP/2 (--h2), of those counted by hello_http_requests_total."},
    {"hello_http_request_bytes_total", "Request bytes read."},
    {"hello_http_response_bytes_total", "Response bytes produced, headers and bodies."},
    {"hello_http_requests_total", "Responses sent, by status class (code)."},
    {"hello_http_parse_errors_total", "Requests rejected as malformed (each got a 4xx or 5xx)."},
    {"hello_access_log_lines_dropped_total",
     "Access-log lines lost to a consumer slower than the server."},
    {"hello_connections_closed_total",
     "Connections closed, by reason: limit (over --max-connections, at once), client (it closed "
     "or reset), answered (after an answer that ends it), keepalive_timeout, header_timeout, "
     "send_timeout, reset (a shaped reset), shutdown, error."},
    {"hello_accept_errors_total", "Failed accepts, such as running out of descriptors."},
    {"hello_stalls_total", "Whole-worker pauses of --stall."},
    {"hello_shaped_responses_total",
     "Shaped answers (kind any), those answered by a TCP reset (kind reset), and those sent with "
     "a 5xx status (kind 5xx): 5xx injected by shaping, not the server's own."},
    {"hello_shaping_parameter_errors_total", "400s for bad shaping parameters."},
    {"hello_tls_handshakes_total", "TLS handshakes completed: full, or resumed from a ticket."},
    {"hello_tls_handshake_failures_total",
     "TLS handshakes that failed, by reason: version (no version in common), cipher (no cipher "
     "suite or group in common), plain_http (plain HTTP to the TLS port, answered 400 in clear), "
     "other (garbage, a bad record, the client's alert), client_left (closed or timed out first)."},
    {"hello_tls_versions_total", "TLS handshakes completed, by version."},
    {"hello_tls_ciphers_total", "TLS handshakes completed, by the cipher of their suite."},
    {"hello_http2_streams_open", "HTTP/2 request streams open now (--h2)."},
    {"hello_http2_rst_stream_total", "HTTP/2 RST_STREAM frames, by direction (sent, received)."},
    {"hello_http2_goaway_total", "HTTP/2 GOAWAY frames, by direction (sent, received)."},
    {"hello_http2_limit_resets_total",
     "HTTP/2 streams refused for a limit: streams (over SETTINGS_MAX_CONCURRENT_STREAMS), "
     "header_list (over --max-header-bytes), body (over --max-body-bytes)."},
    {"hello_http2_flood_closes_total",
     "HTTP/2 connections ended with GOAWAY for a flood, by kind: rapid_reset, continuation, "
     "ack (PING or SETTINGS ACKs queued), ping, settings, priority, empty_data, "
     "refused_headers (header blocks refused, or on a refused stream)."},
    {"hello_websocket_upgrades_total", "Connections upgraded to WebSocket."},
    {"hello_websocket_connections_open", "WebSocket connections open now."},
    {"hello_websocket_messages_total",
     "WebSocket messages, by direction (in: read whole, out: "
     "echoed)."},
    {"hello_websocket_payload_bytes_total", "WebSocket message payload bytes, by direction."},
    {"hello_websocket_closes_total",
     "WebSocket close frames: received (any code), and sent by "
     "code (1000, 1001, 1002, 1007, 1008, 1009, other)."},
    {"hello_connections_open", "Connections open now."},
};

constexpr std::string_view help_of(std::string_view family) {
  for (const FamilyHelp& h : kHelp)
    if (h.family == family) return h.help;
  return {};
}

// Every family of HELLO_STATS_FIELDS has its help, and its rows are adjacent.
constexpr bool families_documented_and_adjacent() {
  for (size_t i = 0; i < std::size(kStatsFields); ++i) {
    std::string_view family = kStatsFields[i].metric;
    if (family.empty()) continue;
    if (help_of(family).empty()) return false;
    if (i > 0 && kStatsFields[i - 1].metric == family) continue;
    for (size_t j = 0; j < i; ++j)
      if (kStatsFields[j].metric == family) return false;
  }
  return true;
}
static_assert(families_documented_and_adjacent(), "HELLO_STATS_FIELDS: a metric family");

// Nothing in a # HELP line to escape: OpenMetrics escapes a backslash, a
// double quote and a newline there, the text format all but the quote.
constexpr bool help_needs_no_escape() {
  for (const FamilyHelp& h : kHelp)
    if (h.help.find_first_of("\\\"\n") != std::string_view::npos) return false;
  return true;
}
static_assert(help_needs_no_escape(), "kHelp: a help text to escape");

// A family's # TYPE, in the order of Exposition::head's names. The text
// format has no info type: there an info is a gauge of 1 named ..._info, as
// Prometheus's own exporters write it.
enum class Kind : uint8_t { counter, gauge, histogram, info };

// The OpenMetrics family of samples named `name`: a counter's name without
// _total, an info's without _info; the text format names a family by its
// samples (a histogram's by what precedes _bucket, _sum and _count).
constexpr std::string_view family_of(std::string_view name, Kind kind) {
  if (kind == Kind::counter && name.ends_with("_total")) name.remove_suffix(6);
  if (kind == Kind::info && name.ends_with("_info")) name.remove_suffix(5);
  return name;
}

// The unit an OpenMetrics family's name ends in, "" for none: its # UNIT
// must be that suffix.
constexpr std::string_view unit_of(std::string_view family) {
  for (std::string_view unit : {std::string_view("seconds"), std::string_view("bytes")})
    if (family.size() > unit.size() && family.ends_with(unit) &&
        family[family.size() - unit.size() - 1] == '_')
      return unit;
  return {};
}
static_assert(unit_of("hello_http_request_duration_seconds") == "seconds");
static_assert(unit_of(family_of("hello_http_request_bytes_total", Kind::counter)) == "bytes");
static_assert(unit_of("hello_connections_open").empty() && unit_of("bytes").empty());

// Appends one exposition in one format: the families' heads, and in
// OpenMetrics the _created samples the text format does not have.
struct Exposition {
  std::string& out;
  MetricsFormat format;
  double created_at;  // seconds since the Unix epoch: when every counter began at 0

  bool openmetrics() const { return format == MetricsFormat::openmetrics; }

  // The # HELP and # TYPE lines of the family of the samples named `name`,
  // and in OpenMetrics its # UNIT where it has one.
  void head(std::string_view name, Kind kind, std::string_view help) {
    constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram", "info"};
    bool om = openmetrics();
    std::string_view family = om ? family_of(name, kind) : name;
    std::string_view type = kind == Kind::info && !om ? "gauge" : kTypes[static_cast<size_t>(kind)];
    fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} {2}\n", family, help, type);
    // An info has no unit.
    if (std::string_view unit = unit_of(family); om && kind != Kind::info && !unit.empty())
      fmt::format_to(std::back_inserter(out), "# UNIT {} {}\n", family, unit);
  }

  // In OpenMetrics, the _created sample of worker `w`'s counter (samples
  // named `name`) or histogram with `labels` besides worker; nothing in the
  // text format.
  void created(std::string_view name, Kind kind, size_t w, std::string_view labels = {}) {
    if (!openmetrics()) return;
    fmt::format_to(std::back_inserter(out), "{}_created{{worker=\"{}\"{}{}}} {:.3f}\n",
                   family_of(name, kind), w, labels.empty() ? "" : ",", labels, created_at);
  }
};

Kind kind_of_stats_family(std::string_view family) {
  return family.ends_with("_total") ? Kind::counter : Kind::gauge;
}

// The families of HELLO_STATS_FIELDS, a sample per worker and field.
void stats_families(Exposition& x, const std::vector<StatsSnapshot>& workers) {
  auto put = std::back_inserter(x.out);
  for (size_t i = 0; i < std::size(kStatsFields); ++i) {
    const StatsField& f = kStatsFields[i];
    if (f.metric.empty()) continue;
    Kind kind = kind_of_stats_family(f.metric);
    if (i == 0 || kStatsFields[i - 1].metric != f.metric) x.head(f.metric, kind, help_of(f.metric));
    for (size_t w = 0; w < workers.size(); ++w) {
      fmt::format_to(put, "{}{{worker=\"{}\"{}{}}} {}\n", f.metric, w, f.labels.empty() ? "" : ",",
                     f.labels, workers[w].*f.value);
      if (kind == Kind::counter) x.created(f.metric, kind, w, f.labels);
    }
  }
}

// The service-time histogram, one per worker.
void service_time_family(Exposition& x, const std::vector<LatencySnapshot>& times) {
  constexpr std::string_view kFamily = "hello_http_request_duration_seconds";
  auto put = std::back_inserter(x.out);
  x.head(kFamily, Kind::histogram,
         "Service time: from a request's first byte to its answer handed to the kernel.");
  for (size_t w = 0; w < times.size(); ++w) {
    const LatencySnapshot& s = times[w];
    for (uint64_t bound : kPrometheusBoundsNs)
      fmt::format_to(put, "{}_bucket{{worker=\"{}\",le=\"{}\"}} {}\n", kFamily, w,
                     static_cast<double>(bound) / 1e9, s.count_at_or_below(bound));
    fmt::format_to(put, "{}_bucket{{worker=\"{}\",le=\"+Inf\"}} {}\n", kFamily, w, s.count());
    fmt::format_to(put, "{}_sum{{worker=\"{}\"}} {:.9f}\n", kFamily, w,
                   static_cast<double>(s.sum_ns()) / 1e9);
    fmt::format_to(put, "{}_count{{worker=\"{}\"}} {}\n", kFamily, w, s.count());
    x.created(kFamily, Kind::histogram, w);
  }
}

// The standard process_* families.
void process_families(Exposition& x, const ProcessFigures& p) {
  auto put = std::back_inserter(x.out);
  x.head("process_cpu_seconds_total", Kind::counter,
         "Total user and system CPU time spent in seconds.");
  fmt::format_to(put, "process_cpu_seconds_total {:.2f}\n", p.cpu_seconds);
  if (x.openmetrics()) fmt::format_to(put, "process_cpu_seconds_created {:.3f}\n", x.created_at);
  x.head("process_resident_memory_bytes", Kind::gauge, "Resident memory size in bytes.");
  fmt::format_to(put, "process_resident_memory_bytes {}\n", p.resident_bytes);
  x.head("process_open_fds", Kind::gauge, "Number of open file descriptors.");
  fmt::format_to(put, "process_open_fds {}\n", p.open_fds);
  x.head("process_max_fds", Kind::gauge, "Maximum number of open file descriptors.");
  fmt::format_to(put, "process_max_fds {}\n", p.max_fds);
  x.head("process_start_time_seconds", Kind::gauge,
         "Start time of the process since unix epoch in seconds.");
  fmt::format_to(put, "process_start_time_seconds {:.3f}\n", p.start_time_seconds);
}

}  // namespace

ProcessFigures read_process_figures(double start_time_seconds) {
  ProcessFigures p;
  p.start_time_seconds = start_time_seconds;
  if (FILE* f = fopen("/proc/self/stat", "r")) {
    // Fields 14 and 15, utime and stime in clock ticks, after the command
    // name in parentheses (which may hold spaces).
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    const char* p_end = strrchr(buf, ')');
    unsigned long utime = 0, stime = 0;
    if (p_end != nullptr && sscanf(p_end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                                   &utime, &stime) == 2)
      p.cpu_seconds =
          static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    unsigned long size = 0, resident = 0;
    if (fscanf(f, "%lu %lu", &size, &resident) == 2)
      p.resident_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    fclose(f);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    while (struct dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++p.open_fds;
    closedir(d);
    if (p.open_fds > 0) --p.open_fds;  // the directory's own descriptor
  }
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) p.max_fds = limit.rlim_cur;
  return p;
}

std::string metrics_text(const MetricsInput& in, MetricsFormat format) {
  std::string out;
  Exposition x{out, format, in.process.start_time_seconds};
  auto put = std::back_inserter(out);
  stats_families(x, *in.workers);
  if (in.service_time != nullptr) service_time_family(x, *in.service_time);
  if (in.loops != nullptr) {
    constexpr std::string_view kName = "hello_event_loop_idle_seconds_total";
    x.head(kName, Kind::counter,
           "Seconds the worker's event loop waited for events (libuv's idle time).");
    for (size_t w = 0; w < in.loops->size(); ++w) {
      fmt::format_to(put, "{}{{worker=\"{}\"}} {:.6f}\n", kName, w, (*in.loops)[w].idle_seconds);
      x.created(kName, Kind::counter, w);
    }
  }
  x.head("hello_build_info", Kind::info, "The build: version and persona; always 1.");
  fmt::format_to(put, "hello_build_info{{version=\"{}\",persona=\"{}\"}} 1\n", in.version,
                 in.persona);
  x.head("hello_ready", Kind::gauge,
         "1 while /readyz answers 200 ready, 0 once a graceful stop has begun.");
  fmt::format_to(put, "hello_ready {}\n", in.ready ? 1 : 0);
  process_families(x, in.process);
  if (x.openmetrics()) out += "# EOF\n";
  return out;
}

}  // namespace hello
