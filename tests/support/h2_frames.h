// What the tests' nghttp2 clients share: a request's header field, a GET
// request's fields, and the bytes a session has queued.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

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

// A whole header block decoded by `inflater` (whose table it updates),
// `field(name, value)` called for each field; false if it does not decode.
template <typename Field>
bool h2_inflate_block(nghttp2_hd_inflater* inflater, std::string_view block, Field field) {
  const auto* in = reinterpret_cast<const uint8_t*>(block.data());
  size_t left = block.size();
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t n = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
    if (n < 0) return false;
    in += n;
    left -= static_cast<size_t>(n);
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0)
      field(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
            std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
    if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) break;
  }
  nghttp2_hd_inflate_end_headers(inflater);
  return true;
}

}  // namespace hello::test
