#include "observe/json_escape.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace hello {
namespace {

std::string escaped(std::string_view in) {
  std::string out(kJsonEscapedByte * in.size(), '\0');
  out.resize(json_escape(in, out.data()));
  return out;
}

using namespace std::string_view_literals;

TEST(JsonEscape, PrintableAsciiIsCopied) {
  EXPECT_EQ(escaped("/a/b?c=d&e=f%20g ~"), "/a/b?c=d&e=f%20g ~");
  EXPECT_EQ(escaped(""), "");
}

TEST(JsonEscape, QuotesAndBackslashesGetABackslash) {
  EXPECT_EQ(escaped(R"(/"x"\y)"), R"(/\"x\"\\y)");
}

TEST(JsonEscape, ControlBytesAndDelAreUnicodeEscapes) {
  EXPECT_EQ(escaped("\x00\x01\t\n\r\x1f\x7f"sv), R"(\u0000\u0001\u0009\u000a\u000d\u001f\u007f)");
  EXPECT_EQ(escaped(" \x1b[31m"), R"( \u001b[31m)");
}

TEST(JsonEscape, WellFormedUtf8IsCopied) {
  for (std::string_view s : {"é"sv, "€"sv, "😀"sv, "\xed\x9f\xbf"sv /* U+D7FF */,
                             "\xee\x80\x80"sv /* U+E000 */, "\xf4\x8f\xbf\xbf"sv /* U+10FFFF */,
                             "\xe0\xa0\x80"sv /* U+0800 */, "\xf0\x90\x80\x80"sv /* U+10000 */})
    EXPECT_EQ(escaped(s), s);
  EXPECT_EQ(escaped("/caf\xc3\xa9?q=\xe2\x82\xac"), "/caf\xc3\xa9?q=\xe2\x82\xac");
}

// Each maximal subpart of an ill-formed sequence is one U+FFFD, as
// Python's bytes.decode("utf-8", "replace") gives (Unicode 15, 3.9.6).
TEST(JsonEscape, IllFormedUtf8IsOneReplacementPerMaximalSubpart) {
  const std::string_view r = R"(\ufffd)";
  auto times = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += r;
    return s;
  };
  EXPECT_EQ(escaped("\x80"), times(1));              // a lone continuation byte
  EXPECT_EQ(escaped("\xbf\x80"), times(2));          // two of them
  EXPECT_EQ(escaped("\xc0\xaf"), times(2));          // an overlong '/': C0 never begins one
  EXPECT_EQ(escaped("\xc1\xbf"), times(2));          // nor does C1
  EXPECT_EQ(escaped("\xe0\x80\xaf"), times(3));      // overlong: E0 wants A0..BF next
  EXPECT_EQ(escaped("\xed\xa0\x80"), times(3));      // a surrogate: ED wants 80..9F next
  EXPECT_EQ(escaped("\xf0\x8f\xbf\xbf"), times(4));  // overlong 4 bytes
  EXPECT_EQ(escaped("\xf4\x90\x80\x80"), times(4));  // above U+10FFFF
  EXPECT_EQ(escaped("\xf5\x80"), times(2));          // F5..FF never begin one
  EXPECT_EQ(escaped("\xff"), times(1));
  EXPECT_EQ(escaped("\xe2\x82"
                    "A"),
            times(1) + "A");  // cut short: one for the two
  EXPECT_EQ(escaped("\xf0\x9f\x98"
                    "A"),
            times(1) + "A");                        // three
  EXPECT_EQ(escaped("a\xe2\x82"), "a" + times(1));  // cut by the end
  EXPECT_EQ(escaped("\xf0\x9f\x98"), times(1));
  EXPECT_EQ(escaped("\xe2\x82\xe2\x82\xac"), times(1) + "\xe2\x82\xac");  // then a good one
  EXPECT_EQ(escaped("\xc3\""), times(1) + R"(\")");  // the byte that breaks it is read anew
}

TEST(JsonEscape, TheWorstCaseIsSixBytesPerByte) {
  std::string in(256, '\x01');
  EXPECT_EQ(escaped(in).size(), kJsonEscapedByte * in.size());
  in.assign(256, '\xff');
  EXPECT_EQ(escaped(in).size(), kJsonEscapedByte * in.size());
}

// Every single byte and every pair of bytes escapes to text that a JSON
// string holds: no raw control byte, no bare quote or backslash, and
// nothing but well-formed UTF-8 (checked by escaping it again: a second
// pass changes only the backslashes and quotes the first one wrote).
TEST(JsonEscape, AnyTwoBytesGiveWellFormedText) {
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      char in[2] = {static_cast<char>(a), static_cast<char>(b)};
      std::string once = escaped({in, 2});
      for (size_t i = 0; i < once.size(); ++i) {
        auto c = static_cast<unsigned char>(once[i]);
        ASSERT_TRUE(c >= 0x20 && c != 0x7f) << a << " " << b;
        if (c == '\\') {
          ASSERT_LT(i + 1, once.size());
          ASSERT_NE(std::string_view("\"\\u").find(once[i + 1]), std::string_view::npos);
          ++i;
        } else {
          ASSERT_NE(c, '"') << a << " " << b;
        }
      }
      std::string expected;
      for (char c : once) {
        if (c == '\\' || c == '"') expected += '\\';
        expected += c;
      }
      ASSERT_EQ(escaped(once), expected) << a << " " << b;
    }
}

}  // namespace
}  // namespace hello
