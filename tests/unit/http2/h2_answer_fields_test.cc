// An answer made per request as HTTP/2 fields (http2/h2_answer_fields.h):
// the persona's fields from the template made once, with the status, the
// length, a shape's fields and the decision put in their places, never
// parsed from an HTTP/1 head.
#include "http2/h2_answer_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "test_persona.h"

namespace hello {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields made(const H2Answer& t, const H2Made& m) {
  std::string bytes;
  nghttp2_nv nv[48];
  size_t n = make_fields(t, m, bytes, nv, 48);
  Fields out;
  for (size_t i = 0; i < n; ++i)
    out.emplace_back(std::string(reinterpret_cast<const char*>(nv[i].name), nv[i].namelen),
                     std::string(reinterpret_cast<const char*>(nv[i].value), nv[i].valuelen));
  for (auto& f : out)
    if (f.first == "date") f.second = "<date>";
  return out;
}

TableOptions shaping() {
  TableOptions o;
  o.shape = true;
  return o;
}

TEST(H2AnswerFields, AShapedAnswersFieldsAreThePersonasWithTheShapesInTheirPlace) {
  ResponseTable table(test::kTestPersona, shaping());
  H2Answers answers(table);
  Shape shape;
  std::string text = "header=X-Mixed:Case&header=b:2";
  ShapeError error;
  ASSERT_TRUE(parse_shape(text.data(), text.size(), table.shape_limits(), shape, error));
  H2Made m;
  m.status = 503;
  m.length = 1234;
  m.shape = &shape;
  m.decision = "status=503";
  // The test persona puts extra lines just before its Content-Length line.
  EXPECT_EQ(made(answers.shaped(0), m), (Fields{{":status", "503"},
                                                {"date", "<date>"},
                                                {"content-type", "text/plain"},
                                                {"x-mixed", "Case"},
                                                {"b", "2"},
                                                {"x-hello-shape-decision", "status=503"},
                                                {"content-length", "1234"}}));
  m.status = 204;
  m.length = 0;
  m.has_length = false;
  m.shape = nullptr;
  Fields no_length = made(answers.shaped(0), m);
  ASSERT_EQ(no_length.size(), 3u) << "no content-length, no shape";
  EXPECT_EQ(no_length[0], (std::pair<std::string, std::string>{":status", "204"}));
}

TEST(H2AnswerFields, The400TemplateTakesTheLengthOfItsBody) {
  ResponseTable table(test::kTestPersona, shaping());
  H2Answers answers(table);
  EXPECT_FALSE(answers.bad_request().ready);
  H2Made m;
  m.status = 400;
  m.length = 17;
  Fields f = made(answers.bad_request(), m);
  ASSERT_GE(f.size(), 2u);
  EXPECT_EQ(f.front(), (std::pair<std::string, std::string>{":status", "400"}));
  EXPECT_EQ(f.back(), (std::pair<std::string, std::string>{"content-length", "17"}));
}

}  // namespace
}  // namespace hello
