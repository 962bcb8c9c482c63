// The answer step (persona/answer.h): what a complete request to a route is
// answered with, whatever its protocol: the request's parameters or the
// route's shape or the default, one draw per parameter, the 400s, and the
// shaped answer's status, body and decision.
#include "persona/answer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "test_persona.h"

namespace hello {
namespace {

class AnswerTest : public ::testing::Test {
 protected:
  explicit AnswerTest(std::string shape_default = {})
      : table_(test::kTestPersona, options(std::move(shape_default))) {}
  static TableOptions options(std::string shape_default) {
    TableOptions o;
    o.shape = true;
    o.shape_default = std::move(shape_default);
    return o;
  }
  // Decides the answer to a GET / carrying `text`.
  const Answer& decide(std::string text, bool overflow = false) {
    text_ = std::move(text);
    AnswerFacts f{0, text_.data(), text_.size(), overflow};
    decide_answer(table_, &dice_, f, parsed_, answer_);
    return answer_;
  }

  ResponseTable table_;
  Dice dice_{7};
  std::string text_;
  Shape parsed_;
  Answer answer_;
};

TEST_F(AnswerTest, NoParametersAndNoShapeIsTheUsualAnswer) {
  EXPECT_EQ(decide("").kind, Answer::Kind::usual);
  EXPECT_EQ(decide("cb=42").kind, Answer::Kind::usual) << "only unknown parameters";
  EXPECT_EQ(answer_.delay_us, 0u);
}

TEST_F(AnswerTest, BadParametersAndTooMuchTextAre400WithTheirReason) {
  EXPECT_EQ(decide("status=700").kind, Answer::Kind::refused);
  EXPECT_EQ(answer_.reason(), "status=700: not a status from 200 to 599\n");
  EXPECT_EQ(decide("", true).kind, Answer::Kind::refused);
  EXPECT_EQ(answer_.reason(), "shaping parameters: over 4096 bytes\n");
}

TEST_F(AnswerTest, OneDrawPerParameterAsTheDiceDecide) {
  Dice twin(7);
  Shape shape;
  std::string text = "delay=1ms:50&status=503:50&size=10:50&close=0&reset=false";
  ShapeError error;
  ASSERT_TRUE(parse_shape(text.data(), text.size(), table_.shape_limits(), shape, error));
  for (int i = 0; i < 50; ++i) {
    const Answer& a = decide("delay=1ms:50&status=503:50&size=10:50&close=0&reset=false");
    Decision d = twin.decide(shape);
    ASSERT_EQ(a.kind, Answer::Kind::shaped);
    EXPECT_EQ(a.shape, &parsed_);
    EXPECT_EQ(a.delay_us, d.delay_us) << i;
    EXPECT_EQ(a.decision.status, d.status) << i;
    EXPECT_EQ(a.decision.sized, d.sized) << i;
  }
}

TEST_F(AnswerTest, AShapedAnswerSaysItsStatusBodyAndDecision) {
  DecisionText text;
  decide("status=204&size=10");
  ShapedAnswer a = shape_answer(table_, answer_, 0, nullptr, text);
  EXPECT_EQ(a.kind, ShapedAnswer::Kind::shaped);
  EXPECT_EQ(a.status, 204);
  EXPECT_EQ(a.length, 0u) << "no body for 204";
  EXPECT_EQ(text.view(), "status=204 size=0");
  decide("size=100&drip=20ms");
  a = shape_answer(table_, answer_, 0, nullptr, text);
  EXPECT_TRUE(a.sized);
  EXPECT_EQ(a.length, 100u);
  EXPECT_EQ(a.drip_us, 20000u);
  EXPECT_EQ(text.view(), "size=100 drip=20ms");
  decide("header=A:1");
  a = shape_answer(table_, answer_, 0, nullptr, text);
  EXPECT_FALSE(a.sized);
  EXPECT_EQ(a.text, table_.content(0));
  EXPECT_EQ(a.length, a.text.size());
  EXPECT_EQ(text.view(), "headers");
  decide("reset=true");
  EXPECT_EQ(shape_answer(table_, answer_, 0, nullptr, text).kind, ShapedAnswer::Kind::reset);
}

class AnswerDefaultTest : public AnswerTest {
 protected:
  AnswerDefaultTest() : AnswerTest("status=503") {}
};

TEST_F(AnswerDefaultTest, TheDefaultShapesARequestThatBringsNone) {
  EXPECT_EQ(decide("").kind, Answer::Kind::shaped);
  EXPECT_EQ(answer_.shape, table_.shape_of(0));
  EXPECT_EQ(decide("cb=1").shape, table_.shape_of(0)) << "unknown parameters give none";
  EXPECT_EQ(decide("status=201").shape, &parsed_) << "the request's own replace it";
}

}  // namespace
}  // namespace hello
