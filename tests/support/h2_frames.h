// What the tests' nghttp2 clients share: a request's header field, a GET
// request's fields, and the bytes a session has queued.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstring>
#include <string>

namespace hello::test {

// A field naming strings that outlive the request (nghttp2 copies them).
inline nghttp2_nv h2_field(const char* name, const char* value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value)), strlen(name), strlen(value),
          NGHTTP2_NV_FLAG_NONE};
}

// :method, :scheme http, :authority 127.0.0.1 and :path.
inline std::array<nghttp2_nv, 4> h2_request(const char* method, const char* path) {
  return {h2_field(":method", method), h2_field(":scheme", "http"),
          h2_field(":authority", "127.0.0.1"), h2_field(":path", path)};
}

// Everything `session` has queued to send (its preface first), as bytes.
inline std::string h2_queued(nghttp2_session* session) {
  std::string out;
  const uint8_t* data = nullptr;
  for (ssize_t n; (n = nghttp2_session_mem_send(session, &data)) > 0;)
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  return out;
}

}  // namespace hello::test
