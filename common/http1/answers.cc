// What a complete request is answered with: the session's end of each
// request (the keep-alive decision, and whether the answer waits or is
// shaped) and the assembly of answers from the table's prebuilt bytes, the
// JSON echo and shaped answers. Every answer is reported to the sink. The
// common case, a route's prebuilt answer, is inlined into llhttp's
// callback for the request's end, which is why that callback lives here.
#include <charconv>
#include <string_view>

#include "http/field_syntax.h"
#include "http1/session.h"
#include "persona/json_echo.h"

namespace hello {

// The log keeps a shaped answer's whole decision.
static_assert(kDecisionText <= kMaxLoggedDecision);

// Static trampolines for the session's two callbacks: llhttp hands back the
// parser, the base of the session's reader; the feed in progress says
// where answers go.
struct SessionCallbacks {
  static Session& of(llhttp_t* p) { return Session::of(p); }
  static int message_begin(llhttp_t* p) {
    of(p).on_message_begin();
    return 0;
  }
  static int message_complete(llhttp_t* p) {
    Session& s = of(p);
    return s.on_message_complete(*s.context().out);
  }
};

const llhttp_settings_t& Session::settings(bool shape) {
  static const llhttp_settings_t kSettings = RequestReader::make_settings(
      SessionCallbacks::message_begin, SessionCallbacks::message_complete, false);
  static const llhttp_settings_t kShapeSettings = RequestReader::make_settings(
      SessionCallbacks::message_begin, SessionCallbacks::message_complete, true);
  return shape ? kShapeSettings : kSettings;
}

HELLO_CALLBACK void Session::on_message_begin() {
  enter(State::in_request);
  begin_request();
}

HELLO_CALLBACK int Session::on_message_complete(std::string& out) {
  // Upgrade: h2c (with --h2 in clear): the HTTP/2 heart answers it.
  if (request_.h2c && begin_upgrade()) [[unlikely]]
    return HPE_PAUSED;
  if (request_.ws) [[unlikely]] {
    int rc = answer_websocket(out);
    if (rc != kAnswerAsUsual) return rc;
  }
  const llhttp_t& p = parser();
  bool http11 = p.http_minor == 1;
  int method = p.method;
  bool keep_alive = keeps_alive();
  Variant v = variant_of(http11, keep_alive);
  bool head = method == HTTP_HEAD;
  // Answers that wait or are shaped: one test when the table has neither.
  if (table_.waits_or_shapes() && request_.route >= 0 && !request_.expect_unknown) [[unlikely]] {
    int rc = complete_routed(out, v, head, keep_alive);
    if (rc != kAnswerAsUsual) return rc;
  }
  if (answer_request(out, v, head)) keep_alive = false;  // a body ended by the close
  if (keep_alive) {
    enter(State::idle);
    return 0;
  }
  enter(State::closed);
  // Stop here: nothing after a closing response is answered.
  return HPE_PAUSED;
}

// A request to a route of a table whose answers may wait or be shaped:
// the answer step decides; kAnswerAsUsual if it neither waits nor is shaped.
[[gnu::noinline]] int Session::complete_routed(std::string& out, Variant v, bool head,
                                               bool keep_alive) {
  AnswerFacts facts{request_.route, shape_text(), request_.shape.length, request_.shape.overflow};
  decide_answer(table_, dice_, facts, shape_, answer_);
  switch (answer_.kind) {
    case Answer::Kind::refused:
      answer_with(out, table_.bad_request(v), answer_.reason(), head,
                  Answered::Shaping::bad_parameters);
      return after_answer(keep_alive);
    case Answer::Kind::shaped:
      if (answer_.delay_us > 0) return defer(answer_.delay_us, v, head, keep_alive, true);
      if (answer_shaped(out, v, head)) keep_alive = false;
      return after_answer(keep_alive);
    case Answer::Kind::usual:
      break;
  }
  if (answer_.delay_us == 0) return kAnswerAsUsual;
  return defer(answer_.delay_us, v, head, keep_alive, false);
}

bool Session::answer_deferred(std::string& out) {
  return deferred_.shaped ? answer_shaped(out, deferred_.variant, deferred_.head)
                          : answer_request(out, deferred_.variant, deferred_.head);
}

bool Session::answer_shaped(std::string& out, Variant v, bool head) {
  int route = request_.route;
  ShapedAnswer a =
      shape_answer(table_, answer_, route, request_.echo ? &body_ : nullptr, decision_text_);
  if (a.kind == ShapedAnswer::Kind::reset) {
    // No answer at all: the connection resets.
    Answered reset;
    reset.shaping = Answered::Shaping::reset;
    sink_.answered(reset);
    stream_.reset = true;
    return true;
  }
  bool http11 = v == Variant::keep_alive_11 || v == Variant::close_11;
  if (a.close) v = variant_of(http11, false);
  if (a.kind == ShapedAnswer::Kind::not_json) {
    answer_with(out, table_.bad_request(v), a.text, head);
    return a.close;
  }
  table_.append_shaped_head(out, route, v, a.status, a.length, *answer_.shape,
                            decision_text_.view());
  if (!head && a.length > 0) {
    if (a.sized) {
      stream_.body = {pattern_bytes(), kPatternBytes, a.length};
    } else if (a.drip_us > 0) {
      // Sent piece by piece later: the echo's text must outlive the next
      // request's, so the session keeps a copy.
      std::string_view text = a.text;
      if (request_.echo) {
        body_.assign(text);
        text = body_;
      }
      stream_.body = {text.data(), text.size(), text.size()};
    } else {
      out.append(a.text);
    }
    stream_.drip_us = a.drip_us;
  }
  note_status(a.status, head ? 0 : a.length, Answered::Kind::request, Answered::Shaping::shaped);
  return a.close;
}

HELLO_CALLBACK bool Session::answer_request(std::string& out, Variant v, bool head) {
  const Request& r = request_;
  // The common case first: a route's own answer.
  if (r.route >= 0 && !r.expect_unknown) {
    if (r.echo) {
      answer_echo(out, v);
      return false;
    }
    const PreparedResponse& response = table_.route(r.route, v, head);
    answer(out, response, head, Answered::Kind::request);
    // A body without a length is ended by closing; its bytes say close.
    return response.closes;
  }
  constexpr Answered::Kind kRequest = Answered::Kind::request;
  if (r.expect_unknown)
    answer(out, table_.error(417, v), head, kRequest);
  else if (!r.path_known)
    answer(out, table_.error(404, v), head, kRequest);
  else
    answer(out, table_.not_allowed(r.path_route, v), head, kRequest);
  return false;
}

void Session::answer_echo(std::string& out, Variant v) {
  EchoResult echo = echo_json(body_);
  answer_with(out, echo.ok ? table_.route(request_.route, v) : table_.bad_request(v), echo.text);
}

HELLO_CALLBACK void Session::answer_with(std::string& out, const PreparedResponse& r,
                                         std::string_view body, bool head_only,
                                         Answered::Shaping shaping) {
  char digits[20];
  char* end = std::to_chars(digits, digits + sizeof digits, body.size()).ptr;
  out.append(r.bytes.data(), static_cast<size_t>(r.length_offset));
  out.append(digits, static_cast<size_t>(end - digits));
  out.append(r.bytes.data() + r.length_offset,
             r.head_length - static_cast<size_t>(r.length_offset));
  if (!head_only) out.append(body);
  note_status(r.status, head_only ? 0 : body.size(), Answered::Kind::request, shaping);
}

HELLO_CALLBACK void Session::answer(std::string& out, const PreparedResponse& r, bool head_only,
                                    Answered::Kind kind) {
  size_t length = head_only ? r.head_length : r.bytes.size();
  out.append(r.bytes.data(), length);
  note_status(r.status, length - r.head_length, kind);
}

HELLO_CALLBACK void Session::note_status(int status, size_t body_bytes, Answered::Kind kind,
                                         Answered::Shaping shaping) {
  ++answered_;
  Answered a;
  a.status = static_cast<uint16_t>(status);
  a.kind = kind;
  a.shaping = shaping;
  a.body_bytes = body_bytes;
  if (keeps_target()) [[unlikely]] {
    note_logged(a);
    return;
  }
  sink_.answered(a);
}

// Out of line, so that a session without a log saves no registers for it.
[[gnu::noinline]] void Session::note_logged(Answered& a) {
  const llhttp_t& p = parser();
  if (a.kind == Answered::Kind::request)
    a.method = llhttp_method_name(static_cast<llhttp_method_t>(p.method));
  a.target = logged_target();
  a.http_minor = static_cast<uint8_t>(p.http_minor);
  if (a.shaping == Answered::Shaping::shaped) a.decision = decision_text_.view();
  sink_.answered(a);
}

void Session::fail(std::string& out, int status, bool malformed) {
  const llhttp_t& p = parser();
  bool http10 = p.http_major == 1 && p.http_minor == 0;
  answer(out, table_.error(status, variant_of(!http10, false)), false,
         malformed ? Answered::Kind::malformed : Answered::Kind::timed_out);
  enter(State::closed);
}

// A complete GET at a WebSocket path (RFC 6455 section 4.2.1), judged
// once the request is (upgrade.cc keeps its fields): it switches, and the
// WebSocket heart sends the 101, or is refused as its framework refuses it.
[[gnu::noinline]] int Session::answer_websocket(std::string& out) {
  const WsTable& ws = *table_.websocket();
  WsHandshakeFields fields = ws_fields();
  WsVerdict verdict = judge_ws_handshake(ws.persona(), fields);
  bool keep_alive = keeps_alive();
  Variant v = variant_of(parser().http_minor == 1, keep_alive);
  bool shaped = false;
  if (verdict.upgrade && shape_requests_ && (request_.shape.length > 0 || request_.shape.overflow))
      [[unlikely]] {
    // The upgrade's shaping parameters shape its messages; wrong ones get
    // the 400 any request gets for them.
    if (!parse_ws_shape(table_, shape_text(), request_.shape.length, request_.shape.overflow,
                        shape_, answer_)) {
      answer_with(out, table_.bad_request(v), answer_.reason(), false,
                  Answered::Shaping::bad_parameters);
      return after_answer(keep_alive);
    }
    shaped = shape_.any();
  }
  if (verdict.upgrade) {
    // What the WebSocket heart needs: the key for its 101, the extension,
    // the shape of its echoes, the target for its log line.
    upgrade_ = {};
    upgrade_.to = Upgrade::To::websocket;
    upgrade_.ws_key = trim_ows(fields.key);
    upgrade_.ws_deflate = verdict.deflate;
    if (shaped) upgrade_.ws_shape = &shape_;
    upgrade_.target = keeps_target() ? logged_target() : std::string_view();
    upgrading_ = true;
    enter(State::closed);
    return HPE_PAUSED;
  }
  const WsRefusal& refusal = ws.persona().refusals[static_cast<int>(verdict.refusal)];
  if (const WsPrepared* raw = ws.refusal(verdict.refusal)) {
    out.append(raw->bytes);
    size_t blank = raw->bytes.find("\r\n\r\n");
    note_status(refusal.status, raw->bytes.size() - (blank + 4), Answered::Kind::request);
    return after_answer(keep_alive && !raw->closes);
  }
  if (refusal.status == 404) return kAnswerAsUsual;  // the persona's 404, as for any path
  const PreparedResponse& r = table_.error(refusal.status, v);
  answer(out, r, false, Answered::Kind::request);
  return after_answer(keep_alive && !r.closes);
}

}  // namespace hello
