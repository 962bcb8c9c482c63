// --probe URL (docs/containers.md): one HTTP/1.1 GET, for a container's
// HEALTHCHECK or a Kubernetes exec probe in an image that has no curl.
#pragma once

#include <string>

namespace hello {

struct ProbeResult {
  bool healthy = false;  // a 2xx answer
  std::string line;      // "http://127.0.0.1:9901/readyz: 200 OK", or why not
};

// Asks `url` with a GET, waiting at most `timeout_s` for the connection and
// the status line. `url` is "http://HOST:PORT/PATH", or "/PATH" on
// `admin` (--admin's HOST:PORT; a wildcard host is asked on loopback).
ProbeResult probe(const std::string& url, const std::string& admin, double timeout_s);

}  // namespace hello
