// What a persona's framework does over WebSocket (docs/websocket.md): its
// echo path, its 101 and its answers to handshakes it refuses, byte for
// byte as captured (scripts/peers/websocket/), and its defaults: versions,
// permessage-deflate, the largest message, pings, the code it leaves with.
// Data only, like Persona; the table builds the bytes once.
#pragma once

#include <cstdint>
#include <string_view>

namespace hello {

// Why a request at a WebSocket path does not upgrade, checked in this
// order (RFC 6455 section 4.2.1).
enum class WsRefusalKind : uint8_t {
  plain,          // no Upgrade header: a plain GET
  not_websocket,  // Upgrade names no "websocket"
  no_connection,  // Connection has no "upgrade" token
  bad_version,    // Sec-WebSocket-Version is none the framework speaks
  bad_key,        // Sec-WebSocket-Key missing, repeated, or not 16 bytes in base64
};
inline constexpr int kWsRefusalKinds = 5;

// The answer to one kind of refused handshake.
struct WsRefusal {
  // The whole answer (status line, headers, blank line, body), {date}
  // standing for the Date value; empty: the persona's own answer of
  // `status` (its 404 or error page), by its usual keep-alive rules.
  std::string_view raw = {};
  int status = 400;
  bool closes = false;  // raw: the framework closes the connection after it
};

// Sec-WebSocket-Version values a framework accepts (13 is RFC 6455's).
inline constexpr uint8_t kWsVersion13 = 1;
inline constexpr uint8_t kWsVersion8 = 2;
inline constexpr uint8_t kWsVersion7 = 4;

struct WebSocketPersona {
  // The echo endpoint's path, from the framework's own documented example;
  // empty: the framework speaks no WebSocket.
  std::string_view path = {};
  // The 101's head, status line to the blank line included, with {date},
  // {accept} (the 28 bytes of Sec-WebSocket-Accept) and {extensions} (where
  // the Sec-WebSocket-Extensions line goes when permessage-deflate is agreed).
  std::string_view switching = {};
  // That line, whole, with CRLF: the framework's answer to
  // "permessage-deflate; client_max_window_bits" (docs/websocket.md).
  std::string_view extensions_line = {};
  uint8_t versions = kWsVersion13;
  WsRefusal refusals[kWsRefusalKinds] = {};
  // The framework negotiates permessage-deflate (RFC 7692) by default.
  bool deflate = false;
  // The largest message echoed; a longer one is closed with 1009 and this
  // reason. Where the framework has no limit the persona keeps one.
  uint64_t max_message = 1 << 20;
  std::string_view too_big_reason = {};
  // The framework pings every interval and closes with 1011 when no pong
  // came within the timeout; 0: it never pings.
  uint16_t ping_interval_s = 0;
  uint16_t ping_timeout_s = 0;
  // The code of the close frame a stopping server sends.
  uint16_t going_away = 1001;
};

}  // namespace hello
