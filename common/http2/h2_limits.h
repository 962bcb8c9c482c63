// The limits of an HTTP/2 connection and its defences against the known
// attacks (docs/http2.md#limits-and-floods): the SETTINGS the server
// sends first, and the
// per-connection budgets of the frames that cost the server work without
// being requests (PRIORITY, PING, SETTINGS, empty DATA, header blocks
// refused), as nginx and h2o keep them. Past a budget the connection
// ends with GOAWAY ENHANCE_YOUR_CALM. Everything is counted through the worker's Accounting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http2/h2_stream.h"
#include "observe/accounting.h"

namespace hello {

// The defences nghttp2 had as options, kept by the connection
// (http2/h2_connection.h; h2_limits.cc says why each).
struct H2Defences {
  // SETTINGS entries in one frame: past it, GOAWAY ENHANCE_YOUR_CALM.
  static constexpr size_t kMaxSettingsEntries = 16;
  // PING and SETTINGS ACKs one read may call for.
  static constexpr size_t kMaxOutboundAcks = 200;
  // RST_STREAMs received: a burst, then a rate a second (CVE-2023-44487).
  static constexpr uint64_t kResetBurst = 500;
  static constexpr uint64_t kResetRate = 33;
  // CONTINUATION frames after one HEADERS (CVE-2024-28182).
  static constexpr size_t kMaxContinuations = 8;
};

// One connection's budgets and counts, reported to `accounting`.
class H2Guard {
 public:
  // The frames counted against a budget, in H2Flood's order from ping.
  enum Budgeted : uint8_t { ping, settings, priority, empty_data, refused_headers, kBudgeted };

  H2Guard(const H2Setup& setup, Accounting& accounting) : setup_(setup), accounting_(accounting) {}
  ~H2Guard();
  H2Guard(const H2Guard&) = delete;
  H2Guard& operator=(const H2Guard&) = delete;

  // The server's SETTINGS payload (what entries, in what order).
  size_t settings_payload(uint8_t* out) const;
  // Counts one frame against its budget: false once the budget is spent
  // (flood() then says which).
  bool spend(Budgeted frame);
  H2Flood flood() const { return flood_; }
  // A field of the header block in progress: false once the block is over
  // max_header_list_bytes. begin_block() starts a block's count.
  void begin_block() { header_bytes_ = 0; }
  bool field_fits(size_t namelen, size_t valuelen);
  void over_limit(H2Limit limit) { accounting_.h2_over_limit(limit); }

  // The open-streams gauge: a request stream began, or ended.
  void stream_opened();
  void stream_closed();

 private:
  const H2Setup& setup_;
  Accounting& accounting_;
  uint32_t spent_[kBudgeted] = {};
  uint32_t streams_ = 0;     // request streams begun: each raises the budgets
  uint32_t open_ = 0;        // request streams open now
  size_t header_bytes_ = 0;  // of the header block in progress
  H2Flood flood_ = H2Flood::ping;
};

}  // namespace hello
