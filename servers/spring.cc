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
};

}  // namespace

HELLO_MAIN(kSpring)
