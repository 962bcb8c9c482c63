// A persona's answers in HTTP/2 form (docs/http2.md), made
// once from the response table's HTTP/1.1 keep-alive answers: the status
// and the header fields in the persona's order, names in lower case,
// without the connection-specific fields HTTP/2 forbids (RFC 9113 section
// 8.2.2: Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding,
// Upgrade) and so without the chunked framing; the body as it is sent.
// Values point into the table's bytes, so the Date the table patches in
// place once a second is current here too.
#pragma once

#include <nghttp2/nghttp2.h>

#include <string>
#include <string_view>
#include <vector>

#include "persona/response_table.h"

namespace hello {

struct H2Answer {
  bool ready = false;  // false: made per request (a JSON echo's)
  int status = 0;
  std::string status_text;               // ":status"'s value
  std::vector<std::string> names;        // lower case
  std::vector<std::string_view> values;  // into the table's bytes
  // ":status" first, then names and values; NO_COPY: they point into this
  // answer and the table, so they are made once the answer is in place.
  std::vector<nghttp2_nv> fields;
  std::string body;  // de-chunked where HTTP/1.1 chunks it

  void bind();
};

class H2Answers {
 public:
  explicit H2Answers(const ResponseTable& table);
  H2Answers(const H2Answers&) = delete;
  H2Answers& operator=(const H2Answers&) = delete;

  const H2Answer& route(int index) const { return routes_[static_cast<size_t>(index)]; }
  const H2Answer& not_found() const { return not_found_; }
  // 413, for a request body over the limit.
  const H2Answer& too_large() const { return too_large_; }
  // The 405 for the path of route `path_route` (its Allow field).
  const H2Answer& not_allowed(int path_route) const {
    return not_allowed_[static_cast<size_t>(path_route)];
  }

  // The HTTP/2 form of one HTTP/1 answer (its head's fields, its body).
  static H2Answer convert(const PreparedResponse& r);

 private:
  std::vector<H2Answer> routes_;
  std::vector<H2Answer> not_allowed_;
  H2Answer not_found_;
  H2Answer too_large_;
};

// The fields of an answer made per request from its HTTP/1.1 head, as
// convert() makes them once: ":status" from the status line, then the
// head's fields, names lowered in place, connection-specific ones left
// out. They point into `head`, which must outlive them unchanged. Returns
// how many of `max` were used.
size_t h2_fields_of_head(std::string& head, nghttp2_nv* fields, size_t max);

}  // namespace hello
