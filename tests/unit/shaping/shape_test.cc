// Shaping parameters: fortio's syntax in, a Shape out; a Dice's decisions
// and the decision header's text.
#include "shaping/shape.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hello {
namespace {

constexpr uint32_t kPercent = kAllShares / 100;

struct Parsed {
  std::string text;  // the shape's headers point into it
  Shape shape;
  bool ok = false;
  std::string error;
};

// `text` parsed with the default limits (60 s, 16 MiB).
Parsed parse(std::string text, const ShapeLimits& limits = {}) {
  Parsed p;
  p.text = std::move(text);
  ShapeError error;
  p.ok = parse_shape(p.text.data(), p.text.size(), limits, p.shape, error);
  p.error = std::string(error.view());
  return p;
}

std::string why_not(std::string text, const ShapeLimits& limits = {}) {
  Parsed p = parse(std::move(text), limits);
  EXPECT_FALSE(p.ok);
  return p.error;
}

TEST(Shape, AValueAloneIsAllOfTheTime) {
  Parsed p = parse("delay=10ms");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.shape.delay.count, 1);
  EXPECT_EQ(p.shape.delay.values[0], 10000u);
  EXPECT_EQ(p.shape.delay.below[0], kAllShares);
  EXPECT_TRUE(p.shape.any());
}

TEST(Shape, PercentagesAreAbsoluteAndTheRestIsTheDefault) {
  Parsed p = parse("delay=150us:10,2ms:5,0.5s:1&status=503:20,404:5&size=1024:10,512:5");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.shape.delay.count, 3);
  EXPECT_EQ(p.shape.delay.values[0], 150u);
  EXPECT_EQ(p.shape.delay.values[1], 2000u);
  EXPECT_EQ(p.shape.delay.values[2], 500000u);
  EXPECT_EQ(p.shape.delay.below[0], 10 * kPercent);
  EXPECT_EQ(p.shape.delay.below[1], 15 * kPercent);
  EXPECT_EQ(p.shape.delay.below[2], 16 * kPercent);
  EXPECT_EQ(*p.shape.status.pick(0), 503);
  EXPECT_EQ(*p.shape.status.pick(20 * kPercent - 1), 503);
  EXPECT_EQ(*p.shape.status.pick(20 * kPercent), 404);
  EXPECT_EQ(p.shape.status.pick(25 * kPercent), nullptr);
  EXPECT_EQ(*p.shape.size.pick(14 * kPercent), 512u);
}

TEST(Shape, FractionalPercentages) {
  Parsed p = parse("status=500:0.5,502:33.3333,503:0.0001");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.shape.status.below[0], 5000u);
  EXPECT_EQ(p.shape.status.below[1], 5000u + 333333u);
  EXPECT_EQ(p.shape.status.below[2], 5000u + 333333u + 1u);
}

TEST(Shape, CloseResetDripAndHeaders) {
  Parsed p = parse("close=30&reset=true&drip=1s&header=X-A:b&header=X-Long:a:b%20c&other=1");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_TRUE(p.shape.has_close);
  EXPECT_EQ(p.shape.close, 30 * kPercent);
  EXPECT_EQ(p.shape.reset, kAllShares);
  EXPECT_EQ(p.shape.drip_us, 1000000u);
  ASSERT_EQ(p.shape.header_count, 2);
  EXPECT_EQ(p.shape.headers[0].name, "X-A");
  EXPECT_EQ(p.shape.headers[0].value, "b");
  EXPECT_EQ(p.shape.headers[1].name, "X-Long");
  EXPECT_EQ(p.shape.headers[1].value, "a:b c");
}

TEST(Shape, KeysAndValuesArePercentDecoded) {
  Parsed p = parse("d%65lay=1%C2%B5s%3A10&header=X-Sp:a+b");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.shape.delay.values[0], 1u);
  EXPECT_EQ(p.shape.delay.below[0], 10 * kPercent);
  EXPECT_EQ(p.shape.headers[0].value, "a b");
}

TEST(Shape, UnknownParametersAreIgnored) {
  Parsed p = parse("cachebust=12345&&x&=y");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_FALSE(p.shape.any());
}

TEST(Shape, AParameterGivenAgainReplacesTheFirst) {
  Parsed p = parse("status=503&status=404:50");
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.shape.status.count, 1);
  EXPECT_EQ(p.shape.status.values[0], 404);
}

TEST(Shape, BadParametersSayWhichAndWhy) {
  EXPECT_EQ(why_not("delay=abc"), "delay=abc: not a number");
  EXPECT_EQ(why_not("delay=-1ms"), "delay=-1ms: negative");
  EXPECT_EQ(why_not("delay=10"), "delay=10: no unit (us, ms or s)");
  EXPECT_EQ(why_not("delay=2m"), "delay=2m: unknown unit (us, ms or s)");
  EXPECT_EQ(why_not("delay=61s"), "delay=61s: over --max-delay");
  EXPECT_EQ(why_not("status=99"), "status=99: not a status from 200 to 599");
  EXPECT_EQ(why_not("status=600"), "status=600: not a status from 200 to 599");
  EXPECT_EQ(why_not("status=2xx"), "status=2xx: not a status from 200 to 599");
  EXPECT_EQ(why_not("size=1e30"), "size=1e30: not a whole number of bytes");
  EXPECT_EQ(why_not("size=16777217"), "size=16777217: over --max-size");
  EXPECT_EQ(why_not("size=99999999999999999999999"),
            "size=99999999999999999999999: over --max-size");
  EXPECT_EQ(why_not("status=503:60,404:50"),
            "status=503:60,404:50: the percentages add up to over 100");
  EXPECT_EQ(why_not("status=503:101"),
            "status=503:101: a percentage must be a number from 0 to 100");
  EXPECT_EQ(why_not("status=503:-5"), "status=503:-5: a percentage must be a number from 0 to 100");
  EXPECT_EQ(why_not("status=503:5,404"),
            "status=503:5,404: a value without :PERCENT must stand alone");
  EXPECT_EQ(why_not("close=maybe"), "close=maybe: not true, false or a percentage from 0 to 100");
  EXPECT_EQ(why_not("reset=200"), "reset=200: not true, false or a percentage from 0 to 100");
  EXPECT_EQ(why_not("drip=1"), "drip=1: no unit (us, ms or s)");
  EXPECT_EQ(why_not("header=X-A"), "header=X-A: not NAME:VALUE");
  EXPECT_EQ(why_not("header=:v"), "header=:v: an empty name");
  EXPECT_EQ(why_not("header=X%20A:v"),
            "header=X A:v: the name is not a token (RFC 9110 section 5.6.2)");
  EXPECT_EQ(why_not("header=X-A:a%0D%0AInjected:1"),
            "header=X-A:a??Injected:1: the value holds a control character (CR, LF...)");
  EXPECT_EQ(why_not("header=Content-Length:5"),
            "header=Content-Length:5: the server sends this header itself");
  EXPECT_EQ(why_not("header=connection:close"),
            "header=connection:close: the server sends this header itself");
  EXPECT_EQ(why_not("header=X-Hello-Shape-Decision:forged"),
            "header=X-Hello-Shape-Decision:forged: the server sends this header itself");
  EXPECT_EQ(why_not("delay=1%zz"), "delay=1%zz: a '%' not followed by two hex digits");
  EXPECT_EQ(why_not("status=%2"), "status=%2: a '%' not followed by two hex digits");
  EXPECT_EQ(why_not("status=200:1,201:1,202:1,203:1,204:1,205:1,206:1,207:1,208:1,209:1,210:1,"
                    "211:1,212:1,213:1,214:1,215:1,216:1"),
            "status=200:1,201:1,202:1,203:1,204:1,205:1,206:...: more than 16 values");
}

// A percentage is digits, then perhaps '.' and digits: from 0 to 100, the
// digits past the fourth after the point ignored (docs/shaping.md). The
// edges of that, in a mix and in close= and reset=.
TEST(Shape, PercentagesAreDecimalNumbersFrom0To100) {
  const std::string mix_why = ": a percentage must be a number from 0 to 100";
  const std::string share_why = ": not true, false or a percentage from 0 to 100";
  for (const char* bad : {"100.5", "5.", ".5", "100.0001", "101", "1000", "5.5.5", "5e1", "-5",
                          " 5", "5 ", "5:5", ""}) {
    EXPECT_EQ(why_not(std::string("status=503:") + bad),
              "status=503:" + std::string(bad) + mix_why);
    EXPECT_EQ(why_not(std::string("close=") + bad), "close=" + std::string(bad) + share_why);
  }
  auto close_of = [](const char* text) {
    Parsed p = parse(std::string("close=") + text);
    EXPECT_TRUE(p.ok) << text << ": " << p.error;
    return p.shape.close;
  };
  EXPECT_EQ(close_of("100"), kAllShares);
  EXPECT_EQ(close_of("100.0"), kAllShares);
  EXPECT_EQ(close_of("100.00009"), kAllShares) << "the fifth digit is ignored";
  EXPECT_EQ(close_of("99.99999"), kAllShares - 1);
  EXPECT_EQ(close_of("0"), 0u);
  EXPECT_EQ(close_of("0.00009"), 0u);
  EXPECT_EQ(close_of("0.0001"), 1u);
  EXPECT_EQ(close_of("050"), 50 * kPercent);
  EXPECT_EQ(close_of("5.25"), 5 * kPercent + kPercent / 4);
  // A mix's percentages may add up to 100 exactly.
  Parsed p = parse("status=503:99.9999,404:0.0001");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.shape.status.below[1], kAllShares);
  EXPECT_EQ(why_not("status=503:99.9999,404:0.0002"),
            "status=503:99.9999,404:0.0002: the percentages add up to over 100");
}

// Statuses and sizes are whole numbers without sign; leading zeros are
// only zeros, however many.
TEST(Shape, WholeNumbersAtTheirEdges) {
  // The one value of `key` in `text`, or -1 if it was not read.
  auto value_of = [](const std::string& text) -> int64_t {
    Parsed p = parse(text);
    EXPECT_TRUE(p.ok) << text << ": " << p.error;
    if (p.shape.status.count == 1) return p.shape.status.values[0];
    if (p.shape.size.count == 1) return static_cast<int64_t>(p.shape.size.values[0]);
    return -1;
  };
  EXPECT_EQ(value_of("status=200"), 200);
  EXPECT_EQ(value_of("status=599"), 599);
  EXPECT_EQ(why_not("status=199"), "status=199: not a status from 200 to 599");
  EXPECT_EQ(why_not("status="), "status=: not a status from 200 to 599");
  EXPECT_EQ(why_not("status=-200"), "status=-200: not a status from 200 to 599");
  EXPECT_EQ(why_not("status=200.0"), "status=200.0: not a status from 200 to 599");
  EXPECT_EQ(value_of("status=0404"), 404);
  EXPECT_EQ(value_of("size=16777216"), 16777216) << "--max-size itself";
  EXPECT_EQ(value_of("size=0"), 0);
  EXPECT_EQ(value_of("size=" + std::string(30, '0') + "7"), 7);
  EXPECT_EQ(value_of("status=" + std::string(30, '0') + "200"), 200);
  EXPECT_EQ(why_not("size="), "size=: not a whole number of bytes");
  EXPECT_EQ(why_not("size=-1"), "size=-1: not a whole number of bytes");
  EXPECT_EQ(why_not("size=1.5"), "size=1.5: not a whole number of bytes");
  EXPECT_EQ(why_not("size=18446744073709551616"), "size=18446744073709551616: over --max-size");
}

TEST(Shape, SixteenValuesInAMixAndNoMore) {
  std::string sixteen = "status=200:1";
  for (int i = 1; i < 16; ++i) sixteen += "," + std::to_string(200 + i) + ":1";
  Parsed p = parse(sixteen);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.shape.status.count, 16);
  EXPECT_EQ(p.shape.status.values[15], 215);
  EXPECT_EQ(p.shape.status.below[15], 16 * kPercent);
}

// header= adds a header each time: 16 of them, and the 17th is refused
// with its own text.
TEST(Shape, SixteenHeadersAndNoMore) {
  std::string text;
  for (int i = 0; i < 16; ++i) text += "&header=X-" + std::to_string(i) + ":v" + std::to_string(i);
  Parsed p = parse(text);
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_EQ(p.shape.header_count, 16);
  EXPECT_EQ(p.shape.headers[15].name, "X-15");
  EXPECT_EQ(p.shape.headers[15].value, "v15");
  EXPECT_EQ(why_not(text + "&header=X-16:v16"), "header=X-16:v16: more than 16");
  EXPECT_EQ(why_not(text + "&header=X-16:v16&header=X-17:v17"), "header=X-16:v16: more than 16");
}

TEST(Shape, LimitsAreTheFlags) {
  EXPECT_TRUE(parse("delay=2s&size=100", {2000000, 100}).ok);
  EXPECT_EQ(why_not("delay=2001ms", {2000000, 100}), "delay=2001ms: over --max-delay");
  EXPECT_EQ(why_not("size=101", {2000000, 100}), "size=101: over --max-size");
  EXPECT_EQ(why_not("drip=3s", {2000000, 100}), "drip=3s: over --max-delay");
}

TEST(Shape, HeadersTheAnswerHasAlreadyAreRefused) {
  std::vector<std::string> reserved{"date", "content-type"};
  ShapeLimits limits;
  limits.reserved = &reserved;
  EXPECT_EQ(why_not("header=Content-Type:text/html", limits),
            "header=Content-Type:text/html: the server sends this header itself");
  EXPECT_EQ(why_not("header=DATE:x", limits), "header=DATE:x: the server sends this header itself");
  EXPECT_TRUE(parse("header=Content-Type:text/html").ok) << "not reserved without the list";
  EXPECT_TRUE(parse("header=X-Date:x", limits).ok);
}

// The same list of the server's own headers as the route file's
// (common/http/field_syntax.h), whatever the persona's list adds.
TEST(Shape, NoHeaderTheServerSendsItselfEvenWithoutTheList) {
  for (std::string_view name : {"Content-Length", "transfer-encoding", "Connection", "Keep-Alive",
                                "DATE", "X-Hello-Shape-Decision"}) {
    std::string text = "header=" + std::string(name) + ":x";
    EXPECT_EQ(why_not(text), text + ": the server sends this header itself");
  }
  EXPECT_TRUE(parse("header=X-Date:x&header=X-Hello-Shape:x").ok);
}

TEST(Shape, AnErrorIsOneLineEvenForAValueWithLineBreaks) {
  std::string error = why_not("status=%0D%0A%0D%0A");
  EXPECT_EQ(error.find_first_of("\r\n"), std::string::npos);
}

TEST(Dice, TheSameSeedGivesTheSameDecisions) {
  Parsed p = parse("status=503:20,404:5&delay=1ms:10&size=10:50&close=5");
  ASSERT_TRUE(p.ok);
  Dice a(7), b(7), c(8);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    Decision x = a.decide(p.shape), y = b.decide(p.shape), z = c.decide(p.shape);
    EXPECT_EQ(x.status, y.status);
    EXPECT_EQ(x.delay_us, y.delay_us);
    EXPECT_EQ(x.sized, y.sized);
    EXPECT_EQ(x.close, y.close);
    differ += x.status != z.status || x.delay_us != z.delay_us;
  }
  EXPECT_GT(differ, 100);  // another seed, other decisions
}

TEST(Dice, DecisionsFollowTheShares) {
  Parsed p = parse("status=503:20,404:5&delay=1ms:10&reset=1.5");
  ASSERT_TRUE(p.ok);
  Dice dice(1);
  std::map<int, int> statuses;
  int delayed = 0, resets = 0;
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) {
    Decision d = dice.decide(p.shape);
    ++statuses[d.status];
    delayed += d.delay_us == 1000;
    resets += d.reset;
  }
  // Binomial standard deviations are under 0.1% here: 0.5% is > 5 of them.
  EXPECT_NEAR(statuses[503] / double(kDraws), 0.20, 0.005);
  EXPECT_NEAR(statuses[404] / double(kDraws), 0.05, 0.005);
  EXPECT_NEAR(statuses[0] / double(kDraws), 0.75, 0.005);
  EXPECT_NEAR(delayed / double(kDraws), 0.10, 0.005);
  EXPECT_NEAR(resets / double(kDraws), 0.015, 0.002);
}

TEST(Dice, DrawsCoverTheWholeRange) {
  Dice dice(3);
  uint32_t low = kAllShares, high = 0;
  for (int i = 0; i < 100000; ++i) {
    uint32_t d = dice.draw();
    ASSERT_LT(d, kAllShares);
    low = std::min(low, d);
    high = std::max(high, d);
  }
  EXPECT_LT(low, 100u);
  EXPECT_GT(high, kAllShares - 100);
}

std::string decision_text(const std::string& params, const Decision& d, uint16_t status,
                          uint64_t size) {
  Parsed p = parse(params);
  EXPECT_TRUE(p.ok) << p.error;
  char out[kDecisionText];
  return std::string(out, format_decision(p.shape, d, status, size, out));
}

TEST(Decision, NamesEachParameterTheShapeHasWithWhatWasApplied) {
  Decision d;
  d.delay_us = 2000;
  d.status = 503;
  EXPECT_EQ(decision_text("delay=2ms:5&status=503:5", d, 503, 8), "delay=2ms status=503");
  EXPECT_EQ(decision_text("delay=2ms:5&status=503:5", Decision{}, 200, 8), "delay=0 status=200");
  d = {};
  d.delay_us = 150;
  d.size = 1024;
  d.sized = true;
  d.close = true;
  d.drip_us = 1500000;
  EXPECT_EQ(decision_text("delay=150us&size=1024&close=1&reset=1&drip=1.5s", d, 200, 1024),
            "delay=150us size=1024 close=1 reset=0 drip=1500ms");
  EXPECT_EQ(decision_text("header=X-A:b", Decision{}, 200, 8), "headers");
}

TEST(Pattern, IsTheAlphabetRepeated) {
  const char* p = pattern_bytes();
  for (size_t i = 0; i < kPatternBytes; ++i) ASSERT_EQ(p[i], kPatternAlphabet[i % 64]) << i;
  static_assert(kPatternBytes % 64 == 0);
}

}  // namespace
}  // namespace hello
