// Sanic 21/22 with text() and json(). Lower-case headers in the
// order of Sanic's http1_response_header, and HTTP/1.1 even to HTTP/1.0.
#include "persona/persona.h"
#include "server/run.h"

namespace {

constexpr hello::Body kJson{"application/json", "{\"hello\":\"world\"}"};

constexpr hello::Route kRoutes[] = {
    {"/", {"text/plain; charset=utf-8", "Hello!!!"}},
    {"/json", kJson},
};

constexpr hello::Persona kSanic{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head = "content-length: {length}\r\n{connection}content-type: {type}\r\n{extra}",
    .connection = {.keep_alive_10 = "connection: keep-alive\r\n",
                   .close_10 = "connection: close\r\n",
                   .keep_alive_11 = "connection: keep-alive\r\n",
                   .close_11 = "connection: close\r\n"},
    .keep_alive_timeout = 5,
    .allow_header = "allow: GET, HEAD\r\n",
    .routes = kRoutes,
    .json = kJson,
    .error_type = "text/plain; charset=utf-8",
    .error_format = "{reason}",
    // Sanic's TLS sets ALPN to http/1.1 (sanic/http/tls/context.py).
    .alpn = "http/1.1",
    // @app.websocket("/feed"), Sanic's documented example, on websockets'
    // sans-I/O handshake: Date first, no compression, version 13 only, 1 MiB;
    // refusals are Sanic's error pages (426, or 400 for the key and the
    // version); pings every 20 s (docs/websocket.md, scripts/peers/websocket/sanic.md).
    .websocket = {.path = "/feed",
                  .switching = "HTTP/1.1 101 Switching Protocols\r\nDate: {date}\r\n"
                               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Accept: {accept}\r\n{extensions}\r\n",
                  .refusals = {{.status = 426}, {.status = 426}, {.status = 426}, {}, {}},
                  .max_message = 1 << 20,
                  .too_big_reason = "over size limit (1048577 > 1048576 bytes)",
                  .ping_interval_s = 20,
                  .ping_timeout_s = 20},
};

}  // namespace

HELLO_MAIN(kSanic)
