// The rules of RFC 9113 section 8 for a request's fields, checked field by
// field as they are decoded (docs/http2.md): names in lower case and made
// of token characters, values without NUL, CR, LF or other controls and
// without leading or trailing white space, pseudo-header fields only the
// request's four, each once and before every other field, none of the
// connection-specific fields, TE only "trailers", a Content-Length of
// digits alone; once the block ends, :method, :scheme and :path present
// (:path not empty, "/..." or "*" for OPTIONS) and an :authority or a
// Host. A request that breaks one is malformed: its stream is reset with
// PROTOCOL_ERROR (section 8.1.1). The same checks nghttp2 1.52 made.
#pragma once

#include <cstdint>
#include <string_view>

namespace hello {

class H2RequestCheck {
 public:
  // Starts over for a new request.
  void begin() { *this = H2RequestCheck{}; }
  // One field of the request's head (trailers: false for any pseudo-header
  // field, and the head's rules otherwise): false if it breaks a rule.
  bool field(std::string_view name, std::string_view value, bool trailers);
  // The head's block has ended: false if a required field is missing.
  bool head_done() const;
  // The Content-Length's value, or -1 if none.
  int64_t content_length() const { return content_length_; }

 private:
  enum Seen : uint8_t {
    kMethod = 1,
    kScheme = 2,
    kAuthority = 4,
    kPath = 8,
    kRegular = 16,  // a regular field: no pseudo-header field after it
    kHost = 32,
    kConnect = 64,     // :method is CONNECT
    kPathSlash = 128,  // :path starts with '/'
  };
  bool pseudo(std::string_view name, std::string_view value);

  int64_t content_length_ = -1;
  uint8_t seen_ = 0;
  bool options_ = false;      // :method is OPTIONS
  bool path_star_ = false;    // :path is "*"
  bool http_scheme_ = false;  // :scheme is http or https
};

}  // namespace hello
