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
};

}  // namespace

HELLO_MAIN(kTornado)
