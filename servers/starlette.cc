// Starlette 0.26 on uvicorn 0.17. uvicorn writes lower-case
// headers, date first, and does not keep HTTP/1.0 connections alive.
#include "persona/persona.h"
#include "server/run.h"

namespace {

constexpr hello::Body kJson{"application/json", "{\"hello\":\"world\"}"};

constexpr hello::Route kRoutes[] = {
    {"/", {"text/plain; charset=utf-8", "Hello!!!"}},
    {"/index", kJson},
    {"/json", kJson},
};

constexpr hello::Persona kStarlette{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "date: {date}\r\nserver: uvicorn\r\n{extra}content-length: {length}\r\n"
        "content-type: {type}\r\n{connection}",
    .connection = {.keep_alive_10 = "",
                   .close_10 = "Connection: close\r\n",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .keep_alive_timeout = 5,
    .keep_alive_http10 = false,
    .allow_header = "allow: GET, HEAD\r\n",
    .routes = kRoutes,
    .json = kJson,
    .error_type = "text/plain; charset=utf-8",
    .error_format = "{reason}",
    // WebSocketRoute("/ws") on uvicorn 0.17's wsproto path (Debian has no
    // websockets for it): "101 " with no reason, compression offered back,
    // version 13 only, no pings; wsproto has no message limit, so the persona
    // keeps uvicorn's ws_max_size (16 MiB); a stopping uvicorn closes with
    // 1012 (docs/websocket.md).
    .websocket = {.path = "/ws",
                  .switching = "HTTP/1.1 101 \r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Accept: {accept}\r\n{extensions}\r\n",
                  .extensions_line = "Sec-WebSocket-Extensions: permessage-deflate; "
                                     "client_max_window_bits=15\r\n",
                  .refusals = {{.status = 404},
                               {.raw = "HTTP/1.1 400 Bad Request\r\n"
                                       "content-type: text/plain; charset=utf-8\r\n"
                                       "connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                                       "1c\r\nUnsupported upgrade request.\r\n0\r\n\r\n",
                                .closes = true},
                               {.status = 404},
                               {.raw = "HTTP/1.1 426 \r\nSec-WebSocket-Version: 13\r\n"
                                       "content-length: 0\r\n\r\n",
                                .status = 426,
                                .closes = true},
                               {.raw = "HTTP/1.1 400 \r\ncontent-length: 0\r\n\r\n",
                                .closes = true}},
                  .deflate = true,
                  .max_message = 16 << 20,
                  .going_away = 1012},
};

}  // namespace

HELLO_MAIN(kStarlette)
