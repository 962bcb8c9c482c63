// Which exposition the admin port's /metrics answers with: Prometheus text
// 0.0.4, as it always has, or OpenMetrics 1.0.0 to a scraper whose Accept
// header asks for it (docs/observability.md). Socket-free; the admin port
// calls it once per scrape.
#pragma once

#include <cstdint>
#include <string_view>

namespace hello {

enum class MetricsFormat : uint8_t {
  prometheus_text,  // text/plain; version=0.0.4
  openmetrics,      // application/openmetrics-text; version=1.0.0
};

// The Content-Type of an answer in `format`.
constexpr std::string_view content_type_of(MetricsFormat format) {
  return format == MetricsFormat::openmetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

// How much an Accept header wants each format, in thousandths (its q-value,
// 0 to 1000) of the most specific media range that matches it (RFC 9110
// section 12.5.1): "application/openmetrics-text" with version 1.0.0 or
// none for OpenMetrics; "text/plain" with version 0.0.4 or none, "text/*"
// and "*/*" for the text format. OpenMetrics counts only where named.
struct AcceptWeights {
  uint16_t openmetrics = 0;
  uint16_t prometheus_text = 0;
};

// The weights of `accept`, a whole Accept header (several joined with
// ","); media ranges that do not parse are skipped.
AcceptWeights accept_weights(std::string_view accept);

// The format to answer `accept` with: OpenMetrics where the header names it
// with a weight above 0 and at least that of the text format; the text
// format otherwise, a missing header ("") included.
MetricsFormat negotiate_metrics_format(std::string_view accept);

}  // namespace hello
