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
     "ack (PING or SETTINGS ACKs queued), ping, settings, priority, empty_data."},
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

void family_head(std::string& out, std::string_view family, std::string_view help) {
  std::string_view type = family.ends_with("_total") ? "counter" : "gauge";
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", family, help, family,
                 type);
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

std::string metrics_text(const MetricsInput& in) {
  std::string out;
  auto put = std::back_inserter(out);
  const std::vector<StatsSnapshot>& workers = *in.workers;
  for (size_t i = 0; i < std::size(kStatsFields); ++i) {
    const StatsField& f = kStatsFields[i];
    if (f.metric.empty()) continue;
    if (i == 0 || kStatsFields[i - 1].metric != f.metric)
      family_head(out, f.metric, help_of(f.metric));
    for (size_t w = 0; w < workers.size(); ++w)
      fmt::format_to(put, "{}{{worker=\"{}\"{}{}}} {}\n", f.metric, w, f.labels.empty() ? "" : ",",
                     f.labels, workers[w].*f.value);
  }
  if (in.service_time != nullptr) {
    constexpr std::string_view kFamily = "hello_http_request_duration_seconds";
    fmt::format_to(put,
                   "# HELP {0} Service time: from a request's first byte to its answer handed to "
                   "the kernel.\n# TYPE {0} histogram\n",
                   kFamily);
    for (size_t w = 0; w < in.service_time->size(); ++w) {
      const LatencySnapshot& s = (*in.service_time)[w];
      for (uint64_t bound : kPrometheusBoundsNs)
        fmt::format_to(put, "{}_bucket{{worker=\"{}\",le=\"{}\"}} {}\n", kFamily, w,
                       static_cast<double>(bound) / 1e9, s.count_at_or_below(bound));
      fmt::format_to(put, "{}_bucket{{worker=\"{}\",le=\"+Inf\"}} {}\n", kFamily, w, s.count());
      fmt::format_to(put, "{}_sum{{worker=\"{}\"}} {:.9f}\n", kFamily, w,
                     static_cast<double>(s.sum_ns()) / 1e9);
      fmt::format_to(put, "{}_count{{worker=\"{}\"}} {}\n", kFamily, w, s.count());
    }
  }
  if (in.loops != nullptr) {
    family_head(out, "hello_event_loop_idle_seconds_total",
                "Seconds the worker's event loop waited for events (libuv's idle time).");
    for (size_t w = 0; w < in.loops->size(); ++w)
      fmt::format_to(put, "hello_event_loop_idle_seconds_total{{worker=\"{}\"}} {:.6f}\n", w,
                     (*in.loops)[w].idle_seconds);
  }
  family_head(out, "hello_build_info", "The build: version and persona; always 1.");
  fmt::format_to(put, "hello_build_info{{version=\"{}\",persona=\"{}\"}} 1\n", in.version,
                 in.persona);
  family_head(out, "hello_ready",
              "1 while /readyz answers 200 ready, 0 once a graceful stop has begun.");
  fmt::format_to(put, "hello_ready {}\n", in.ready ? 1 : 0);
  const ProcessFigures& p = in.process;
  family_head(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  fmt::format_to(put, "process_cpu_seconds_total {:.2f}\n", p.cpu_seconds);
  family_head(out, "process_resident_memory_bytes", "Resident memory size in bytes.");
  fmt::format_to(put, "process_resident_memory_bytes {}\n", p.resident_bytes);
  family_head(out, "process_open_fds", "Number of open file descriptors.");
  fmt::format_to(put, "process_open_fds {}\n", p.open_fds);
  family_head(out, "process_max_fds", "Maximum number of open file descriptors.");
  fmt::format_to(put, "process_max_fds {}\n", p.max_fds);
  family_head(out, "process_start_time_seconds",
              "Start time of the process since unix epoch in seconds.");
  fmt::format_to(put, "process_start_time_seconds {:.3f}\n", p.start_time_seconds);
  return out;
}

}  // namespace hello
