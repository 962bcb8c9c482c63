// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_session_answer.cc), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
// What an HTTP/2 stream is answered with, and when: the persona's prebuilt
// answer, a JSON echo, a shaped answer (docs/shaping.md), each at once or
// after its delay, a body sent whole or dripped. The answer step
// (persona/answer.h) decides, as it does for HTTP/1; this file only writes
// its answer as HTTP/2 fields, made from the persona's templates
// (http2/h2_answer_fields.h).
#include "base/check.h"
#include "persona/json_echo.h"
#include "persona/routes_file.h"
#include "reference/h2_session.h"

namespace hello::reference {

// The request has ended: answered now, or once its delay has passed.
void H2Session::request_ended(H2Stream& s) {
  --incomplete_;
  s.state = H2Stream::State::waiting;
  int route = s.match.route;
  if (route >= 0 && table_.waits_or_shapes()) [[unlikely]] {
    AnswerFacts facts{route, s.shape_text.data(), s.shape_text.size(), s.shape_overflow};
    decide_answer(table_, setup_.dice, facts, s.shape, s.answer);
    if (s.answer.kind == Answer::Kind::refused) {
      // The request asked for something wrong: 400, as over HTTP/1.
      answer_made(s, setup_.answers->bad_request(), s.answer.reason());
      count(s, s.text.size(), Answered::Shaping::bad_parameters);
      return;
    }
    if (s.answer.delay_us > 0) {
      s.due_ns = setup_.clock() + s.answer.delay_us * 1000;
      return;
    }
  }
  answer(s);
}

void H2Session::answer(H2Stream& s) {
  if (s.answer.kind == Answer::Kind::shaped) [[unlikely]] {
    answer_shaped(s);
    return;
  }
  const RouteMatch& m = s.match;
  if (m.route >= 0 && s.echo) [[unlikely]] {
    EchoResult echo = echo_json(s.body);
    answer_made(s, echo.ok ? setup_.answers->route(m.route) : setup_.answers->bad_request(),
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

// An answer whose body is known only now: template `t` with the length of
// `body`, which the stream keeps.
void H2Session::answer_made(H2Stream& s, const H2Answer& t, std::string_view body) {
  s.text.assign(body);
  H2Made made;
  made.status = static_cast<uint16_t>(t.status);
  made.length = s.text.size();
  s.field_count = make_fields(t, made, s.field_bytes, s.own, H2Stream::kMaxFields);
  s.fields = s.own;
  s.status = made.status;
  s.source = {s.text.data(), s.text.size(), s.text.size()};
  s.due = s.text.size();
  submit(s, s.method != kHead && !s.text.empty());
}

// The shaped answer the step makes, as HTTP/1 writes it: a reset is
// RST_STREAM on this stream alone, and `close` GOAWAY once the stream is
// done.
void H2Session::answer_shaped(H2Stream& s) {
  int route = s.match.route;
  ShapedAnswer a =
      shape_answer(table_, s.answer, route, s.echo ? &s.body : nullptr, decision_text_);
  if (a.kind == ShapedAnswer::Kind::reset) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, s.id, NGHTTP2_INTERNAL_ERROR);
    s.state = H2Stream::State::done;
    s.status = 0;
    count(s, 0, Answered::Shaping::reset);
    return;
  }
  s.closes = a.close;
  if (a.kind == ShapedAnswer::Kind::not_json) {
    answer_made(s, setup_.answers->bad_request(), a.text);
    count(s, s.method == kHead ? 0 : s.text.size(), Answered::Shaping::none);
    return;
  }
  std::string_view text = a.text;
  if (s.echo && !a.sized) {
    s.text.assign(text);  // the echo's text lives only until the thread's next echo
    text = s.text;
  }
  H2Made made;
  made.status = a.status;
  made.length = a.length;
  made.has_length = a.status != 204 && a.status != 304;
  made.shape = s.answer.shape;
  made.decision = decision_text_.view();
  s.field_count =
      make_fields(setup_.answers->shaped(route), made, s.field_bytes, s.own, H2Stream::kMaxFields);
  s.fields = s.own;
  s.status = a.status;
  if (a.sized)
    s.source = {pattern_bytes(), kPatternBytes, a.length};
  else
    s.source = {text.data(), text.size(), a.length};
  s.due = a.length;
  bool with_body = s.method != kHead && a.length > 0;
  if (with_body && a.drip_us > 0) start_drip(s, a.drip_us);
  submit(s, with_body);
  count(s, with_body ? a.length : 0, Answered::Shaping::shaped);
}

// The body leaves in pieces over `drip_us` (shaping/drip.h): none yet.
void H2Session::start_drip(H2Stream& s, uint64_t drip_us) {
  s.drip.start(setup_.clock(), drip_us, s.source.length);
  s.due = 0;
  s.due_ns = s.drip.next_due_ns();
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

}  // namespace hello::reference
