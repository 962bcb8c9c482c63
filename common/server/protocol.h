// Which protocol a connection speaks, chosen in one place: at accept,
// HTTP/1 or, for a persona that parses nothing (hello-floor), the floor's
// CRLF CRLF counter; with --h2, at the first read, HTTP/2 when its TLS
// handshake agreed on h2 (ALPN) or when the first bytes are its preface
// (prior knowledge); and the protocol an HTTP/1 request switches to
// (Upgrade: h2c). The connection reaches these through its context and
// never names a protocol itself (docs/http2.md, docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "http/heart.h"

namespace hello {

class Accounting;
class Dice;
struct H2Setup;
class ResponseTable;
struct Limits;

enum class Protocol : uint8_t {
  http1,      // llhttp: Session
  floor,      // no parsing: FloorSession
  http2,      // nghttp2: H2Heart
  websocket,  // RFC 6455 after an Upgrade: WsHeart (docs/websocket.md)
};
inline constexpr size_t kProtocols = 4;

// The protocol of a connection just accepted to serve `table`.
Protocol protocol_at_accept(const ResponseTable& table);

// The protocol of a connection accepted as `at_accept` once its first
// read brought `first`, with --h2 (`h2`): HTTP/2 if its TLS handshake
// agreed on it (`alpn_h2`), or if the bytes begin its preface
// ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", RFC 9113 section 3.4; no
// HTTP/1 request begins with "PRI ").
Protocol protocol_at_first_read(Protocol at_accept, bool h2, bool alpn_h2, std::string_view first);

// The protocol a connection switches to when its heart reports
// Fed::upgrade with the request `u`: HTTP/2 (Upgrade: h2c) or a WebSocket.
Protocol protocol_after_upgrade(const Upgrade& u);

// A heart of `protocol` for a worker's connections; `h2` is needed for
// Protocol::http2.
std::unique_ptr<Heart> make_heart(Protocol protocol, const ResponseTable& table,
                                  Accounting& accounting, const Limits& limits, Dice* dice,
                                  const H2Setup* h2);

}  // namespace hello
