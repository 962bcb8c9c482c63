#include "server/protocol.h"

#include <algorithm>

#include "base/check.h"

#include "http1/floor_session.h"
#include "http1/session.h"
#include "http2/h2_heart.h"
#include "websocket/ws_heart.h"

namespace hello {

Protocol protocol_at_accept(const ResponseTable& table) {
  return table.policy().no_parsing ? Protocol::floor : Protocol::http1;
}

Protocol protocol_at_first_read(Protocol at_accept, bool h2, bool alpn_h2, std::string_view first) {
  static constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  if (!h2) return at_accept;
  if (alpn_h2) return Protocol::http2;
  if (at_accept != Protocol::http1 || first.size() < 4) return at_accept;
  size_t n = std::min(first.size(), kPreface.size());
  return first.substr(0, n) == kPreface.substr(0, n) ? Protocol::http2 : at_accept;
}

Protocol protocol_after_upgrade(const Upgrade& u) {
  return u.to == Upgrade::To::websocket ? Protocol::websocket : Protocol::http2;
}

std::unique_ptr<Heart> make_heart(Protocol protocol, const ResponseTable& table,
                                  Accounting& accounting, const Limits& limits, Dice* dice,
                                  const H2Setup* h2) {
  switch (protocol) {
    case Protocol::floor:
      return std::make_unique<FloorSession>(table, accounting);
    case Protocol::http2:
      HELLO_CHECK(h2 != nullptr);
      return std::make_unique<H2Heart>(table, *h2, accounting);
    case Protocol::websocket:
      HELLO_CHECK(table.websocket() != nullptr);
      return std::make_unique<WsHeart>(*table.websocket(), accounting, dice);
    case Protocol::http1:
      break;
  }
  auto session = std::make_unique<Session>(table, accounting, limits, dice);
  if (h2 != nullptr && h2->h2c_upgrade) session->allow_h2c(true);
  return session;
}

}  // namespace hello
