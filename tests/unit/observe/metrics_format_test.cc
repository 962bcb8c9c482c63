#include "observe/metrics_format.h"

#include <gtest/gtest.h>

namespace hello {
namespace {

constexpr MetricsFormat kOm = MetricsFormat::openmetrics;
constexpr MetricsFormat kText = MetricsFormat::prometheus_text;

// What Prometheus 2.42 (Debian 12) sends with every scrape.
constexpr std::string_view kPrometheus =
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

TEST(MetricsFormat, PrometheusGetsOpenMetrics) {
  EXPECT_EQ(negotiate_metrics_format(kPrometheus), kOm);
  AcceptWeights w = accept_weights(kPrometheus);
  EXPECT_EQ(w.openmetrics, 1000);
  EXPECT_EQ(w.prometheus_text, 500);
}

TEST(MetricsFormat, NoAcceptTextAndWildcardsGetText) {
  for (std::string_view accept :
       {"", "*/*", "text/plain", "text/plain; version=0.0.4", "text/*", "application/*",
        "application/json", "text/html, */*;q=0.8", "application/*;q=1, text/plain;q=0.5"})
    EXPECT_EQ(negotiate_metrics_format(accept), kText) << accept;
}

TEST(MetricsFormat, OpenMetricsNamedGetsIt) {
  for (std::string_view accept :
       {"application/openmetrics-text", "application/openmetrics-text; version=1.0.0",
        "Application/OpenMetrics-Text;Version=1.0.0",
        "application/openmetrics-text;version=\"1.0.0\"",
        "application/openmetrics-text;q=0.5, text/plain;q=0.5",
        "text/plain;q=0.2, application/openmetrics-text;q=0.3",
        "application/openmetrics-text; charset=utf-8; q=0.9, */*; q=0.1",
        "text/plain;version=0.0.4;q=0.4,\tapplication/openmetrics-text ; version=1.0.0 ; q=0.5"})
    EXPECT_EQ(negotiate_metrics_format(accept), kOm) << accept;
}

TEST(MetricsFormat, WeightsDecide) {
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;q=0.5, text/plain"), kText);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;q=0.5, */*"), kText);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;q=0.5, */*;q=0.4"), kOm);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;q=0.001, text/plain;q=0"), kOm);
  EXPECT_EQ(negotiate_metrics_format("text/plain;q=0.999, application/openmetrics-text"), kOm);
}

TEST(MetricsFormat, QZeroMeansNo) {
  for (std::string_view accept :
       {"application/openmetrics-text;q=0", "application/openmetrics-text;q=0.000",
        "application/openmetrics-text;q=0, */*", "application/openmetrics-text;version=1.0.0;q=0",
        "application/openmetrics-text;version=1.0.0;q=0, application/openmetrics-text",
        "text/plain;q=0, application/openmetrics-text;q=0"})
    EXPECT_EQ(negotiate_metrics_format(accept), kText) << accept;
}

TEST(MetricsFormat, TheMostSpecificRangeDecides) {
  // RFC 9110 section 12.5.1: text/plain;version=0.0.4 over text/plain over
  // text/* over */*.
  EXPECT_EQ(accept_weights("*/*;q=0.9, text/*;q=0.3").prometheus_text, 300);
  EXPECT_EQ(accept_weights("text/plain;version=0.0.4;q=0.2, text/plain;q=0.7").prometheus_text,
            200);
  EXPECT_EQ(accept_weights("application/openmetrics-text;q=0.6, application/openmetrics-text;"
                           "version=1.0.0;q=0.4")
                .openmetrics,
            400);
  // Another version does not match at all.
  EXPECT_EQ(accept_weights("application/openmetrics-text;version=0.0.1").openmetrics, 0);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;version=0.0.1"), kText);
  EXPECT_EQ(accept_weights("text/plain;version=0.0.3, */*;q=0.1").prometheus_text, 100);
  // A wildcard never counts for OpenMetrics.
  EXPECT_EQ(accept_weights("*/*, application/*").openmetrics, 0);
}

TEST(MetricsFormat, QValues) {
  EXPECT_EQ(accept_weights("text/plain;q=1").prometheus_text, 1000);
  EXPECT_EQ(accept_weights("text/plain;q=1.000").prometheus_text, 1000);
  EXPECT_EQ(accept_weights("text/plain;Q=0.5").prometheus_text, 500);
  EXPECT_EQ(accept_weights("text/plain;q=0.25").prometheus_text, 250);
  EXPECT_EQ(accept_weights("text/plain;q=0.125").prometheus_text, 125);
  EXPECT_EQ(accept_weights("text/plain;q=0.").prometheus_text, 0);
  // Not qvalues: the range is skipped.
  for (std::string_view accept :
       {"text/plain;q=1.5", "text/plain;q=2", "text/plain;q=0.1234", "text/plain;q=-1",
        "text/plain;q=", "text/plain;q=.5", "text/plain;q=1.001", "text/plain;q=0,5"})
    EXPECT_EQ(accept_weights(accept).prometheus_text, 0) << accept;
  // Parameters after the weight are extensions, not the type's.
  EXPECT_EQ(accept_weights("application/openmetrics-text;q=0.5;version=0.0.1").openmetrics, 500);
}

TEST(MetricsFormat, MalformedRangesAreSkipped) {
  for (std::string_view accept :
       {"application/openmetrics-text;version", "application/openmetrics-text;=1",
        "openmetrics-text", "/openmetrics-text", "application/", "*/openmetrics-text",
        "application/openmetrics text", "application/openmetrics-text;q=x", ",,;,"})
    EXPECT_EQ(negotiate_metrics_format(accept), kText) << accept;
  EXPECT_EQ(negotiate_metrics_format("bad range, application/openmetrics-text"), kOm);
  // A comma or semicolon inside a quoted parameter value splits nothing.
  EXPECT_EQ(accept_weights("text/plain;foo=\"a,b;q=0\";q=0.3").prometheus_text, 300);
  EXPECT_EQ(
      accept_weights("text/plain;foo=\"a\\\",q=0\", application/openmetrics-text").openmetrics,
      1000);
  EXPECT_EQ(
      accept_weights("text/plain;foo=\"a\\\",q=0\", application/openmetrics-text").prometheus_text,
      1000);
}

}  // namespace
}  // namespace hello
