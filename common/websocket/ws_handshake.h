// The opening handshake's server side (RFC 6455 section 4.2): whether a
// request at a WebSocket path upgrades, or which refusal it gets, and the
// Sec-WebSocket-Accept value. The HTTP/1 reader keeps the fields as they
// come; this judges them once the request is complete.
#pragma once

#include <cstdint>
#include <string_view>

#include "persona/websocket.h"

namespace hello {

// What the request said, as the reader kept it (values trimmed of blanks).
struct WsHandshakeFields {
  bool upgrade_seen = false;        // an Upgrade header came
  std::string_view upgrade;         // its value(s), comma-joined
  bool connection_upgrade = false;  // Connection lists "upgrade" (llhttp's flag)
  std::string_view key;
  int keys = 0;
  std::string_view version;
  int versions = 0;
  std::string_view extensions;  // Sec-WebSocket-Extensions, comma-joined
  bool http11 = true;           // HTTP/1.1 or later (section 4.1: 1.1 at least)
};

struct WsVerdict {
  bool upgrade = false;
  WsRefusalKind refusal = WsRefusalKind::plain;  // when not upgrading
  bool deflate = false;                          // permessage-deflate agreed
};

WsVerdict judge_ws_handshake(const WebSocketPersona& ws, const WsHandshakeFields& f);

// The 28 bytes of Sec-WebSocket-Accept for `key` (section 4.2.2: base64 of
// the SHA-1 of the key and the GUID) into `out`.
void ws_accept(std::string_view key, char out[28]);

}  // namespace hello
