// The one list of what a worker counts. WorkerStats (the live counters),
// StatsSnapshot (a copy), its +=, the exit summary and the --stats-json file
// are all made from it: a new counter is one line here.
#pragma once

#include <cstdint>

namespace hello {

// When a counter appears in the exit summary and the JSON.
enum class StatsShown : uint8_t {
  always,      // in every summary line and in the JSON
  if_nonzero,  // in the JSON always, in a summary line only when it happened
  live_only,   // in neither: a gauge for the --stats-interval line
  json_only,   // in the JSON (and /metrics) only
};

}  // namespace hello

// X(member, JSON object, JSON key, summary text, shown, metric, labels), in
// the order the summary, the JSON and /metrics print them:
//   member        the Counter of WorkerStats and the number of StatsSnapshot
//   JSON object   the object of --stats-json it is nested in, "" for none;
//                 the fields of one object are adjacent
//   JSON key      its key in --stats-json
//   summary text  its part of a summary line, {} standing for the number
//   shown         a StatsShown
//   metric        its Prometheus family on the admin port's /metrics
//                 (docs/observability.md), "" for none: a counter if it
//                 ends in _total, else a gauge; the rows of one family are
//                 adjacent
//   labels        its labels in that family besides worker, "" for none
// The keys and texts are what docs/running.md documents; the unit test
// tests/unit/stats_report_test.cc holds them byte for byte.
// clang-format off
// One row of HTTP/2's flood closes (docs/http2.md): every kind is a label
// of one family, and its JSON key and label are its name.
#define HELLO_H2_FLOOD(X, kind, text)                                                 \
  X(h2_flood_##kind, "http2", "flood_" #kind, "{} " text " floods", if_nonzero,      \
    "hello_http2_flood_closes_total", "kind=\"" #kind "\"")

#define HELLO_STATS_FIELDS(X)                                                                  \
  /* Accepted. */                                                                              \
  X(connections, "", "connections", "{} connections", always,                                  \
    "hello_connections_accepted_total", "")                                                    \
  /* Complete requests answered. */                                                            \
  X(requests, "", "requests", "{} requests", always,                                           \
    "", "")                                                                                    \
  /* Of them, over HTTP/2 (--h2, docs/http2.md); the rest were HTTP/1. */                   \
  X(requests_h2, "", "requests_h2", "{} over HTTP/2", if_nonzero,                              \
    "hello_http2_requests_total", "")                                                          \
  X(bytes_in, "", "bytes_in", "{} bytes in", always,                                           \
    "hello_http_request_bytes_total", "")                                                      \
  /* Response bytes produced, headers and bodies. */                                           \
  X(bytes_out, "", "bytes_out", "{} bytes out", always,                                        \
    "hello_http_response_bytes_total", "")                                                     \
  /* Responses by status class, error responses included. */                                   \
  X(responses_2xx, "responses", "2xx", "2xx {}", always,                                       \
    "hello_http_requests_total", "code=\"2xx\"")                                               \
  X(responses_3xx, "responses", "3xx", "3xx {}", if_nonzero,                                   \
    "hello_http_requests_total", "code=\"3xx\"")                                               \
  X(responses_4xx, "responses", "4xx", "4xx {}", always,                                       \
    "hello_http_requests_total", "code=\"4xx\"")                                               \
  X(responses_5xx, "responses", "5xx", "5xx {}", always,                                       \
    "hello_http_requests_total", "code=\"5xx\"")                                               \
  /* Requests rejected as malformed. */                                                        \
  X(parse_errors, "", "parse_errors", "{} parse errors", always,                               \
    "hello_http_parse_errors_total", "")                                                       \
  X(log_lines_dropped, "", "log_lines_dropped", "{} log lines dropped", always,                \
    "hello_access_log_lines_dropped_total", "")                                                \
  /* Closed at once: over --max-connections. */                                                \
  X(connections_rejected, "", "connections_rejected", "{} connections rejected", if_nonzero,   \
    "hello_connections_closed_total", "reason=\"limit\"")                                       \
  /* Connections closed, by why (Connection::CloseReason). */                                  \
  X(closed_client, "closed", "client", "", json_only,                                          \
    "hello_connections_closed_total", "reason=\"client\"")                                      \
  X(closed_answered, "closed", "answered", "", json_only,                                      \
    "hello_connections_closed_total", "reason=\"answered\"")                                    \
  X(closed_keepalive_timeout, "closed", "keepalive_timeout", "", json_only,                    \
    "hello_connections_closed_total", "reason=\"keepalive_timeout\"")                           \
  X(closed_header_timeout, "closed", "header_timeout", "", json_only,                          \
    "hello_connections_closed_total", "reason=\"header_timeout\"")                              \
  X(closed_send_timeout, "closed", "send_timeout", "", json_only,                              \
    "hello_connections_closed_total", "reason=\"send_timeout\"")                                \
  X(closed_reset, "closed", "reset", "", json_only,                                            \
    "hello_connections_closed_total", "reason=\"reset\"")                                       \
  X(closed_shutdown, "closed", "shutdown", "", json_only,                                      \
    "hello_connections_closed_total", "reason=\"shutdown\"")                                    \
  X(closed_error, "closed", "error", "", json_only,                                            \
    "hello_connections_closed_total", "reason=\"error\"")                                       \
  /* Failed accepts, such as EMFILE. */                                                        \
  X(accept_errors, "", "accept_errors", "{} accept errors", if_nonzero,                        \
    "hello_accept_errors_total", "")                                                           \
  /* Whole-worker pauses of --stall. */                                                        \
  X(stalls, "", "stalls", "{} stalls", if_nonzero,                                             \
    "hello_stalls_total", "")                                                                  \
  /* Answers shaped (docs/shaping.md), resets among them, and 400s for bad parameters. */      \
  X(shaped, "shaping", "shaped", "{} shaped", if_nonzero,                                      \
    "hello_shaped_responses_total", "kind=\"any\"")                                            \
  X(resets, "shaping", "resets", "{} reset", if_nonzero,                                       \
    "hello_shaped_responses_total", "kind=\"reset\"")                                          \
  /* Of the shaped answers, those sent with a 5xx status: injected, not the server's own. */   \
  X(shaped_5xx, "shaping", "5xx", "", json_only,                                               \
    "hello_shaped_responses_total", "kind=\"5xx\"")                                            \
  X(shape_errors, "shaping", "errors", "{} bad shaping parameters", if_nonzero,                \
    "hello_shaping_parameter_errors_total", "")                                                \
  /* TLS handshakes (--tls, docs/tls.md): completed full or resumed, failed by why. */        \
  X(tls_full, "tls", "full", "{} TLS handshakes", if_nonzero,                                  \
    "hello_tls_handshakes_total", "kind=\"full\"")                                             \
  X(tls_resumed, "tls", "resumed", "{} resumed", if_nonzero,                                   \
    "hello_tls_handshakes_total", "kind=\"resumed\"")                                          \
  X(tls_failed_version, "tls", "failed_version", "{} TLS failed (version)", if_nonzero,        \
    "hello_tls_handshake_failures_total", "reason=\"version\"")                                \
  X(tls_failed_cipher, "tls", "failed_cipher", "{} TLS failed (no cipher)", if_nonzero,        \
    "hello_tls_handshake_failures_total", "reason=\"cipher\"")                                 \
  X(tls_failed_plain_http, "tls", "failed_plain_http", "{} plain HTTP to TLS", if_nonzero,     \
    "hello_tls_handshake_failures_total", "reason=\"plain_http\"")                             \
  X(tls_failed_other, "tls", "failed_other", "{} TLS failed (other)", if_nonzero,              \
    "hello_tls_handshake_failures_total", "reason=\"other\"")                                  \
  X(tls_failed_client_left, "tls", "failed_client_left", "{} TLS failed (client left)",        \
    if_nonzero, "hello_tls_handshake_failures_total", "reason=\"client_left\"")                \
  /* Completed handshakes by version and by the cipher of their suite. */                       \
  X(tls_v1_2, "tls", "tls1_2", "", json_only,                                                  \
    "hello_tls_versions_total", "version=\"TLSv1.2\"")                                         \
  X(tls_v1_3, "tls", "tls1_3", "", json_only,                                                  \
    "hello_tls_versions_total", "version=\"TLSv1.3\"")                                         \
  X(tls_aes_128_gcm, "tls", "aes_128_gcm", "", json_only,                                      \
    "hello_tls_ciphers_total", "cipher=\"AES-128-GCM\"")                                       \
  X(tls_aes_256_gcm, "tls", "aes_256_gcm", "", json_only,                                      \
    "hello_tls_ciphers_total", "cipher=\"AES-256-GCM\"")                                       \
  X(tls_chacha20, "tls", "chacha20_poly1305", "", json_only,                                   \
    "hello_tls_ciphers_total", "cipher=\"CHACHA20-POLY1305\"")                                 \
  X(tls_cipher_other, "tls", "other_cipher", "", json_only,                                    \
    "hello_tls_ciphers_total", "cipher=\"other\"")                                             \
  /* HTTP/2 (--h2, docs/http2.md): request streams open now (a gauge), RST_STREAM and GOAWAY  \
     frames sent and received, streams reset over a limit, connections ended for a flood. */    \
  X(h2_streams_open, "http2", "streams_open", "{} HTTP/2 streams open", if_nonzero,           \
    "hello_http2_streams_open", "")                                                            \
  X(h2_rst_sent, "http2", "rst_stream_sent", "{} RST_STREAM sent", if_nonzero,                \
    "hello_http2_rst_stream_total", "direction=\"sent\"")                                       \
  X(h2_rst_received, "http2", "rst_stream_received", "{} RST_STREAM received", if_nonzero,    \
    "hello_http2_rst_stream_total", "direction=\"received\"")                                   \
  X(h2_goaway_sent, "http2", "goaway_sent", "{} GOAWAY sent", if_nonzero,                     \
    "hello_http2_goaway_total", "direction=\"sent\"")                                           \
  X(h2_goaway_received, "http2", "goaway_received", "{} GOAWAY received", if_nonzero,         \
    "hello_http2_goaway_total", "direction=\"received\"")                                       \
  X(h2_over_streams, "http2", "over_max_streams", "{} streams over the limit", if_nonzero,    \
    "hello_http2_limit_resets_total", "limit=\"streams\"")                                      \
  X(h2_over_header_list, "http2", "over_header_list", "{} over the header list size",         \
    if_nonzero, "hello_http2_limit_resets_total", "limit=\"header_list\"")                      \
  X(h2_over_body, "http2", "over_body", "{} over the body size", if_nonzero,                  \
    "hello_http2_limit_resets_total", "limit=\"body\"")                                         \
  HELLO_H2_FLOOD(X, rapid_reset, "rapid-reset")                                                \
  HELLO_H2_FLOOD(X, continuation, "CONTINUATION")                                              \
  HELLO_H2_FLOOD(X, ack, "ACK")                                                                \
  HELLO_H2_FLOOD(X, ping, "PING")                                                              \
  HELLO_H2_FLOOD(X, settings, "SETTINGS")                                                      \
  HELLO_H2_FLOOD(X, priority, "PRIORITY")                                                      \
  HELLO_H2_FLOOD(X, empty_data, "empty-DATA")                                                  \
  HELLO_H2_FLOOD(X, refused_headers, "refused-headers")                                        \
  /* WebSocket (docs/websocket.md): upgrades, open now (a gauge), messages and payload         \
     bytes each way, close frames received and sent (by code). */                              \
  X(ws_upgraded, "websocket", "upgraded", "{} WebSocket upgrades", if_nonzero,                 \
    "hello_websocket_upgrades_total", "")                                                      \
  X(ws_open, "websocket", "connections_open", "", json_only,                                   \
    "hello_websocket_connections_open", "")                                                    \
  X(ws_messages_in, "websocket", "messages_in", "{} WebSocket messages", if_nonzero,           \
    "hello_websocket_messages_total", "direction=\"in\"")                                      \
  X(ws_messages_out, "websocket", "messages_out", "", json_only,                               \
    "hello_websocket_messages_total", "direction=\"out\"")                                     \
  X(ws_bytes_in, "websocket", "bytes_in", "", json_only,                                       \
    "hello_websocket_payload_bytes_total", "direction=\"in\"")                                 \
  X(ws_bytes_out, "websocket", "bytes_out", "", json_only,                                     \
    "hello_websocket_payload_bytes_total", "direction=\"out\"")                                \
  X(ws_close_received, "websocket", "closes_received", "", json_only,                          \
    "hello_websocket_closes_total", "direction=\"received\",code=\"any\"")                     \
  X(ws_close_sent_1000, "websocket", "closes_sent_1000", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1000\"")                        \
  X(ws_close_sent_1001, "websocket", "closes_sent_1001", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1001\"")                        \
  X(ws_close_sent_1002, "websocket", "closes_sent_1002", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1002\"")                        \
  X(ws_close_sent_1007, "websocket", "closes_sent_1007", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1007\"")                        \
  X(ws_close_sent_1008, "websocket", "closes_sent_1008", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1008\"")                        \
  X(ws_close_sent_1009, "websocket", "closes_sent_1009", "", json_only,                        \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"1009\"")                        \
  X(ws_close_sent_other, "websocket", "closes_sent_other", "", json_only,                      \
    "hello_websocket_closes_total", "direction=\"sent\",code=\"other\"")                       \
  /* Open now. */                                                                              \
  X(open, "", "", "", live_only,                                                               \
    "hello_connections_open", "")
// clang-format on
