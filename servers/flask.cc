// Flask 2.2 on Werkzeug's development server (app.run()).
// It closes every connection, even HTTP/1.1 ones.
#include "server/run.h"
#include "werkzeug.h"

namespace {

constexpr hello::Persona kFlask{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "Server: Werkzeug/2.2.2 Python/3.11.2\r\nDate: {date}\r\nContent-Type: {type}\r\n"
        "{extra}Content-Length: {length}\r\n{connection}",
    .reasons = hello::ReasonStyle::upper,
    .connection = {.keep_alive_10 = "Connection: keep-alive\r\n",
                   .close_10 = "Connection: close\r\n",
                   .keep_alive_11 = "",
                   .close_11 = "Connection: close\r\n"},
    .always_close = true,
    .allow_header = "Allow: OPTIONS, GET, HEAD\r\n",
    .routes = hello::werkzeug::kRoutes,
    .json = hello::werkzeug::kJson,
    .errors = hello::werkzeug::kErrors,
    .error_type = hello::werkzeug::kHtml,
    .error_format = hello::werkzeug::kErrorFormat,
};

}  // namespace

HELLO_MAIN(kFlask)
