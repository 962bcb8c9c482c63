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
};

}  // namespace

HELLO_MAIN(kAiohttp)
