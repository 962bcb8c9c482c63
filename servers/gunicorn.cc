// The same Flask app under gunicorn 20.1 with one sync worker.
// The sync worker closes every connection and answers HTTP/1.0 in kind.
#include "server/run.h"
#include "werkzeug.h"

namespace {

constexpr hello::Persona kGunicorn{
    .name = HELLO_PERSONA_NAME,
    .summary = HELLO_PERSONA_SUMMARY,
    .port = HELLO_PERSONA_PORT,
    .head =
        "Server: gunicorn\r\nDate: {date}\r\n{connection}Content-Type: {type}\r\n"
        "{extra}Content-Length: {length}\r\n",
    .reasons = hello::ReasonStyle::upper,
    .echo_version = true,
    .connection = {.keep_alive_10 = "Connection: keep-alive\r\n",
                   .close_10 = "Connection: close\r\n",
                   .keep_alive_11 = "Connection: keep-alive\r\n",
                   .close_11 = "Connection: close\r\n"},
    .always_close = true,
    .allow_header = "Allow: GET, HEAD, OPTIONS\r\n",
    .routes = hello::werkzeug::kRoutes,
    .json = hello::werkzeug::kJson,
    .errors = hello::werkzeug::kErrors,
    .error_type = hello::werkzeug::kHtml,
    .error_format = hello::werkzeug::kErrorFormat,
};

}  // namespace

HELLO_MAIN(kGunicorn)
