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
};

}  // namespace

HELLO_MAIN(kStarlette)
