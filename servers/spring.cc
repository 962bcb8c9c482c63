// Spring Boot with a @RestController on embedded Tomcat.
// Tomcat sends no reason phrase, says nothing of a kept HTTP/1.1 connection
// and announces its keep-alive timeout to HTTP/1.0 clients.
#include "persona/persona.h"
#include "server/run.h"

namespace {

// Spring's String converter sets the length; Jackson's flushes the JSON
// without one, so Tomcat chunks it (and ends it by closing on HTTP/1.0).
constexpr hello::Body kJson{
    "application/json", "{\"hello\":\"world\"}", {}, hello::Framing::chunked};

constexpr hello::Route kRoutes[] = {
    {"/", {"text/plain;charset=UTF-8", "Hello!!!"}},
    {"/json", kJson},
};

// Spring's 400 to a WebSocket handshake whose Upgrade is not "websocket"
// (a plain GET too): AbstractHandshakeHandler's text.
constexpr hello::WsRefusal kOnlyWebSocket{
    .raw =
        "HTTP/1.1 400 \r\nContent-Length: 34\r\nDate: {date}\r\n\r\n"
        "Can \"Upgrade\" only to \"WebSocket\"."};

constexpr hello::Persona kSpring{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "Content-Type: {type}\r\n{extra}Content-Length: {length}\r\nDate: {date}\r\n"
        "{connection}",
    .reasons = hello::ReasonStyle::none,
    .connection = {.keep_alive_10 = "Connection: keep-alive\r\nKeep-Alive: timeout={timeout}\r\n",
                   .close_10 = "Connection: close\r\n",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .allow_header = "Allow: GET, HEAD\r\n",
    .routes = kRoutes,
    .json = kJson,
    .error_type = "text/plain;charset=UTF-8",
    .error_format = "{reason}",
    // Tomcat's TLS connector answers ALPN with http/1.1 while no HTTP/2
    // upgrade protocol is configured.
    .alpn = "http/1.1",
    // With --h2, Tomcat's Http2Protocol: its SETTINGS, PING and DATA framing.
    .h2_tomcat = true,
    // A TextWebSocketHandler at /myHandler (Spring's reference docs): the
    // 101 is Tomcat's (captured), the refusals Spring's handshake handler's
    // (derived from its source); Tomcat's 8 KiB message buffers, no pings
    // (docs/websocket.md, scripts/peers/websocket/tomcat.md).
    .websocket =
        {.path = "/myHandler",
         .switching = "HTTP/1.1 101 \r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
                      "Sec-WebSocket-Accept: {accept}\r\n{extensions}Date: {date}\r\n\r\n",
         .extensions_line =
             "Sec-WebSocket-Extensions: permessage-deflate;client_max_window_bits=15\r\n",
         .refusals = {kOnlyWebSocket,
                      kOnlyWebSocket,
                      {.raw = "HTTP/1.1 400 \r\nContent-Length: 31\r\nDate: {date}\r\n\r\n"
                              "\"Connection\" must be \"upgrade\"."},
                      {.raw = "HTTP/1.1 426 \r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n"
                              "Date: {date}\r\n\r\n",
                       .status = 426},
                      {.raw = "HTTP/1.1 400 \r\nContent-Length: 0\r\nDate: {date}\r\n\r\n"}},
         .max_message = 8192,
         .too_big_reason = "No async message support and buffer too small."},
};

}  // namespace

HELLO_MAIN(kSpring)
