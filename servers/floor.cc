// hello-floor: a calibration server, not an HTTP server. It answers every
// CRLF CRLF it reads with the same fixed bytes and parses nothing, so its
// cost is what the kernel and the load tester cost. scripts/bench reports
// every target against it.
#include "persona/persona.h"
#include "server/run.h"

namespace {

constexpr hello::Route kRoutes[] = {
    {"/", {"text/plain", "Hello!!!"}},
};

constexpr hello::Persona kFloor{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head = "content-length: {length}\r\ncontent-type: {type}\r\n",
    .connection = {},
    .no_parsing = true,
    .routes = kRoutes,
    .json = kRoutes[0].body,
    .error_type = "text/plain",
    .error_format = "{reason}",
};

}  // namespace

HELLO_MAIN(kFloor)
