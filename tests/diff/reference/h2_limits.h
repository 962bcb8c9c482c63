// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_limits.h), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
// The limits of an HTTP/2 connection and its defences against the known
// attacks (docs/http2.md#limits-and-floods): the nghttp2 options every
// session is made with, the SETTINGS the server sends first, and the
// per-connection budgets of the frames that cost the server work without
// being requests (PRIORITY, PING, SETTINGS, empty DATA, header blocks
// refused), as nginx and h2o keep them. Past a budget the connection
// ends with GOAWAY ENHANCE_YOUR_CALM. Everything is counted through the worker's Accounting.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "observe/accounting.h"
#include "reference/h2_stream.h"

namespace hello::reference {

// nghttp2's own defences, set on every session (h2_limits.cc says why each).
struct H2Defences {
  // SETTINGS entries in one frame (nghttp2_option_set_max_settings).
  static constexpr size_t kMaxSettingsEntries = 16;
  // PING and SETTINGS ACKs queued unsent (nghttp2_option_set_max_outbound_ack).
  static constexpr size_t kMaxOutboundAcks = 200;
  // RST_STREAMs received: a burst, then a rate a second (CVE-2023-44487).
  static constexpr uint64_t kResetBurst = 500;
  static constexpr uint64_t kResetRate = 33;
  // CONTINUATION frames after one HEADERS (CVE-2024-28182).
  static constexpr size_t kMaxContinuations = 8;
};

// One connection's guard: its budgets, its header block in progress and
// its open streams, reported to `accounting`.
class H2Guard {
 public:
  // The limits are the setup's: max_concurrent_streams,
  // max_header_list_bytes, max_body_bytes.
  H2Guard(const H2Setup& setup, Accounting& accounting) : setup_(setup), accounting_(accounting) {}
  ~H2Guard();
  H2Guard(const H2Guard&) = delete;
  H2Guard& operator=(const H2Guard&) = delete;

  // The options of every session (the caller deletes them).
  static nghttp2_option* options();
  // The server's SETTINGS, submitted first.
  void submit_settings(nghttp2_session* session) const;
  // Whether a SETTINGS payload (an upgrade's HTTP2-Settings, decoded) is
  // at most kMaxSettingsEntries entries, each holding a value its setting
  // may hold (RFC 9113 section 6.5.2: ENABLE_PUSH 0 or 1...).
  static bool settings_valid(std::string_view payload);

  // A frame's header arrived: the budgets and the counts of frames received.
  // Nonzero (for nghttp2) once a budget is spent: recv_failed() then ends
  // the session.
  int on_begin_frame(nghttp2_session* session, const nghttp2_frame_hd& hd);
  // A field of the header block in progress: false once the block is over
  // max_header_list_bytes.
  bool field_fits(size_t namelen, size_t valuelen);
  // The header block in progress is over max_header_list_bytes: its stream
  // is reset (REFUSED_STREAM), counted, and what the header callback
  // returns to nghttp2: the rest of the block is then decoded (HPACK's
  // table must follow it) but not checked or reported field by field, or,
  // past the budget of such blocks, the connection ends (recv_failed()).
  int refuse_header_list(nghttp2_session* session, int32_t stream_id);
  // A Content-Length's value: false if over max_body_bytes.
  bool length_fits(const uint8_t* value, size_t valuelen) const;
  // Resets a stream over a limit (RST_STREAM REFUSED_STREAM), counted.
  void refuse(nghttp2_session* session, int32_t stream_id, H2Limit limit);
  // A stream refused otherwise (the session's 413), counted.
  void over_limit(H2Limit limit) { accounting_.h2_over_limit(limit); }
  // A frame nghttp2 found invalid (lib_error): a stream over the stream limit is counted.
  void on_invalid_frame(int lib_error);
  // A frame went out: RST_STREAM and GOAWAY counted, and nghttp2's own
  // GOAWAYs for a flood (rapid reset, too many SETTINGS entries).
  void on_frame_sent(const nghttp2_frame& frame);
  // nghttp2_session_mem_recv() failed with `rv`: a flood (a budget, ACKs,
  // CONTINUATIONs) gets GOAWAY ENHANCE_YOUR_CALM, a bad preface GOAWAY
  // PROTOCOL_ERROR; the caller then sends what is queued and closes.
  void recv_failed(nghttp2_session* session, long rv);

  // The open-streams gauge: a request stream began, or ended.
  void stream_opened();
  void stream_closed();

 private:
  // The frames counted against a budget, in H2Flood's order from ping.
  enum Budgeted : uint8_t { ping, settings, priority, empty_data, refused_headers, kBudgeted };

  // Counts one frame against its budget: false once the budget is spent.
  bool spend(Budgeted frame);

  const H2Setup& setup_;
  Accounting& accounting_;
  uint32_t spent_[kBudgeted] = {};
  uint32_t streams_ = 0;        // request streams begun: each raises the budgets
  int32_t last_stream_ = 0;     // the highest stream id of a HEADERS so far
  bool bad_stream_id_ = false;  // a HEADERS below it on a stream never seen
  uint32_t open_ = 0;           // request streams open now
  size_t header_bytes_ = 0;     // of the header block in progress
  bool own_goaway_ = false;     // the session's error GOAWAY is ours, not nghttp2's
  std::optional<H2Flood> flooded_;
};

}  // namespace hello::reference
