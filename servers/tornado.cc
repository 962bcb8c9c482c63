// Tornado 6 with a RequestHandler that calls self.write().
// Without a head() method Tornado answers HEAD with 405.
#include "persona/persona.h"
#include "server/run.h"

namespace {

// Tornado's Etag is the SHA-1 of the body, computed here once by hand:
// printf '{"hello": "world"}' | sha1sum, and likewise for 'Hello, world'.
constexpr hello::Body kJson{"application/json; charset=UTF-8", "{\"hello\": \"world\"}",
                            "Etag: \"d3b09abe30cfe2edff4ee9e0a141c93bf5b3af87\"\r\n"};

constexpr hello::Route kRoutes[] = {
    {"/",
     {"text/html; charset=UTF-8", "Hello, world",
      "Etag: \"e02aa1b106d5c7c6a98def2b13005d5b84fd8dc8\"\r\n"}},
    {"/json", kJson},
};

// Tornado's 400s to a refused WebSocket handshake: its own head, a body of
// text (tornado/websocket.py:231-256); the connection stays open.
#define kTornado400                                             \
  "HTTP/1.1 400 Bad Request\r\nServer: TornadoServer/6.0.2\r\n" \
  "Content-Type: text/html; charset=UTF-8\r\nDate: {date}\r\nContent-Length: "
constexpr hello::WsRefusal kCanOnlyUpgrade{.raw = kTornado400
                                           "34\r\n\r\nCan \"Upgrade\" only to \"WebSocket\"."};

constexpr hello::Persona kTornado{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "Server: TornadoServer/6.0.2\r\nContent-Type: {type}\r\nDate: {date}\r\n"
        "{extra}Content-Length: {length}\r\n{connection}",
    .connection = {.keep_alive_10 = "Connection: Keep-Alive\r\n",
                   .close_10 = "",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .head_allowed = false,
    .routes = kRoutes,
    .json = kJson,
    .error_type = "text/html; charset=UTF-8",
    .error_format = "<html><title>{code}: {reason}</title><body>{code}: {reason}</body></html>",
    // WebSocketHandler at Tornado's own example path (tornado/websocket.py's
    // EchoWebSocket): no compression, no pings, 10 MiB, versions 7, 8 and 13
    // (docs/websocket.md; scripts/peers/websocket/captures/tornado).
    .websocket =
        {.path = "/websocket",
         .switching = "HTTP/1.1 101 Switching Protocols\r\nServer: TornadoServer/6.0.2\r\n"
                      "Date: {date}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-Websocket-Accept: {accept}\r\n{extensions}\r\n",
         .versions = hello::kWsVersion13 | hello::kWsVersion8 | hello::kWsVersion7,
         .refusals = {kCanOnlyUpgrade,
                      kCanOnlyUpgrade,
                      {.raw = kTornado400 "31\r\n\r\n\"Connection\" must be \"Upgrade\"."},
                      {.raw = "HTTP/1.1 426 Upgrade Required\r\nServer: TornadoServer/6.0.2\r\n"
                              "Content-Type: text/html; charset=UTF-8\r\nDate: {date}\r\n"
                              "Sec-Websocket-Version: 7, 8, 13\r\nContent-Length: 0\r\n\r\n",
                       .status = 426},
                      {.raw = kTornado400 "33\r\n\r\nMissing/Invalid WebSocket headers"}},
         .max_message = 10 << 20,
         .too_big_reason = "message too big"},
};

}  // namespace

HELLO_MAIN(kTornado)
