#include "server/protocol.h"

#include "http1/floor_session.h"
#include "http1/session.h"

namespace hello {

Protocol protocol_at_accept(const ResponseTable& table) {
  return table.policy().no_parsing ? Protocol::floor : Protocol::http1;
}

std::unique_ptr<Heart> make_heart(Protocol protocol, const ResponseTable& table,
                                  Accounting& accounting, const Limits& limits, Dice* dice) {
  switch (protocol) {
    case Protocol::floor:
      return std::make_unique<FloorSession>(table, accounting);
    case Protocol::http1:
      break;
  }
  return std::make_unique<Session>(table, accounting, limits, dice);
}

}  // namespace hello
