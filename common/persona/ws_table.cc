#include "persona/ws_table.h"

#include <cstring>
#include <utility>

#include "base/check.h"
#include "http/http_date.h"

namespace hello {

namespace {

constexpr size_t kAcceptLength = 28;

// Builds `p` from `text`, its slots filled in the order they come: {date}
// with a placeholder Date, {accept} with 28 placeholder bytes, {extensions}
// with nothing; each slot's offset is noted.
void build(WsPrepared& p, std::string_view text) {
  static constexpr std::string_view kDate = "{date}";
  static constexpr std::string_view kAccept = "{accept}";
  static constexpr std::string_view kExtensions = "{extensions}";
  p.bytes.clear();
  while (!text.empty()) {
    size_t open = text.find('{');
    p.bytes.append(text.substr(0, open));
    if (open == std::string_view::npos) break;
    text.remove_prefix(open);
    int32_t here = static_cast<int32_t>(p.bytes.size());
    if (text.starts_with(kDate)) {
      p.date_offset = here;
      p.bytes.append(kHttpDateLength, 'D');
      text.remove_prefix(kDate.size());
    } else if (text.starts_with(kAccept)) {
      p.accept_offset = here;
      p.bytes.append(kAcceptLength, 'A');
      text.remove_prefix(kAccept.size());
    } else if (text.starts_with(kExtensions)) {
      p.extensions_at = here;
      text.remove_prefix(kExtensions.size());
    } else {
      p.bytes.push_back('{');
      text.remove_prefix(1);
    }
  }
}

}  // namespace

WsTable::WsTable(const WebSocketPersona& ws, std::vector<std::string> more_paths)
    : ws_(ws), more_paths_(std::move(more_paths)) {
  build(switching_, ws.switching);
  // Every framework sends the accept value before the extensions line.
  HELLO_CHECK(switching_.accept_offset >= 0 && switching_.accept_offset < switching_.extensions_at);
  for (int i = 0; i < kWsRefusalKinds; ++i) {
    const WsRefusal& r = ws.refusals[i];
    if (r.raw.empty()) continue;
    build(refusals_[i], r.raw);
    refusals_[i].closes = r.closes;
  }
}

void WsTable::append_switching(std::string& out, std::string_view accept, bool deflate) const {
  HELLO_CHECK(accept.size() == kAcceptLength);
  size_t at = out.size();
  const std::string& b = switching_.bytes;
  size_t split = static_cast<size_t>(switching_.extensions_at);
  out.append(b, 0, split);
  if (deflate) out.append(ws_.extensions_line);
  out.append(b, split, std::string::npos);
  memcpy(out.data() + at + switching_.accept_offset, accept.data(), kAcceptLength);
}

void WsTable::set_date(const char* date) {
  auto patch = [&](WsPrepared& p) {
    if (p.date_offset >= 0) memcpy(p.bytes.data() + p.date_offset, date, kHttpDateLength);
  };
  patch(switching_);
  for (WsPrepared& r : refusals_) patch(r);
}

}  // namespace hello
