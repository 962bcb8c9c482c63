// Which protocol a connection speaks, chosen in one place at accept. Today
// that is HTTP/1 or, for a persona that parses nothing (hello-floor), the
// floor's CRLF CRLF counter; this is where ALPN after a TLS handshake and
// the HTTP/2 preface or an h2c Upgrade will choose too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "http/heart.h"

namespace hello {

class Accounting;
class Dice;
class ResponseTable;
struct Limits;

enum class Protocol : uint8_t {
  http1,  // llhttp: Session
  floor,  // no parsing: FloorSession
};
inline constexpr size_t kProtocols = 2;

// The protocol of a connection just accepted to serve `table`.
Protocol protocol_at_accept(const ResponseTable& table);

// A heart of `protocol` for a worker's connections.
std::unique_ptr<Heart> make_heart(Protocol protocol, const ResponseTable& table,
                                  Accounting& accounting, const Limits& limits, Dice* dice);

}  // namespace hello
