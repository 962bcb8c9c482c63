// What an HTTP/2 stream is answered with, and when: the persona's prebuilt
// answer, a JSON echo, a shaped answer (docs/shaping.md), each at once or
// after its delay, a body sent whole or dripped. The HTTP/1 heart decides
// the same things in http1/answers.cc; the answers' heads are the same
// HTTP/1.1 heads, turned into fields (h2_fields_of_head()).
#include <charconv>
#include <cstring>

#include "base/check.h"
#include "http2/h2_session.h"
#include "persona/json_echo.h"
#include "persona/routes_file.h"

namespace hello {

namespace {

// A drip sends a piece about this often (docs/shaping.md), as HTTP/1's does.
constexpr uint64_t kDripPieceNs = 10 * 1000000;

constexpr Variant kVariant = Variant::keep_alive_11;

}  // namespace

// The request has ended: answered now, or once its delay has passed.
void H2Session::request_ended(H2Stream& s) {
  --incomplete_;
  s.state = H2Stream::State::waiting;
  int route = s.match.route;
  uint64_t delay = 0;
  if (route >= 0 && table_.waits_or_shapes()) [[unlikely]] {
    if (table_.shaping()) {
      if (!s.shape_text.empty() || s.shape_overflow) {
        s.shape.clear();
        ShapeError error;
        bool ok;
        if (s.shape_overflow) {
          constexpr std::string_view kTooLong = "shaping parameters: over 4096 bytes";
          memcpy(error.text, kTooLong.data(), kTooLong.size());
          error.length = kTooLong.size();
          ok = false;
        } else {
          ok = parse_shape(s.shape_text.data(), s.shape_text.size(), table_.shape_limits(), s.shape,
                           error);
        }
        if (!ok) {
          // The request asked for something wrong: 400, as over HTTP/1.
          error.text[error.length] = '\n';
          answer_made(s, table_.bad_request(kVariant), {error.text, error.length + 1});
          count(s, s.text.size(), Answered::Shaping::bad_parameters);
          return;
        }
        s.current_shape = s.shape.any() ? &s.shape : table_.shape_of(route);
      } else {
        s.current_shape = table_.shape_of(route);
      }
      if (s.current_shape != nullptr) {
        s.decision = setup_.dice->decide(*s.current_shape);
        // The rest of a delay mix, like the rest of any mix, is the route's own.
        if (!s.decision.delayed) s.decision.delay_us = table_.delay_us(route);
        delay = s.decision.delay_us;
      } else {
        delay = table_.delay_us(route);
      }
    } else {
      delay = table_.delay_us(route);
    }
  }
  if (delay > 0) {
    s.due_ns = setup_.clock() + delay * 1000;
    return;
  }
  answer(s);
}

void H2Session::answer(H2Stream& s) {
  if (s.current_shape != nullptr) [[unlikely]] {
    answer_shaped(s);
    return;
  }
  const RouteMatch& m = s.match;
  if (m.route >= 0 && s.echo) [[unlikely]] {
    EchoResult echo = echo_json(s.body);
    answer_made(s, echo.ok ? table_.route(m.route, kVariant) : table_.bad_request(kVariant),
                echo.text);
    count(s, s.method == kHead ? 0 : s.text.size(), Answered::Shaping::none);
    return;
  }
  const H2Answer& a = m.route >= 0   ? setup_.answers->route(m.route)
                      : m.path_known ? setup_.answers->not_allowed(m.path_route)
                                     : setup_.answers->not_found();
  HELLO_CHECK(a.ready);
  s.fields = a.fields.data();
  s.field_count = a.fields.size();
  s.status = static_cast<uint16_t>(a.status);
  s.source = {a.body.data(), a.body.size(), a.body.size()};
  s.due = a.body.size();
  bool with_body = s.method != kHead && !a.body.empty();
  submit(s, with_body);
  count(s, with_body ? a.body.size() : 0, Answered::Shaping::none);
}

// An answer whose body is known only now: `r`'s head with the length of
// `body`, which the stream keeps.
void H2Session::answer_made(H2Stream& s, const PreparedResponse& r, std::string_view body) {
  HELLO_CHECK(r.length_offset >= 0);
  s.text.assign(body);
  char digits[20];
  char* end = std::to_chars(digits, digits + sizeof digits, s.text.size()).ptr;
  s.head.assign(r.bytes.data(), static_cast<size_t>(r.length_offset));
  s.head.append(digits, static_cast<size_t>(end - digits));
  s.head.append(r.bytes.data() + r.length_offset,
                r.head_length - static_cast<size_t>(r.length_offset));
  s.field_count = h2_fields_of_head(s.head, s.own, H2Stream::kMaxFields);
  s.fields = s.own;
  s.status = static_cast<uint16_t>(r.status);
  s.source = {s.text.data(), s.text.size(), s.text.size()};
  s.due = s.text.size();
  submit(s, s.method != kHead && !s.text.empty());
}

// What the decision does to the answer, as answer_shaped() does over HTTP/1:
// a reset is RST_STREAM on this stream alone, and `close` GOAWAY once the
// stream is done.
void H2Session::answer_shaped(H2Stream& s) {
  const Decision& d = s.decision;
  const Shape& shape = *s.current_shape;
  if (d.reset) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, s.id, NGHTTP2_INTERNAL_ERROR);
    s.state = H2Stream::State::done;
    s.status = 0;
    count(s, 0, Answered::Shaping::reset);
    return;
  }
  s.closes = d.close;
  int route = s.match.route;
  uint16_t status = d.status != 0 ? d.status : table_.status(route);
  std::string_view text;
  if (s.echo && !d.sized) {
    EchoResult echo = echo_json(s.body);
    if (!echo.ok) {
      // The echo's 400 for a body that is not JSON is not shaped.
      answer_made(s, table_.bad_request(kVariant), echo.text);
      count(s, s.method == kHead ? 0 : s.text.size(), Answered::Shaping::none);
      return;
    }
    s.text.assign(echo.text);
    text = s.text;
  } else if (!d.sized) {
    text = table_.content(route);
  }
  s.head.clear();
  uint64_t length = table_.append_decided_head(s.head, route, kVariant, status, shape, d,
                                               text.size(), decision_text_);
  s.field_count = h2_fields_of_head(s.head, s.own, H2Stream::kMaxFields);
  s.fields = s.own;
  s.status = status;
  if (d.sized)
    s.source = {pattern_bytes(), kPatternBytes, length};
  else
    s.source = {text.data(), text.size(), length};
  s.due = length;
  bool with_body = s.method != kHead && length > 0;
  if (with_body && d.drip_us > 0) start_drip(s, d.drip_us);
  submit(s, with_body);
  count(s, with_body ? length : 0, Answered::Shaping::shaped);
}

// The body leaves in kDripPieceNs pieces over `drip_us`: none yet.
void H2Session::start_drip(H2Stream& s, uint64_t drip_us) {
  s.drip_start_ns = setup_.clock();
  s.drip_ns = drip_us * 1000;
  s.pieces = static_cast<uint32_t>(
      std::min<uint64_t>(s.source.length, std::max<uint64_t>(1, s.drip_ns / kDripPieceNs)));
  s.pieces_due = 0;
  s.due = 0;
  s.due_ns = s.drip_start_ns + (s.drip_ns + s.pieces - 1) / s.pieces;
}

void H2Session::submit(H2Stream& s, bool with_body) {
  nghttp2_data_provider body{};
  body.read_callback = h2_read_body;
  nghttp2_submit_response(session_, s.id, s.fields, s.field_count, with_body ? &body : nullptr);
  s.state = with_body ? H2Stream::State::sending : H2Stream::State::done;
}

// A body over --max-body-bytes: 413 at once, then RST_STREAM NO_ERROR
// once it is sent (RFC 9113 section 8.1), so the client stops sending.
void H2Session::refuse_body(H2Stream& s) {
  --incomplete_;
  guard_.over_limit(H2Limit::body);
  const H2Answer& a = setup_.answers->too_large();
  s.refused = true;
  s.fields = a.fields.data();
  s.field_count = a.fields.size();
  s.status = static_cast<uint16_t>(a.status);
  s.source = {a.body.data(), a.body.size(), a.body.size()};
  s.due = a.body.size();
  submit(s, !a.body.empty());
  count(s, a.body.size(), Answered::Shaping::none);
}

void H2Session::count(const H2Stream& s, uint64_t body_bytes, Answered::Shaping shaping) {
  Answered a;
  a.status = s.status;
  a.kind = Answered::Kind::request;
  a.shaping = shaping;
  a.body_bytes = body_bytes;
  a.http2 = true;
  if (accounting_.logs()) [[unlikely]] {
    a.method = http_method_name(s.method);
    a.target = s.path;
    a.began_ns = s.begun_ns;
    if (shaping == Answered::Shaping::shaped) a.decision = decision_text_.view();
  }
  accounting_.answered(a);
  accounting_.answered_h2();
  ++answered_;
}

}  // namespace hello
