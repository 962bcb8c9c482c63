#include "persona/answer.h"

#include <cstring>

#include "persona/json_echo.h"

namespace hello {

namespace {

// Parses the request's shaping text into `parsed`; false with the 400's
// body in `answer` if it asks for something wrong.
bool parse_request_shape(const ResponseTable& table, const AnswerFacts& facts, Shape& parsed,
                         Answer& answer) {
  parsed.clear();
  ShapeError error;
  if (facts.shape_overflow) {
    static_assert(kMaxShapeText == 4096);
    constexpr std::string_view kTooLong = "shaping parameters: over 4096 bytes";
    memcpy(error.text, kTooLong.data(), kTooLong.size());
    error.length = kTooLong.size();
  } else if (parse_shape(facts.shape_text, facts.shape_length, table.shape_limits(), parsed,
                         error)) {
    return true;
  }
  memcpy(answer.reason_text, error.text, error.length);
  answer.reason_text[error.length] = '\n';
  answer.reason_length = error.length + 1;
  return false;
}

}  // namespace

bool parse_ws_shape(const ResponseTable& table, char* text, size_t length, bool overflow,
                    Shape& shape, Answer& answer) {
  AnswerFacts facts;
  facts.shape_text = text;
  facts.shape_length = length;
  facts.shape_overflow = overflow;
  return parse_request_shape(table, facts, shape, answer);
}

Decision decide_ws_message(Dice& dice, const Shape& shape) {
  return dice.decide(shape);
}

void decide_answer(const ResponseTable& table, Dice* dice, const AnswerFacts& facts, Shape& parsed,
                   Answer& answer) {
  int route = facts.route;
  answer.kind = Answer::Kind::usual;
  answer.shape = nullptr;
  answer.delay_us = 0;
  if (table.shaping()) {
    if (facts.shape_length > 0 || facts.shape_overflow) [[unlikely]] {
      if (!parse_request_shape(table, facts, parsed, answer)) {
        // The request asked for something wrong: 400, and the connection goes on.
        answer.kind = Answer::Kind::refused;
        return;
      }
      // Only unknown parameters: as if it carried none.
      answer.shape = parsed.any() ? &parsed : table.shape_of(route);
    } else {
      answer.shape = table.shape_of(route);
    }
  }
  if (answer.shape == nullptr) {
    answer.delay_us = table.delay_us(route);
    return;
  }
  answer.kind = Answer::Kind::shaped;
  answer.decision = dice->decide(*answer.shape);
  // The rest of a delay mix, like the rest of any mix, is the route's own.
  if (!answer.decision.delayed) answer.decision.delay_us = table.delay_us(route);
  answer.delay_us = answer.decision.delay_us;
}

ShapedAnswer shape_answer(const ResponseTable& table, const Answer& answer, int route,
                          std::string* echo_body, DecisionText& decision) {
  const Decision& d = answer.decision;
  ShapedAnswer a;
  if (d.reset) {
    a.kind = ShapedAnswer::Kind::reset;
    return a;
  }
  a.close = d.close;
  a.sized = d.sized;
  a.drip_us = d.drip_us;
  a.status = d.status != 0 ? d.status : table.status(route);
  if (echo_body != nullptr && !d.sized) {
    EchoResult echo = echo_json(*echo_body);
    a.text = echo.text;
    if (!echo.ok) {
      // The echo's 400 for a body that is not JSON is not shaped.
      a.kind = ShapedAnswer::Kind::not_json;
      return a;
    }
  } else if (!d.sized) {
    a.text = table.content(route);
  }
  bool bodyless = a.status == 204 || a.status == 304;
  a.length = bodyless ? 0 : d.sized ? d.size : a.text.size();
  decision.length = format_decision(*answer.shape, d, a.status, a.length, decision.bytes);
  return a;
}

}  // namespace hello
