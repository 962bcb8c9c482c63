// Routes from a JSON file (--routes FILE.json): a user's own endpoints
// beside the persona's. The file is read, validated and turned into
// ready-to-build responses once, at startup; docs/routes.md describes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shaping/shape.h"

namespace hello {

struct FileRoute {
  // echo: "echo": "json"; websocket: "echo": "websocket", a WebSocket
  // echo at the path, as the persona's own (docs/websocket.md).
  enum class Kind { body, json, echo, websocket };

  int method = 0;  // an llhttp_method_t
  std::string path;
  int status = 200;
  // Sent as given and in this order, where the persona puts extra headers.
  // A Content-Type among them is sent in its place here, instead of the
  // persona's Content-Type line.
  std::vector<std::pair<std::string, std::string>> headers;
  // The value of the persona's Content-Type line: the default for the kind,
  // or empty when `headers` holds the route's own Content-Type.
  std::string content_type;
  Kind kind = Kind::body;
  std::string content;    // the body bytes, or the minified JSON; empty for echo
  uint64_t delay_us = 0;  // the answer waits this long ("delay"); 0: at once
  std::string shape;      // "shape", checked: docs/shaping.md; empty: none
};

// Reads and checks `path`. On success fills `routes` and returns true; on
// failure returns false with `error` set to one line naming the file, the
// position (line:column) where known, and what is wrong.
// `default_type` is the Content-Type of a "body" route that gives none;
// `persona_head` is the persona's header template, whose headers a route
// may not send again.
// A route's "delay" and "shape" are held to `limits` (--max-delay, --max-size).
// The llhttp number of the method called `name` (HTTP methods only, not
// RTSP's), or -1.
int http_method_of(std::string_view name);
// Its name, or "-" for none.
std::string_view http_method_name(int number);

bool load_routes(const std::string& path, std::string_view default_type,
                 std::string_view persona_head, std::vector<FileRoute>& routes, std::string& error,
                 const ShapeLimits& limits = {});

}  // namespace hello
