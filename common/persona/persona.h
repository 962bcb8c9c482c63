// A persona is the data that makes the shared core answer like one framework:
// its routes and bodies, its header layout, its status-line style and its
// connection policy. The core reads it once at startup and never asks which
// framework it is.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "persona/websocket.h"

namespace hello {

// How the reason phrase after the status code is spelled.
enum class ReasonStyle : uint8_t {
  standard,  // "Method Not Allowed" (RFC 9110)
  upper,     // "METHOD NOT ALLOWED" (Werkzeug)
  none,      // "" (Tomcat sends "HTTP/1.1 200 ")
};

// How the client learns where a body ends (RFC 9112 section 6.3).
enum class Framing : uint8_t {
  length,   // Content-Length: the head's {length} line
  chunked,  // Transfer-Encoding: chunked, the persona's chunked_header in place of the
            // {length} line; HTTP/1.0 has no chunked coding, so there it is ended by close
  close,    // no framing line at all: the body ends when the server closes the
            // connection, which it then does whatever the client asked
};

// One response entity: what goes into the {type}, {extra} and body slots.
// A HEAD answer to a body without a length has no framing line either and
// keeps the connection by the usual rules (there is no body to end), as
// Tomcat does.
struct Body {
  // Empty: the head's {type} line is left out (extra_headers may hold one).
  std::string_view content_type;
  std::string_view content;
  std::string_view extra_headers = {};  // whole lines, each ending in CRLF
  Framing framing = Framing::length;
};

// A path answered with 200 to GET (and HEAD where the persona allows it).
struct Route {
  std::string_view path;
  Body body;
};

// An error status with a persona-specific body, overriding error_format.
struct ErrorBody {
  int status;
  Body body;
};

// The connection header lines for each (version, keep-alive) combination.
// Empty means the framework sends no such header in that case; {timeout}
// stands for the keep-alive timeout in seconds.
struct ConnectionHeaders {
  std::string_view keep_alive_10;
  std::string_view close_10;
  std::string_view keep_alive_11;
  std::string_view close_11;
};

struct Persona {
  // A binary's name, summary and port come from its line of
  // servers/personas.txt, as HELLO_PERSONA_NAME, _SUMMARY and _PORT.
  std::string_view name;     // "sanic": the binary is hello-sanic
  std::string_view summary;  // one line for --help
  uint16_t port;             // the framework's default port

  // The header block after the status line, with the named slots {date},
  // {type}, {length}, {extra} and {connection}; every line ends in CRLF and
  // the blank line that ends the head is added by the core. The lines that
  // hold {type} and {length} may be left out or replaced whole (see Body and
  // Framing), so each of those two slots is the value of a header line.
  std::string_view head;
  ReasonStyle reasons = ReasonStyle::standard;
  bool echo_version = false;  // answer HTTP/1.0 with an HTTP/1.0 status line
  ConnectionHeaders connection;

  bool always_close = false;  // close after every response (unless --keep-alive)
  // Seconds an idle keep-alive connection stays open: the framework's own
  // default, and what {timeout} in the connection lines says.
  int keep_alive_timeout = 60;
  bool keep_alive_http10 = true;  // honour "Connection: keep-alive" from HTTP/1.0
  bool head_allowed = true;       // HEAD answers like GET; if not, 405
  // Calibration only (hello-floor): no HTTP parsing at all; every CRLF CRLF
  // read is answered with the first route's response, and the connection
  // stays open.
  bool no_parsing = false;
  std::string_view allow_header = {};  // the Allow line of a 405, with CRLF, or empty
  // The line that replaces the {length} line for a chunked body, with CRLF.
  std::string_view chunked_header = "Transfer-Encoding: chunked\r\n";

  std::span<const Route> routes;
  Body json;  // what "/" answers with --json

  // Error bodies: overrides first, then error_format with {code} and
  // {reason} in a body of error_type.
  std::span<const ErrorBody> errors = {};
  std::string_view error_type = {};
  std::string_view error_format = {};

  // With --tls (docs/tls.md): the protocol its ALPN answer selects when the
  // client offers it, as the framework's own TLS sends it; empty: none is
  // selected, and a client that offers h2 gets HTTP/1.1.
  std::string_view alpn = {};
  // With --h2 (docs/http2.md): HTTP/2 as Tomcat's Http2Protocol frames it
  // (tests/fixtures/personas/spring/h2; H2Setup::tomcat), not nghttp2's way.
  bool h2_tomcat = false;
  // Its WebSocket echo endpoint and defaults (docs/websocket.md); no path:
  // none, and a request there is answered as any other.
  WebSocketPersona websocket = {};
};

}  // namespace hello
