// aiohttp 3.8 with web.Response(text=...) and web.json_response.
// It answers HTTP/1.0 with an HTTP/1.0 status line.
#include "persona/persona.h"
#include "server/run.h"

namespace {

constexpr hello::Body kJson{"application/json; charset=utf-8", "{\"hello\": \"world\"}"};

constexpr hello::Route kRoutes[] = {
    {"/index", {"text/plain; charset=utf-8", "Hello World"}},
    {"/json", kJson},
};

// aiohttp's 400s to a refused WebSocket handshake (aiohttp/web_ws.py:147-194):
// text naming the header at fault; the connection stays open.
#define kAiohttp400(length)                                                 \
  "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n" \
  "Content-Length: " #length "\r\nDate: {date}\r\nServer: Python/3.11 aiohttp/3.8.4\r\n\r\n"

constexpr hello::Persona kAiohttp{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "Content-Type: {type}\r\n{extra}Content-Length: {length}\r\nDate: {date}\r\n"
        "Server: Python/3.11 aiohttp/3.8.4\r\n{connection}",
    .echo_version = true,
    .connection = {.keep_alive_10 = "Connection: keep-alive\r\n",
                   .close_10 = "",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .keep_alive_timeout = 75,
    .allow_header = "Allow: GET,HEAD\r\n",
    .routes = kRoutes,
    .json = kJson,
    .error_type = "text/plain; charset=utf-8",
    .error_format = "{code}: {reason}",
    // web.WebSocketResponse() at /ws, the path of aiohttp's server docs:
    // compression offered back, 4 MiB (exactly 4 MiB already refused),
    // no heartbeat, versions 7, 8 and 13 (docs/websocket.md).
    .websocket = {.path = "/ws",
                  .switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                               "Connection: upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
                               "{extensions}Content-Type: application/octet-stream\r\n"
                               "Date: {date}\r\nServer: Python/3.11 aiohttp/3.8.4\r\n\r\n",
                  .extensions_line = "Sec-WebSocket-Extensions: permessage-deflate\r\n",
                  .versions = hello::kWsVersion13 | hello::kWsVersion8 | hello::kWsVersion7,
                  .refusals = {{.raw = kAiohttp400(66) "No WebSocket UPGRADE hdr: None\n Can "
                                                       "\"Upgrade\" only to \"WebSocket\"."},
                               {.raw = kAiohttp400(65) "No WebSocket UPGRADE hdr: foo\n Can "
                                                       "\"Upgrade\" only to \"WebSocket\"."},
                               {.raw = kAiohttp400(37) "No CONNECTION upgrade hdr: keep-alive"},
                               {.raw = kAiohttp400(22) "Unsupported version: 9"},
                               {.raw = kAiohttp400(21) "Handshake error: None"}},
                  .deflate = true,
                  .max_message = (4 << 20) - 1,
                  .too_big_reason = ""},
};

}  // namespace

HELLO_MAIN(kAiohttp)
