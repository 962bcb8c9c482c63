// What the WebSocket heart's tests share: a persona with a small limit,
// and a heart started over and upgraded with RFC 6455's example key.
#pragma once

#include <string>

#include "websocket/ws_heart.h"

namespace hello::test {

inline constexpr WebSocketPersona kTestWs{
    .path = "/ws",
    .switching =
        "HTTP/1.1 101 Switching Protocols\r\nDate: {date}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extensions}\r\n",
    .max_message = 1000,
    .too_big_reason = "too big",
    .going_away = 1001,
};

// Starts `heart` over for a new connection and upgrades it (with
// permessage-deflate agreed if `deflate`); returns what it sent (the 101).
inline std::string reopen(WsHeart& heart, bool deflate = false, const Shape* shape = nullptr) {
  heart.reset();
  Upgrade u;
  u.to = Upgrade::To::websocket;
  u.ws_key = "dGhlIHNhbXBsZSBub25jZQ==";
  u.ws_deflate = deflate;
  u.ws_shape = shape;
  std::string out;
  heart.upgraded(u, out);
  return out;
}

}  // namespace hello::test
