#include "observe/stats_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

namespace hello {
namespace {

// docs/running.md's example: two workers, nothing rejected.
std::vector<StatsSnapshot> readme_workers() {
  StatsSnapshot w0;
  w0.connections = 32;
  w0.requests = w0.responses_2xx = 123775;
  w0.bytes_in = 4951000;
  w0.bytes_out = 13739025;
  StatsSnapshot w1;
  w1.connections = 33;
  w1.requests = w1.responses_2xx = 121460;
  w1.bytes_in = 4858400;
  w1.bytes_out = 13482060;
  return {w0, w1};
}

TEST(StatsReport, SummaryTextIsReadmes) {
  EXPECT_EQ(summary_text(readme_workers()),
            "summary:\n"
            " worker 0: 32 connections, 123775 requests, 4951000 bytes in, 13739025 bytes out, "
            "2xx 123775, 4xx 0, 5xx 0, 0 parse errors, 0 log lines dropped\n"
            " worker 1: 33 connections, 121460 requests, 4858400 bytes in, 13482060 bytes out, "
            "2xx 121460, 4xx 0, 5xx 0, 0 parse errors, 0 log lines dropped\n"
            "    total: 65 connections, 245235 requests, 9809400 bytes in, 27221085 bytes out, "
            "2xx 245235, 4xx 0, 5xx 0, 0 parse errors, 0 log lines dropped\n");
}

// Every counter with its own value: rejected connections, accept errors and
// stalls are mentioned only when they happened, the open count never.
StatsSnapshot every_counter() {
  StatsSnapshot s;
  s.connections = 1;
  s.connections_rejected = 2;
  s.accept_errors = 3;
  s.open = 4;
  s.requests = 5;
  s.bytes_in = 6;
  s.bytes_out = 7;
  s.responses_2xx = 8;
  s.responses_4xx = 9;
  s.responses_5xx = 10;
  s.parse_errors = 11;
  s.log_lines_dropped = 12;
  s.shaped = 13;
  s.resets = 14;
  s.shape_errors = 15;
  s.responses_3xx = 16;
  s.stalls = 17;
  s.tls_full = 18;
  s.tls_resumed = 19;
  s.tls_failed_version = 20;
  s.tls_failed_cipher = 21;
  s.tls_failed_plain_http = 22;
  s.tls_failed_other = 23;
  s.tls_failed_client_left = 24;
  s.tls_v1_2 = 25;
  s.tls_v1_3 = 26;
  s.tls_aes_128_gcm = 27;
  s.tls_aes_256_gcm = 28;
  s.tls_chacha20 = 29;
  s.tls_cipher_other = 30;
  s.shaped_5xx = 31;
  s.requests_h2 = 4;
  return s;
}

TEST(StatsReport, SummaryTextMentionsRejectsAcceptErrorsAndStallsOnlyWhenThereAreSome) {
  StatsSnapshot none;
  EXPECT_EQ(
      summary_text({every_counter(), none}),
      "summary:\n"
      " worker 0: 1 connections, 5 requests, 4 over HTTP/2, 6 bytes in, 7 bytes out, 2xx 8, 3xx "
      "16, 4xx 9, "
      "5xx 10, "
      "11 parse errors, 12 log lines dropped, 2 connections rejected, 3 accept errors, "
      "17 stalls, 13 shaped, 14 reset, 15 bad shaping parameters, 18 TLS handshakes, 19 resumed, "
      "20 TLS failed (version), 21 TLS failed (no cipher), 22 plain HTTP to TLS, "
      "23 TLS failed (other), 24 TLS failed (client left)\n"
      " worker 1: 0 connections, 0 requests, 0 bytes in, 0 bytes out, 2xx 0, 4xx 0, 5xx 0, "
      "0 parse errors, 0 log lines dropped\n"
      "    total: 1 connections, 5 requests, 4 over HTTP/2, 6 bytes in, 7 bytes out, 2xx 8, "
      "3xx 16, 4xx 9, 5xx 10, "
      "11 parse errors, 12 log lines dropped, 2 connections rejected, 3 accept errors, "
      "17 stalls, 13 shaped, 14 reset, 15 bad shaping parameters, 18 TLS handshakes, 19 resumed, "
      "20 TLS failed (version), 21 TLS failed (no cipher), 22 plain HTTP to TLS, "
      "23 TLS failed (other), 24 TLS failed (client left)\n");
}

TEST(StatsReport, SummaryJsonOfAKnownSnapshot) {
  StatsSnapshot none;
  EXPECT_EQ(
      summary_json({every_counter(), none}),
      "{\"workers\": ["
      "{\"id\": 0, \"connections\": 1, \"requests\": 5, \"requests_h2\": 4, \"bytes_in\": 6, "
      "\"bytes_out\": 7, "
      "\"responses\": {\"2xx\": 8, \"3xx\": 16, \"4xx\": 9, \"5xx\": 10}, \"parse_errors\": 11, "
      "\"log_lines_dropped\": 12, \"connections_rejected\": 2, \"closed\": {\"client\": 0, "
      "\"answered\": 0, \"keepalive_timeout\": 0, \"header_timeout\": 0, \"send_timeout\": 0, "
      "\"reset\": 0, \"shutdown\": 0, \"error\": 0}, \"accept_errors\": 3, \"stalls\": "
      "17, "
      "\"shaping\": {\"shaped\": 13, \"resets\": 14, \"5xx\": 31, \"errors\": 15}, "
      "\"tls\": {\"full\": 18, \"resumed\": 19, \"failed_version\": 20, \"failed_cipher\": 21, "
      "\"failed_plain_http\": 22, \"failed_other\": 23, \"failed_client_left\": 24, "
      "\"tls1_2\": 25, \"tls1_3\": 26, \"aes_128_gcm\": 27, \"aes_256_gcm\": 28, "
      "\"chacha20_poly1305\": 29, \"other_cipher\": 30}, "
      "\"http2\": {\"streams_open\": 0, \"rst_stream_sent\": 0, \"rst_stream_received\": 0, "
      "\"goaway_sent\": 0, \"goaway_received\": 0, \"over_max_streams\": 0, "
      "\"over_header_list\": 0, \"over_body\": 0, \"flood_rapid_reset\": 0, "
      "\"flood_continuation\": 0, \"flood_ack\": 0, \"flood_ping\": 0, \"flood_settings\": 0, "
      "\"flood_priority\": 0, \"flood_empty_data\": 0, \"flood_refused_headers\": 0}, "
      "\"websocket\": {\"upgraded\": 0, \"connections_open\": 0, \"messages_in\": 0, "
      "\"messages_out\": 0, \"bytes_in\": 0, "
      "\"bytes_out\": 0, \"closes_received\": 0, \"closes_sent_1000\": 0, \"closes_sent_1001\": 0, "
      "\"closes_sent_1002\": 0, \"closes_sent_1007\": 0, \"closes_sent_1008\": 0, "
      "\"closes_sent_1009\": 0, \"closes_sent_other\": 0}}, "
      "{\"id\": 1, \"connections\": 0, \"requests\": 0, \"requests_h2\": 0, \"bytes_in\": 0, "
      "\"bytes_out\": 0, "
      "\"responses\": {\"2xx\": 0, \"3xx\": 0, \"4xx\": 0, \"5xx\": 0}, \"parse_errors\": 0, "
      "\"log_lines_dropped\": 0, \"connections_rejected\": 0, \"closed\": {\"client\": 0, "
      "\"answered\": 0, \"keepalive_timeout\": 0, \"header_timeout\": 0, \"send_timeout\": 0, "
      "\"reset\": 0, \"shutdown\": 0, \"error\": 0}, \"accept_errors\": 0, \"stalls\": 0, "
      "\"shaping\": {\"shaped\": 0, \"resets\": 0, \"5xx\": 0, \"errors\": 0}, "
      "\"tls\": {\"full\": 0, \"resumed\": 0, \"failed_version\": 0, \"failed_cipher\": 0, "
      "\"failed_plain_http\": 0, \"failed_other\": 0, \"failed_client_left\": 0, "
      "\"tls1_2\": 0, \"tls1_3\": 0, \"aes_128_gcm\": 0, \"aes_256_gcm\": 0, "
      "\"chacha20_poly1305\": 0, \"other_cipher\": 0}, "
      "\"http2\": {\"streams_open\": 0, \"rst_stream_sent\": 0, \"rst_stream_received\": 0, "
      "\"goaway_sent\": 0, \"goaway_received\": 0, \"over_max_streams\": 0, "
      "\"over_header_list\": 0, \"over_body\": 0, \"flood_rapid_reset\": 0, "
      "\"flood_continuation\": 0, \"flood_ack\": 0, \"flood_ping\": 0, \"flood_settings\": 0, "
      "\"flood_priority\": 0, \"flood_empty_data\": 0, \"flood_refused_headers\": 0}, "
      "\"websocket\": {\"upgraded\": 0, \"connections_open\": 0, \"messages_in\": 0, "
      "\"messages_out\": 0, \"bytes_in\": 0, "
      "\"bytes_out\": 0, \"closes_received\": 0, \"closes_sent_1000\": 0, \"closes_sent_1001\": 0, "
      "\"closes_sent_1002\": 0, \"closes_sent_1007\": 0, \"closes_sent_1008\": 0, "
      "\"closes_sent_1009\": 0, \"closes_sent_other\": 0}}], "
      "\"total\": {\"connections\": 1, \"requests\": 5, \"requests_h2\": 4, \"bytes_in\": 6, "
      "\"bytes_out\": 7, "
      "\"responses\": {\"2xx\": 8, \"3xx\": 16, \"4xx\": 9, \"5xx\": 10}, \"parse_errors\": 11, "
      "\"log_lines_dropped\": 12, \"connections_rejected\": 2, \"closed\": {\"client\": 0, "
      "\"answered\": 0, \"keepalive_timeout\": 0, \"header_timeout\": 0, \"send_timeout\": 0, "
      "\"reset\": 0, \"shutdown\": 0, \"error\": 0}, \"accept_errors\": 3, \"stalls\": "
      "17, "
      "\"shaping\": {\"shaped\": 13, \"resets\": 14, \"5xx\": 31, \"errors\": 15}, "
      "\"tls\": {\"full\": 18, \"resumed\": 19, \"failed_version\": 20, \"failed_cipher\": 21, "
      "\"failed_plain_http\": 22, \"failed_other\": 23, \"failed_client_left\": 24, "
      "\"tls1_2\": 25, \"tls1_3\": 26, \"aes_128_gcm\": 27, \"aes_256_gcm\": 28, "
      "\"chacha20_poly1305\": 29, \"other_cipher\": 30}, "
      "\"http2\": {\"streams_open\": 0, \"rst_stream_sent\": 0, \"rst_stream_received\": 0, "
      "\"goaway_sent\": 0, \"goaway_received\": 0, \"over_max_streams\": 0, "
      "\"over_header_list\": 0, \"over_body\": 0, \"flood_rapid_reset\": 0, "
      "\"flood_continuation\": 0, \"flood_ack\": 0, \"flood_ping\": 0, \"flood_settings\": 0, "
      "\"flood_priority\": 0, \"flood_empty_data\": 0, \"flood_refused_headers\": 0}, "
      "\"websocket\": {\"upgraded\": 0, \"connections_open\": 0, \"messages_in\": 0, "
      "\"messages_out\": 0, \"bytes_in\": 0, "
      "\"bytes_out\": 0, \"closes_received\": 0, \"closes_sent_1000\": 0, \"closes_sent_1001\": 0, "
      "\"closes_sent_1002\": 0, \"closes_sent_1007\": 0, \"closes_sent_1008\": 0, "
      "\"closes_sent_1009\": 0, \"closes_sent_other\": 0}}}\n");
}

// Service times in the summary and the JSON: three requests of 10 us, 20 us
// and 3 ms on worker 0, none on worker 1.
TEST(StatsReport, ServiceTimePercentilesFollowTheCounters) {
  LatencyHistogram h;
  for (uint64_t ns : {10000u, 20000u, 3000000u}) h.record(ns);
  std::vector<LatencySnapshot> times{h.snapshot(), LatencySnapshot{}};
  StatsSnapshot none;
  std::string text = summary_text({none, none}, &times);
  EXPECT_NE(text.find("service time (first byte of a request to its answer handed to the kernel):\n"
                      " worker 0: 3 requests, p50 20.0us, p90 3.00ms, p99 3.00ms, p99.9 3.00ms, "
                      "max 3.00ms\n"
                      " worker 1: 0 requests, p50 0.0us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    total: 3 requests, p50 20.0us, p90 3.00ms"), std::string::npos) << text;
  std::string json = summary_json({none, none}, &times);
  EXPECT_NE(json.find("\"service_time_us\": {\"count\": 3, \"p50\": 20.0, \"p90\": 3000.0, "
                      "\"p99\": 3000.0, \"p99_9\": 3000.0, \"max\": 3000.0}}, {\"id\": 1, "),
            std::string::npos)
      << json;
  EXPECT_TRUE(
      json.ends_with("\"service_time_us\": {\"count\": 3, \"p50\": 20.0, \"p90\": 3000.0, "
                     "\"p99\": 3000.0, \"p99_9\": 3000.0, \"max\": 3000.0}}}\n"))
      << json;
  EXPECT_EQ(summary_json({none, none}).find("service_time"), std::string::npos)
      << "without service times, the JSON is as before";
}

// The service-time block counts what the requests line counts, or a line
// says what it adds or leaves out (issue 34: "768476 requests" beside
// "768478 requests" with nothing said).
TEST(StatsReport, ServiceTimeCountIsTheRequestsOrSaysWhy) {
  LatencyHistogram h;
  for (int i = 0; i < 5; ++i) h.record(10000);
  std::vector<LatencySnapshot> times{h.snapshot()};
  StatsSnapshot w;
  w.requests = 5;
  std::string same = summary_text({w}, &times);
  EXPECT_NE(same.find("    total: 5 requests, p50 "), std::string::npos) << same;
  EXPECT_TRUE(same.ends_with("max 10.0us\n")) << "nothing to explain:\n" << same;
  w.requests = 3;
  std::string more = summary_text({w}, &times);
  EXPECT_TRUE(
      more.ends_with("    total: 5 requests, p50 10.0us, p90 10.0us, p99 10.0us, "
                     "p99.9 10.0us, max 10.0us\n"
                     "    (2 answers timed beyond the 3 requests: answers to malformed "
                     "requests and 408s at the header timeout are timed, not counted as "
                     "requests)\n"))
      << more;
  w.requests = 9;
  std::string fewer = summary_text({w}, &times);
  EXPECT_TRUE(
      fewer.ends_with("max 10.0us\n    (4 of the 9 requests not timed: a request "
                      "answered by a shaped reset over HTTP/1 sends nothing to time)\n"))
      << fewer;
}

TEST(StatsReport, IntervalLineCountsRequestsPerSecondAndOpenConnections) {
  StatsSnapshot a, b, c, d;
  c.requests = 300;
  c.open = 4;
  d.requests = 100;
  d.open = 2;
  EXPECT_EQ(interval_line({a, b}, {c, d}, 2.0),
            "stats: 200 req/s (w0 150, w1 50), 6 open connections\n");
}

// A value per field of kStatsFields that no other field has and that is
// found in text only where it was printed.
uint64_t value_of(size_t field) {
  return 900001 + field;
}

TEST(StatsFields, SnapshotCopiesAndSumsEveryCounter) {
  WorkerStats counters;
  for (size_t i = 0; i < std::size(kStatsFields); ++i)
    (counters.*kStatsFields[i].counter).add(value_of(i));
  StatsSnapshot s = StatsSnapshot::of(counters);
  StatsSnapshot twice = s;
  twice += s;
  for (size_t i = 0; i < std::size(kStatsFields); ++i) {
    EXPECT_EQ(s.*kStatsFields[i].value, value_of(i)) << i;
    EXPECT_EQ(twice.*kStatsFields[i].value, 2 * value_of(i)) << i;
  }
  // Nothing but the table's fields: a snapshot is its numbers.
  EXPECT_EQ(sizeof(StatsSnapshot), std::size(kStatsFields) * sizeof(uint64_t));
  EXPECT_EQ(sizeof(WorkerStats), std::size(kStatsFields) * sizeof(Counter));
}

// Every field the table reports is in both the summary text and the JSON,
// where the table says; the live-only ones are in neither.
TEST(StatsFields, EveryFieldAppearsInTheTextAndTheJson) {
  StatsSnapshot s;
  for (size_t i = 0; i < std::size(kStatsFields); ++i) s.*kStatsFields[i].value = value_of(i);
  std::string text = summary_text({s});
  std::string json = summary_json({s});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element worker, total;
  ASSERT_EQ(doc["workers"].at(0).get(worker), simdjson::SUCCESS) << json;
  ASSERT_EQ(doc["total"].get(total), simdjson::SUCCESS) << json;

  for (size_t i = 0; i < std::size(kStatsFields); ++i) {
    const StatsField& f = kStatsFields[i];
    std::string number = std::to_string(value_of(i));
    if (f.shown == StatsShown::live_only) {
      EXPECT_EQ(text.find(number), std::string::npos) << i;
      EXPECT_EQ(json.find(number), std::string::npos) << i;
      continue;
    }
    if (f.shown == StatsShown::json_only) {
      EXPECT_EQ(text.find(number), std::string::npos) << i;
    } else {
      ASSERT_NE(f.text.find("{}"), std::string_view::npos) << f.text;
      std::string shown = fmt::format(fmt::runtime(f.text), value_of(i));
      // Once for the worker, once for the total.
      size_t first = text.find(shown);
      ASSERT_NE(first, std::string::npos) << shown << " not in\n" << text;
      EXPECT_NE(text.find(shown, first + 1), std::string::npos) << shown << " once in\n" << text;
    }
    for (simdjson::dom::element o : {worker, total}) {
      simdjson::dom::element in = o;
      if (!f.json_object.empty()) {
        ASSERT_EQ(o[f.json_object].get(in), simdjson::SUCCESS) << f.json_object;
      }
      uint64_t got = 0;
      ASSERT_EQ(in[f.json_key].get(got), simdjson::SUCCESS) << f.json_key << " not in " << json;
      EXPECT_EQ(got, value_of(i)) << f.json_key;
    }
  }
}

// /stats for the live page: the clock and window first, each worker's and
// the total's open connections and loop idle time, the last second after
// the total; without `live`, the --stats-json shape is unchanged.
TEST(StatsReport, LiveFiguresForTheLivePage) {
  StatsSnapshot w0, w1;
  w0.open = 3;
  w1.open = 4;
  w0.requests = 10;
  LatencyHistogram h;
  h.record(20000);
  std::vector<LatencySnapshot> times{h.snapshot(), LatencySnapshot{}};
  LiveFigures live{"sanic", "0.1.0", 12.5, 2.25, {0.75, 1.5}, 1.001, {}};
  live.recent.count = 7;
  live.recent.p99_us = 42.5;
  std::string json = summary_json({w0, w1}, &times, &live);
  EXPECT_TRUE(
      json.starts_with("{\"persona\": \"sanic\", \"version\": \"0.1.0\", \"uptime_s\": "
                       "12.500000, \"window_s\": 2.250000, \"workers\": [{\"id\": 0, "))
      << json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(int64_t(doc["workers"].at(0)["open"]), 3);
  EXPECT_EQ(int64_t(doc["workers"].at(1)["open"]), 4);
  EXPECT_EQ(int64_t(doc["total"]["open"]), 7);
  EXPECT_DOUBLE_EQ(double(doc["workers"].at(1)["loop_idle_s"]), 1.5);
  EXPECT_DOUBLE_EQ(double(doc["total"]["loop_idle_s"]), 2.25);
  EXPECT_EQ(int64_t(doc["total"]["service_time_us"]["count"]), 1);
  EXPECT_DOUBLE_EQ(double(doc["recent"]["seconds"]), 1.001);
  EXPECT_EQ(int64_t(doc["recent"]["service_time_us"]["count"]), 7);
  EXPECT_DOUBLE_EQ(double(doc["recent"]["service_time_us"]["p99"]), 42.5);
  EXPECT_EQ(summary_json({w0, w1}, &times), summary_json({w0, w1}, &times, nullptr));
  EXPECT_EQ(summary_json({w0, w1}, &times).find("\"open\""), std::string::npos);
}

}  // namespace
}  // namespace hello
