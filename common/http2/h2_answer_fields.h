// A persona's answers as HTTP/2 fields (docs/http2.md), made once from the
// response table's HTTP/1.1 keep-alive answers: the status and the header
// fields in the persona's order, names in lower case, without the
// connection-specific fields HTTP/2 forbids (RFC 9113 section 8.2.2:
// Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade)
// and so without the chunked framing; the body as it is sent. Values point
// into the table's bytes, so the Date the table patches in place once a
// second is current here too.
//
// An answer made per request (a JSON echo's, a 400 with its reason, a
// shaped one: persona/answer.h) has a template here instead: the same
// fields with a hole for content-length and a place for a shape's fields,
// filled by make_fields() from the answer, never from an HTTP/1 head.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "persona/response_table.h"

namespace hello {

struct H2Answer {
  bool ready = false;  // its fields are complete; false: a template (or none)
  int status = 0;
  std::string status_text;               // ":status"'s value
  std::vector<std::string> names;        // lower case
  std::vector<std::string_view> values;  // into the table's bytes
  // A template's content-length (names' index, whose value is made per
  // request; -1: none), and where a shape's fields go (before names'
  // index extra_at; names.size(): after the last).
  int length_field = -1;
  size_t extra_at = SIZE_MAX;
  // ":status" first, then names and values; NO_COPY: they point into this
  // answer and the table, so they are made once the answer is in place.
  std::vector<nghttp2_nv> fields;
  std::string body;  // de-chunked where HTTP/1.1 chunks it
  // The fields' HPACK block, encoded once (encode_fields()), but for the
  // Date, a literal of its own at date_at whose 29 bytes current_block()
  // copies from the table's, which the table patches once a second.
  // Mutable for that copy: a worker's answers are its own.
  mutable std::string block;
  int date_at = -1;
  std::string_view date;

  // Makes `fields` and `block` (a ready answer's).
  void bind();
  // The block, its Date the table's now.
  std::string_view current_block() const;
};

// What an answer made per request puts into its template.
struct H2Made {
  uint16_t status = 0;
  uint64_t length = 0;           // content-length's value
  bool has_length = true;        // false: no content-length (a shaped 204 or 304)
  const Shape* shape = nullptr;  // its `header` fields and the decision, when shaped
  std::string_view decision;     // the decision field's value
};

class H2Answers {
 public:
  explicit H2Answers(const ResponseTable& table);
  H2Answers(const H2Answers&) = delete;
  H2Answers& operator=(const H2Answers&) = delete;

  // A route's answer; an echo route's is a template.
  const H2Answer& route(int index) const { return routes_[static_cast<size_t>(index)]; }
  const H2Answer& not_found() const { return not_found_; }
  // 413, for a request body over the limit.
  const H2Answer& too_large() const { return too_large_; }
  // The 405 for the path of route `path_route` (its Allow field).
  const H2Answer& not_allowed(int path_route) const {
    return not_allowed_[static_cast<size_t>(path_route)];
  }
  // The template of the 400 whose text/plain body is made per request.
  const H2Answer& bad_request() const { return bad_request_; }
  // The template of a shaped answer of route `index` (when the table shapes).
  const H2Answer& shaped(int index) const { return shaped_[static_cast<size_t>(index)]; }

  // The HTTP/2 form of one HTTP/1 answer (its head's fields, its body), or
  // of a template (its holes marked).
  static H2Answer convert(const PreparedResponse& r);

 private:
  std::vector<H2Answer> routes_;
  std::vector<H2Answer> not_allowed_;
  std::vector<H2Answer> shaped_;
  H2Answer not_found_;
  H2Answer too_large_;
  H2Answer bad_request_;
};

// The fields of an answer made per request from template `t` and `made`,
// into `fields` (at most `max`): ":status", the template's fields with
// content-length's value, and a shape's fields (names lower-cased) and the
// decision at the template's place for them. The bytes made per request go
// into `bytes`, which the fields point into: it must stay unchanged while
// they are in use. Returns how many fields were used.
size_t make_fields(const H2Answer& t, const H2Made& made, std::string& bytes, nghttp2_nv* fields,
                   size_t max);

// `n` fields as an HPACK block into `block` (its capacity kept), by
// nghttp2's encoder without a dynamic table: literals and static-table
// references alone, so a block means the same on every connection and is
// made once for a prebuilt answer (RFC 7541 section 6.2.2).
void encode_fields(const nghttp2_nv* fields, size_t n, std::string& block);

}  // namespace hello
