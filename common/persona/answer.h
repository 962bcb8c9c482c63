// The answer step (docs/architecture.md#the-answer-step): what a complete
// request to a route is answered with, decided once for every protocol.
// A heart hands it the request's facts; it decides, with the table and the
// worker's dice, when the answer goes (the route's delay or a shape's),
// whether the request's shaping text earns a 400, and what a shaped answer
// sends: its status, its body (the route's, the request's JSON echoed, or
// the shared pattern), its drip, close or reset, and the decision header's
// text. The heart only writes that answer in its own framing: HTTP/1 from
// the table's prebuilt bytes (http1/answers.cc), HTTP/2 as fields
// (http2/h2_session_answer.cc). Nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/limits.h"
#include "persona/response_table.h"
#include "shaping/shape.h"

namespace hello {

// What a heart knows of a complete request to a route, whatever its
// protocol.
struct AnswerFacts {
  int route = -1;  // the route it matched
  // Its shaping text (the query, then each X-Hello-Shape value, '&'
  // between), decoded in place when parsed; empty without --shape.
  char* shape_text = nullptr;
  size_t shape_length = 0;
  bool shape_overflow = false;  // the text passed kMaxShapeText
};

// What the step decided at the request's end.
struct Answer {
  enum class Kind : uint8_t {
    usual,    // the route's own answer (prebuilt, or its echo), after delay_us
    refused,  // 400: the shaping text asks for something wrong (reason())
    shaped,   // `shape` and `decision` make it (shape_answer()), after delay_us
  };
  Kind kind = Kind::usual;
  uint64_t delay_us = 0;  // how long the answer waits; 0: at once
  // shaped: what shapes it (the request's own, the route's or the
  // default), and what the dice decided.
  const Shape* shape = nullptr;
  Decision decision;
  // refused: the 400's text/plain body, the parameter's line and "\n".
  char reason_text[sizeof(ShapeError::text) + 1];
  size_t reason_length = 0;

  std::string_view reason() const { return {reason_text, reason_length}; }
};

// Decides the answer to a complete request to `facts.route` of a table
// whose answers wait or are shaped (waits_or_shapes()): the request's own
// parameters if it carries any (parsed into `parsed`, which must outlive
// the answer), else the route's shape or the default; one draw of `dice`
// per parameter of the shape. `dice` is needed only if the table shapes.
void decide_answer(const ResponseTable& table, Dice* dice, const AnswerFacts& facts, Shape& parsed,
                   Answer& answer);

// A WebSocket's shaping (docs/websocket.md): the upgrade request's shaping
// text (a copy the caller keeps as long as `shape`), parsed once for the
// connection; false with the 400's body in `answer` if it asks for
// something wrong. Only `delay` and `size` apply to its messages.
bool parse_ws_shape(const ResponseTable& table, char* text, size_t length, bool overflow,
                    Shape& shape, Answer& answer);
// What one message's echo gets: one draw of `dice` per parameter.
Decision decide_ws_message(Dice& dice, const Shape& shape);

// What a shaped answer sends, made when it is due.
struct ShapedAnswer {
  enum class Kind : uint8_t {
    reset,     // no answer: the connection (or HTTP/2 stream) is reset
    shaped,    // status, body and decision as below
    not_json,  // the echo's 400, not shaped: `text` is its body
  };
  Kind kind = Kind::shaped;
  bool close = false;  // the connection closes after it
  bool sized = false;  // the body is `length` bytes of the shared pattern
  uint16_t status = 0;
  uint64_t length = 0;   // the body's bytes (Content-Length); 0 for 204 and 304
  uint64_t drip_us = 0;  // the body is spread over this long (shaping/drip.h)
  // Not sized: the body (the route's content, or the echoed JSON, valid
  // until the thread's next echo).
  std::string_view text;
};

// Makes `answer`'s shaped answer to `route`: `echo_body` is the request's
// body when the route echoes it (null otherwise); the decision header's
// value is written into `decision`.
ShapedAnswer shape_answer(const ResponseTable& table, const Answer& answer, int route,
                          std::string* echo_body, DecisionText& decision);

}  // namespace hello
