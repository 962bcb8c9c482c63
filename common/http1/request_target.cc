// Reading the request target (RFC 9112 section 3.2): its form, the path it
// is routed by, its query for shaping, and its bytes for the log. Spans of
// the target come in any number of reads.
#include <cstring>
#include <string_view>

#include "http/field_syntax.h"
#include "http1/request_reader.h"

namespace hello {

int ReaderCallbacks::url(llhttp_t* p, const char* at, size_t n) {
  return RequestReader::of(p).on_url(at, n);
}

HELLO_CALLBACK int RequestReader::on_url(const char* at, size_t len) {
  Request& r = request_;
  // No header has been counted yet: so far the head is the target.
  r.head_bytes += len;
  if (r.head_bytes + kLineOverhead > limits_.max_header_bytes) return reject(414);
  if (target_ != nullptr) keep_target(at, len);
  if (r.path_done) [[unlikely]]
    return after_path(at, len);
  // An origin-form target starts with '/' (RFC 9112 section 3.2.1); any
  // other form is read by read_target_prefix(). (The first span of a target is
  // never empty: llhttp starts a span at a byte.)
  if (r.path_length == 0 && at[0] != '/') return read_target_prefix(at, len);
  size_t n = copy_path(at, len);
  if (n < len) [[unlikely]]
    return end_path(at + n, len - n);
  return 0;
}

// A span of the target after the one in which its path ended: more of an
// absolute-form prefix, or of the query.
[[gnu::noinline]] int RequestReader::after_path(const char* at, size_t len) {
  if (request_.form >= Request::TargetForm::scheme) return read_target_prefix(at, len);
  // RFC 9112 section 3.2: no form of request target has a fragment.
  if (memchr(at, '#', len) != nullptr) return reject(400);
  if (request_.shape.in_query) keep_shape_text(at, len);
  return 0;
}

// The rest of the span in which copy_path() ended the path: a query (its
// '?' first), a fragment, or more of a path too long to route.
[[gnu::noinline]] int RequestReader::end_path(const char* at, size_t len) {
  if (memchr(at, '#', len) != nullptr) return reject(400);
  // The query may shape the answer (if the path is a route's).
  if (at[0] == '?' && !request_.path_too_long && shape_requests_) {
    request_.shape.in_query = true;
    keep_shape_text(at + 1, len - 1);
  }
  return 0;
}

// A target that is not origin-form. The path of an absolute-form target
// whose scheme is http or https (in any case) is routed as an origin-form
// one is (RFC 9112 section 3.2.2), and its authority must be a host (RFC
// 9110 section 4.2.1) and an optional port: no userinfo (section 4.2.4).
// Any other target (asterisk-form "*", CONNECT's authority-form, another
// scheme) matches no route. The prefix may come in any number of spans.
[[gnu::noinline]] int RequestReader::read_target_prefix(const char* at, size_t len) {
  static constexpr std::string_view kScheme = "https://";
  using Form = Request::TargetForm;
  Request& r = request_;
  // RFC 9112 section 3.2: no form of request target has a fragment.
  if (memchr(at, '#', len) != nullptr) return reject(400);
  const char* p = at;
  const char* end = at + len;
  if (r.form == Form::origin) {
    // The first span: no route unless the scheme matches.
    r.form = Form::scheme;
    r.path_done = true;
  }
  if (r.form == Form::scheme) {
    for (; p < end && r.scheme_matched < kScheme.size(); ++p) {
      if (r.scheme_matched == 4 && *p == ':') r.scheme_matched = 5;  // "http://"
      if (to_lower_ascii(*p) != kScheme[r.scheme_matched]) {
        r.form = Form::other;
        return 0;
      }
      ++r.scheme_matched;
    }
    if (r.scheme_matched < kScheme.size()) return 0;
    r.form = Form::authority;
    host_.reset();
  }
  // The authority runs to the path, the query or the end of the target.
  const char* q = p;
  while (q < end && *q != '/' && *q != '?') ++q;
  host_.feed(p, static_cast<size_t>(q - p));
  // A span that stops short of the bytes fed is the end of the target: llhttp
  // calls back there when it meets the space after it.
  if (q == end && end == context().end) return 0;
  if (!host_.valid() || host_.empty_host()) return reject(400);
  r.form = Form::absolute;
  if (q == end || *q != '/') {
    // The path of "http://x" and of "http://x?q" is "/".
    path_[0] = '/';
    r.path_length = 1;
    return q == end ? 0 : end_path(q, static_cast<size_t>(end - q));
  }
  r.path_done = false;
  size_t n = copy_path(q, static_cast<size_t>(end - q));
  return q + n < end ? end_path(q + n, static_cast<size_t>(end - q) - n) : 0;
}

// Copies the path up to '?' or '#' (a path longer than any route is only
// scanned as far as that); returns how many bytes of the span it took.
HELLO_CALLBACK size_t RequestReader::copy_path(const char* at, size_t len) {
  Request& r = request_;
  size_t room = kMaxPath - r.path_length;
  size_t n = 0;
  for (; n < len && n <= room; ++n) {
    char c = at[n];
    if (c == '?' || c == '#') {
      r.path_done = true;
      break;
    }
    if (n < room) path_[r.path_length + n] = c;
  }
  if (n > room) {
    r.path_too_long = true;
    r.path_done = true;
    return n;
  }
  r.path_length = static_cast<uint16_t>(r.path_length + n);
  return n;
}

// Out of line, so that the callback without a log saves no registers for it.
[[gnu::noinline]] void RequestReader::keep_target(const char* at, size_t len) {
  size_t n = std::min(len, kMaxLoggedTarget - request_.target_length);
  memcpy(target_.get() + request_.target_length, at, n);
  request_.target_length = static_cast<uint16_t>(request_.target_length + n);
}

}  // namespace hello
