// A persona's WebSocket answers, built once like the rest of its table:
// the 101 with holes for the Date, the accept value and the extensions
// line, and the refusals it sends in bytes of its own. The Date is patched
// once a second with the table's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "persona/websocket.h"

namespace hello {

struct WsPrepared {
  std::string bytes;
  int32_t date_offset = -1;
  int32_t accept_offset = -1;  // the 101: the accept value's 28 bytes
  int32_t extensions_at = -1;  // the 101: where the extensions line goes
  bool closes = false;
};

class WsTable {
 public:
  // `more_paths`: echo paths of a route file, besides the persona's own.
  explicit WsTable(const WebSocketPersona& ws, std::vector<std::string> more_paths = {});

  const WebSocketPersona& persona() const { return ws_; }
  bool has_path(std::string_view path) const {
    if (path == ws_.path) return true;
    for (const std::string& p : more_paths_)
      if (p == path) return true;
    return false;
  }
  // The refusal of `kind` in bytes of its own, or null: the persona's own
  // answer of that status.
  const WsPrepared* refusal(WsRefusalKind kind) const {
    const WsPrepared& r = refusals_[static_cast<int>(kind)];
    return r.bytes.empty() ? nullptr : &r;
  }
  // Appends the 101 with `accept` (28 bytes) and, with `deflate`, the
  // extensions line.
  void append_switching(std::string& out, std::string_view accept, bool deflate) const;
  // Writes `date` (kHttpDateLength bytes) into every answer.
  void set_date(const char* date);

 private:
  const WebSocketPersona& ws_;
  std::vector<std::string> more_paths_;
  WsPrepared switching_;
  WsPrepared refusals_[kWsRefusalKinds];
};

}  // namespace hello
