// The one place a worker counts and logs. Every heart reports each answer
// as one protocol-neutral record (`Answered`); the connection reports what
// only it knows (bytes on the wire, service time, how it ended, the peer);
// the worker reports accepts and stalls. Accounting alone writes the
// counters, the service-time histogram and the access log, so a new
// protocol reports records and counts nothing itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string_view>

#include "observe/access_log.h"
#include "observe/counter.h"
#include "observe/latency_histogram.h"

namespace hello {

// Why a connection closed, counted once it has (hello_connections_closed_total).
enum class CloseReason : uint8_t {
  none,  // not decided yet: error when it closes
  limit,
  client,
  answered,
  keepalive_timeout,
  header_timeout,
  send_timeout,
  reset,
  shutdown,
  error,
};

// One answer, as its heart saw it.
struct Answered {
  // What the answer was to.
  enum class Kind : uint8_t {
    request,    // a complete request
    malformed,  // bytes rejected as malformed (a parse error)
    timed_out,  // a request that did not complete in time (408)
  };
  // What shaping did to it (docs/shaping.md).
  enum class Shaping : uint8_t {
    none,
    shaped,          // a shaped answer
    reset,           // no answer at all: the connection resets (status 0)
    bad_parameters,  // 400 for shaping parameters that do not parse
  };
  uint16_t status = 0;  // 0: no answer was sent
  Kind kind = Kind::request;
  Shaping shaping = Shaping::none;
  uint8_t http_minor = 1;
  bool http2 = false;       // over HTTP/2 (http_minor then means nothing)
  uint64_t body_bytes = 0;  // the body sent, for the log's size field
  // The request line, for the log; filled only while logging (logs()).
  // An empty method logs the request line as "-".
  std::string_view method;
  std::string_view target;
  // Also only while logging: a shaped answer's X-Hello-Shape-Decision
  // value, and when its request began (CLOCK_MONOTONIC ns) if the heart
  // knows better than the connection (an HTTP/2 stream); 0 otherwise.
  std::string_view decision;
  uint64_t began_ns = 0;
};

// The end of one TLS handshake (docs/tls.md).
struct TlsHandshake {
  enum class End : uint8_t {
    full,         // completed, a full handshake
    resumed,      // completed from a ticket
    version,      // failed: no version in common (a TLS 1.0-only client)
    cipher,       // failed: no cipher suite or group in common
    plain_http,   // plain HTTP to the TLS port (answered 400 in clear)
    other,        // failed otherwise: garbage, a bad record, the client's alert
    client_left,  // the client closed, or timed out, before the end
  };
  enum class Cipher : uint8_t { aes_128_gcm, aes_256_gcm, chacha20, other };
  End end = End::other;
  bool tls13 = false;  // completed: the version
  Cipher cipher = Cipher::other;
};

// An HTTP/2 stream reset for going over a limit (docs/http2.md).
enum class H2Limit : uint8_t { streams, header_list, body };
// An HTTP/2 connection ended for a flood, by what flooded.
enum class H2Flood : uint8_t {
  rapid_reset,      // RST_STREAMs beyond the reset rate (CVE-2023-44487)
  continuation,     // CONTINUATIONs beyond the count (CVE-2024-28182)
  ack,              // PING or SETTINGS ACKs one read calls for, beyond the count
  ping,             // PINGs beyond the connection's budget
  settings,         // SETTINGS beyond the budget, or with too many entries
  priority,         // PRIORITYs beyond the budget
  empty_data,       // DATA frames empty and not ending their stream, beyond the budget
  refused_headers,  // header blocks over the header list, or on a refused stream, beyond the budget
};

class Accounting {
 public:
  // Counts into `stats`; times answers into `service_time` and logs them to
  // `log` unless they are null.
  explicit Accounting(WorkerStats& stats, LatencyHistogram* service_time = nullptr,
                      AccessLog* log = nullptr)
      : stats_(stats), service_time_(service_time), log_(log) {}
  Accounting(const Accounting&) = delete;
  Accounting& operator=(const Accounting&) = delete;

  // True if answers are logged: hearts then fill in the request line.
  bool logs() const { return log_ != nullptr; }
  // The connection whose answers are reported next: its peer for the log,
  // and for the JSON log's service time when the first of them began and
  // when the others did (CLOCK_MONOTONIC ns, as the service-time histogram
  // counts them). Set by the connection before it feeds its heart; the
  // heart never sees it.
  void serving(std::string_view peer, uint16_t port, uint64_t first_began_ns,
               uint64_t rest_began_ns) {
    peer_ = peer;
    port_ = port;
    began_ns_ = first_began_ns;
    rest_began_ns_ = rest_began_ns;
  }

  // One answer of a heart.
  void answered(const Answered& a) {
    if (a.kind == Answered::Kind::request)
      stats_.requests.add();
    else if (a.kind == Answered::Kind::malformed)
      stats_.parse_errors.add();
    if (a.shaping != Answered::Shaping::none) [[unlikely]]
      count_shaping(a.shaping, a.status);
    if (a.status == 0) [[unlikely]]
      return;
    if (a.status < 300)
      stats_.responses_2xx.add();
    else if (a.status < 400) [[unlikely]]
      stats_.responses_3xx.add();  // a route file's or a shaped status
    else if (a.status < 500)
      stats_.responses_4xx.add();
    else
      stats_.responses_5xx.add();
    if (log_ != nullptr) [[unlikely]]
      log(a);
  }
  // A request of those answered() counted came over HTTP/2.
  void answered_h2() { stats_.requests_h2.add(); }
  // HTTP/2 frames and streams (docs/http2.md): the open-streams gauge,
  // RST_STREAM and GOAWAY by direction, limits and floods.
  void h2_stream_opened() { stats_.h2_streams_open.add(); }
  void h2_streams_closed(uint64_t n) { stats_.h2_streams_open.sub(n); }
  void h2_rst_stream(bool sent) { (sent ? stats_.h2_rst_sent : stats_.h2_rst_received).add(); }
  void h2_goaway(bool sent) { (sent ? stats_.h2_goaway_sent : stats_.h2_goaway_received).add(); }
  void h2_over_limit(H2Limit limit);
  void h2_flood(H2Flood flood);
  // WebSocket connections (docs/websocket.md): one upgraded and one ended,
  // a message echoed (`in` payload bytes read, `out` sent), close frames.
  void ws_upgraded() {
    stats_.ws_upgraded.add();
    stats_.ws_open.add();
  }
  // Its end: `line` is its access-log line (101, the payload bytes sent,
  // the time since the upgrade), logged while logging.
  void ws_ended(const Answered& line) {
    stats_.ws_open.sub(1);
    if (log_ != nullptr) [[unlikely]]
      log(line);
  }
  void ws_echoed(uint64_t in, uint64_t out) {
    stats_.ws_messages_in.add();
    stats_.ws_messages_out.add();
    stats_.ws_bytes_in.add(in);
    stats_.ws_bytes_out.add(out);
  }
  void ws_close_received() { stats_.ws_close_received.add(); }
  void ws_close_sent(uint16_t code);
  // `count` answers of 200 to plain requests, none logged (hello-floor).
  void answered_ok(uint32_t count) {
    stats_.requests.add(count);
    stats_.responses_2xx.add(count);
  }
  // Answers were handed to the kernel: the first `first_ns` after its
  // request began, the other `count - 1` after `rest_ns` each.
  void served(uint64_t first_ns, uint64_t rest_ns, uint32_t count) {
    if (service_time_ == nullptr || count == 0) return;
    service_time_->record(first_ns);
    if (count > 1) service_time_->record(rest_ns, count - 1);
  }
  void bytes_read(uint64_t n) { stats_.bytes_in.add(n); }
  void bytes_written(uint64_t n) { stats_.bytes_out.add(n); }

  // Connections: accepted and served, or over the limit (then closed with
  // CloseReason::limit); opened and closed as the worker lends them out.
  void accepted() { stats_.connections.add(); }
  void opened() { stats_.open.add(); }
  void closed(CloseReason why);
  uint64_t open() const { return stats_.open.get(); }
  void accept_failed() { stats_.accept_errors.add(); }
  // The worker's loop stalled (--stall).
  void stalled() { stats_.stalls.add(); }
  // A TLS handshake ended (--tls).
  void tls_handshake(const TlsHandshake& h);

  // Once a second: the log's timestamp, and its buffer handed to the writer.
  void tick(time_t now);
  // The last flush, at shutdown.
  void flush_final();

 private:
  void count_shaping(Answered::Shaping s, uint16_t status);
  void log(const Answered& a);

  WorkerStats& stats_;
  LatencyHistogram* service_time_;
  AccessLog* log_;
  std::string_view peer_;
  uint16_t port_ = 0;
  uint64_t began_ns_ = 0;       // of the next answer logged
  uint64_t rest_began_ns_ = 0;  // of those after it
};

}  // namespace hello
