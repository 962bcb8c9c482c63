// The two expositions of /metrics from one fixed input: the text format
// byte for byte as it was before OpenMetrics (tests/fixtures/metrics/
// text-0.0.4.txt was written by the code of then), and OpenMetrics with
// its families, units, _created samples and # EOF. The strict parser of
// Python's prometheus_client reads both fixtures and a live server's
// answer in tests/observability/openmetrics_test.py.
#include "observe/metrics.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace hello {
namespace {

constexpr uint64_t kServiceTimesNs[] = {5'000, 15'000, 120'000, 3'000'000, 20'000'000'000};

// Two workers with a distinct count in every field, a few service times
// each (one above the top bucket), and fixed process figures.
struct SampleMetrics {
  std::vector<StatsSnapshot> workers;
  std::vector<LatencySnapshot> times;
  std::vector<LoopFigures> loops;
  MetricsInput input;

  SampleMetrics() : workers(2), loops{{1.25}, {2.5}} {
    for (size_t w = 0; w < 2; ++w) {
      for (size_t i = 0; i < std::size(kStatsFields); ++i)
        workers[w].*kStatsFields[i].value = 1000 * (w + 1) + i;
      LatencyHistogram h;
      for (uint64_t ns : kServiceTimesNs) h.record(ns * (w + 1));
      times.push_back(h.snapshot());
    }
    input.workers = &workers;
    input.service_time = &times;
    input.loops = &loops;
    input.process = {12.34, 4'567'890, 17, 1024, 1'700'000'000.125};
    input.persona = "sanic";
    input.version = "1.2.3";
  }
};

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HELLO_METRICS_FIXTURE_DIR) + "/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.starts_with(line + "\n") || text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Metrics, TextIsByteForByteWhatItWas) {
  SampleMetrics m;
  std::string golden = fixture("text-0.0.4.txt");
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(metrics_text(m.input), golden);
  EXPECT_EQ(metrics_text(m.input, MetricsFormat::prometheus_text), golden);
}

TEST(Metrics, OpenMetricsIsItsFixture) {
  SampleMetrics m;
  std::string golden = fixture("openmetrics-1.0.0.txt");
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(metrics_text(m.input, MetricsFormat::openmetrics), golden);
}

TEST(Metrics, ContentTypes) {
  EXPECT_EQ(content_type_of(MetricsFormat::openmetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_EQ(content_type_of(MetricsFormat::prometheus_text),
            "text/plain; version=0.0.4; charset=utf-8");
}

TEST(Metrics, OpenMetricsEndsWithEofAndOnlyThere) {
  SampleMetrics m;
  std::string om = metrics_text(m.input, MetricsFormat::openmetrics);
  ASSERT_TRUE(om.ends_with("\n# EOF\n"));
  EXPECT_EQ(om.find("# EOF"), om.size() - 6);
  EXPECT_EQ(metrics_text(m.input).find("# EOF"), std::string::npos);
  EXPECT_EQ(metrics_text(m.input).find("_created"), std::string::npos);
}

TEST(Metrics, OpenMetricsNamesCountersWithoutTotalAndSamplesWithIt) {
  SampleMetrics m;
  std::string om = metrics_text(m.input, MetricsFormat::openmetrics);
  for (const std::string& line : lines_of(om)) {
    if (line.starts_with("# TYPE ") || line.starts_with("# HELP ") || line.starts_with("# UNIT ")) {
      EXPECT_EQ(line.substr(7, line.find(' ', 7) - 7).find("_total"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(has_line(om, "# TYPE hello_http_requests counter"));
  EXPECT_TRUE(has_line(om, "hello_http_requests_total{worker=\"1\",code=\"4xx\"} 2007"));
  EXPECT_TRUE(has_line(om, "# TYPE process_cpu_seconds counter"));
  EXPECT_TRUE(has_line(om, "process_cpu_seconds_total 12.34"));
  // The text format has each family by its samples' name.
  EXPECT_TRUE(has_line(metrics_text(m.input), "# TYPE hello_http_requests_total counter"));
}

TEST(Metrics, OpenMetricsCreatedFollowsEachCounterAndHistogram) {
  SampleMetrics m;
  std::string om = metrics_text(m.input, MetricsFormat::openmetrics);
  EXPECT_NE(om.find("hello_http_requests_total{worker=\"0\",code=\"2xx\"} 1005\n"
                    "hello_http_requests_created{worker=\"0\",code=\"2xx\"} 1700000000.125\n"),
            std::string::npos);
  EXPECT_NE(om.find("hello_http_request_duration_seconds_count{worker=\"1\"} 5\n"
                    "hello_http_request_duration_seconds_created{worker=\"1\"} 1700000000.125\n"),
            std::string::npos);
  EXPECT_TRUE(has_line(om, "process_cpu_seconds_created 1700000000.125"));
  EXPECT_TRUE(has_line(om, "hello_event_loop_idle_seconds_created{worker=\"1\"} 1700000000.125"));
  // One _created per counter and histogram sample set, none for gauges.
  size_t totals = 0, histograms = 0, created = 0;
  for (const std::string& line : lines_of(om)) {
    if (line.starts_with("#")) continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    totals += name.ends_with("_total");
    histograms += name.ends_with("_count");
    created += name.ends_with("_created");
  }
  EXPECT_EQ(created, totals + histograms);
  EXPECT_EQ(om.find("hello_connections_open_created"), std::string::npos);
}

TEST(Metrics, OpenMetricsUnitsAreTheNamesSuffixes) {
  SampleMetrics m;
  std::string om = metrics_text(m.input, MetricsFormat::openmetrics);
  for (const char* line :
       {"# UNIT hello_http_request_duration_seconds seconds",
        "# UNIT hello_http_request_bytes bytes", "# UNIT hello_http_response_bytes bytes",
        "# UNIT hello_event_loop_idle_seconds seconds", "# UNIT process_cpu_seconds seconds",
        "# UNIT process_resident_memory_bytes bytes", "# UNIT process_start_time_seconds seconds",
        "# UNIT hello_websocket_payload_bytes bytes"})
    EXPECT_TRUE(has_line(om, line)) << line;
  size_t units = 0;
  for (const std::string& line : lines_of(om)) {
    if (!line.starts_with("# UNIT ")) continue;
    ++units;
    std::string family = line.substr(7, line.rfind(' ') - 7);
    EXPECT_TRUE(family.ends_with("_" + line.substr(line.rfind(' ') + 1))) << line;
  }
  EXPECT_EQ(units, 8u);
}

TEST(Metrics, OpenMetricsBuildIsAnInfo) {
  SampleMetrics m;
  std::string om = metrics_text(m.input, MetricsFormat::openmetrics);
  EXPECT_NE(om.find("# HELP hello_build The build: version and persona; always 1.\n"
                    "# TYPE hello_build info\n"
                    "hello_build_info{version=\"1.2.3\",persona=\"sanic\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics_text(m.input).find("# TYPE hello_build_info gauge\n"
                                       "hello_build_info{version=\"1.2.3\",persona=\"sanic\"} 1\n"),
            std::string::npos);
}

// Both formats have the same samples but for OpenMetrics's _created: the
// same series either way.
TEST(Metrics, BothFormatsHaveTheSameSamples) {
  SampleMetrics m;
  std::vector<std::string> text, om;
  for (const std::string& line : lines_of(metrics_text(m.input)))
    if (!line.starts_with("#")) text.push_back(line);
  for (const std::string& line : lines_of(metrics_text(m.input, MetricsFormat::openmetrics)))
    if (!line.starts_with("#") && line.find("_created") == std::string::npos) om.push_back(line);
  EXPECT_EQ(om, text);
}

}  // namespace
}  // namespace hello
