// What an HTTP/2 stream is answered with, and when: the persona's prebuilt
// answer, a JSON echo, a shaped answer (docs/shaping.md), each at once or
// after its delay, a body sent whole or dripped. The answer step
// (persona/answer.h) decides, as it does for HTTP/1; this file only writes
// its answer as HTTP/2 fields, made from the persona's templates
// (http2/h2_answer_fields.h).
#include "base/check.h"
#include "http2/h2_session.h"
#include "persona/json_echo.h"
#include "persona/routes_file.h"

namespace hello {

// A request ended in the read under way: answered once the read is done,
// after the frames the read called for (ACKs first, as nghttp2 sent them).
void H2Session::queue(H2Stream& s) {
  s.queued = true;
  s.queue_next = nullptr;
  if (queue_last_ != nullptr)
    queue_last_->queue_next = &s;
  else
    queue_ = &s;
  queue_last_ = &s;
}

void H2Session::answer_queued() {
  while (queue_ != nullptr) {
    H2Stream& s = *queue_;
    queue_ = s.queue_next;
    if (queue_ == nullptr) queue_last_ = nullptr;
    s.queued = false;
    request_ended(s);
  }
}

// The request has ended: answered now, or once its delay has passed.
void H2Session::request_ended(H2Stream& s) {
  if (s.refused) {
    // A body over --max-body-bytes: 413, then RST_STREAM NO_ERROR once it
    // is sent (RFC 9113 section 8.1), if the client is still sending.
    const H2Answer& a = setup_.answers->too_large();
    s.block = a.current_block();
    s.status = static_cast<uint16_t>(a.status);
    s.source = {a.body.data(), a.body.size(), a.body.size()};
    s.due = a.body.size();
    count(s, a.body.size(), Answered::Shaping::none);
    submit(s, !a.body.empty());
    return;
  }
  int route = s.match.route;
  if (route >= 0 && table_.waits_or_shapes()) [[unlikely]] {
    AnswerFacts facts{route, s.shape_text.data(), s.shape_text.size(), s.shape_overflow};
    decide_answer(table_, setup_.dice, facts, s.shape, s.answer);
    if (s.answer.kind == Answer::Kind::refused) {
      // The request asked for something wrong: 400, as over HTTP/1.
      answer_made(s, setup_.answers->bad_request(), s.answer.reason(),
                  Answered::Shaping::bad_parameters);
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
                echo.text, Answered::Shaping::none);
    return;
  }
  const H2Answer& a = m.route >= 0   ? setup_.answers->route(m.route)
                      : m.path_known ? setup_.answers->not_allowed(m.path_route)
                                     : setup_.answers->not_found();
  HELLO_CHECK(a.ready);
  s.block = a.current_block();
  s.status = static_cast<uint16_t>(a.status);
  s.source = {a.body.data(), a.body.size(), a.body.size()};
  s.due = a.body.size();
  bool with_body = s.method != kHead && !a.body.empty();
  count(s, with_body ? a.body.size() : 0, Answered::Shaping::none);
  submit(s, with_body);
}

// The fields a template makes, encoded into the stream's own block.
void H2Session::encode_made(H2Stream& s, const H2Answer& t, const H2Made& made) {
  thread_local nghttp2_nv fields[H2Stream::kMaxFields];
  size_t n = make_fields(t, made, s.field_bytes, fields, H2Stream::kMaxFields);
  encode_fields(fields, n, s.own_block);
  s.block = s.own_block;
}

// An answer whose body is known only now: template `t` with the length of
// `body`, which the stream keeps.
void H2Session::answer_made(H2Stream& s, const H2Answer& t, std::string_view body,
                            Answered::Shaping shaping) {
  s.text.assign(body);
  H2Made made;
  made.status = static_cast<uint16_t>(t.status);
  made.length = s.text.size();
  encode_made(s, t, made);
  s.status = made.status;
  s.source = {s.text.data(), s.text.size(), s.text.size()};
  s.due = s.text.size();
  count(s, s.method == kHead && shaping != Answered::Shaping::bad_parameters ? 0 : s.text.size(),
        shaping);
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
    s.state = H2Stream::State::done;
    s.status = 0;
    count(s, 0, Answered::Shaping::reset);
    connection_.reset(s, h2::kInternalError, *out_);
    return;
  }
  s.closes = a.close;
  if (a.kind == ShapedAnswer::Kind::not_json) {
    answer_made(s, setup_.answers->bad_request(), a.text, Answered::Shaping::none);
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
  encode_made(s, setup_.answers->shaped(route), made);
  s.status = a.status;
  if (a.sized)
    s.source = {pattern_bytes(), kPatternBytes, a.length};
  else
    s.source = {text.data(), text.size(), a.length};
  s.due = a.length;
  bool with_body = s.method != kHead && a.length > 0;
  if (with_body && a.drip_us > 0) start_drip(s, a.drip_us);
  count(s, with_body ? a.length : 0, Answered::Shaping::shaped);
  submit(s, with_body);
}

// The body leaves in pieces over `drip_us` (shaping/drip.h): none yet.
void H2Session::start_drip(H2Stream& s, uint64_t drip_us) {
  s.drip.start(setup_.clock(), drip_us, s.source.length);
  s.due = 0;
  s.due_ns = s.drip.next_due_ns();
}

// The answer's HEADERS, then as much of its body as the windows take. The
// stream may close within (its END_STREAM out): nothing of it is used after.
void H2Session::submit(H2Stream& s, bool with_body) {
  s.state = H2Stream::State::sending;
  if (with_body) {
    connection_.respond(s, s.block, false, *out_);
    deliver(s);
  } else {
    s.state = H2Stream::State::done;
    bool reset = s.refused && !s.end_in;  // still open once it has ended
    connection_.respond(s, s.block, true, *out_);
    if (reset) connection_.reset(s, h2::kNoError, *out_);
  }
}

// A body over --max-body-bytes: answered 413 once the read is done (the
// request goes no further: its DATA is ignored).
void H2Session::refuse_body(H2Stream& s) {
  --incomplete_;
  accounting_.h2_over_limit(H2Limit::body);
  s.refused = true;
  s.state = H2Stream::State::waiting;
  queue(s);
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
