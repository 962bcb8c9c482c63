#include "http/field_syntax.h"

#include <gtest/gtest.h>

#include <string>

namespace hello {
namespace {

TEST(FieldSyntax, CaseIsFoldedForAsciiLettersOnly) {
  EXPECT_TRUE(equals_nocase("Content-Length", "content-LENGTH"));
  EXPECT_TRUE(equals_nocase("", ""));
  EXPECT_FALSE(equals_nocase("host", "hosts"));
  // OR-ing 0x20 into both sides, as one copy did, took these for equal.
  EXPECT_FALSE(equals_nocase("x^", "x~"));
  EXPECT_FALSE(equals_nocase("@", "`"));
  EXPECT_FALSE(equals_nocase("[", "{"));
  EXPECT_FALSE(equals_nocase("\r", "-"));
  EXPECT_FALSE(equals_nocase("\xc3\x89", "\xc3\xa9")) << "no case outside ASCII";
  EXPECT_EQ(to_lower_ascii('Z'), 'z');
  EXPECT_EQ(to_lower_ascii('@'), '@');
  EXPECT_EQ(to_lower_ascii('['), '[');
}

TEST(FieldSyntax, ATokenIsOneTcharOrMore) {
  EXPECT_TRUE(is_token("X-Hello_1.2"));
  EXPECT_TRUE(is_token("!#$%&'*+-.^_`|~"));
  for (const char* bad :
       {"", "a b", "a:b", "a\tb", "a\"b", "a(b", "a,b", "a/b", "a@b", "a[b", "a{b", "\xc3\xa9"})
    EXPECT_FALSE(is_token(bad)) << bad;
  EXPECT_FALSE(is_token(std::string("a\0b", 3)));
}

TEST(FieldSyntax, AValueHoldsNoControlCharacterButHtab) {
  EXPECT_EQ(find_control("a b\tc \xc3\xa9\x80\xff"), std::string_view::npos);
  EXPECT_EQ(find_control("ab\r\nX: 1"), 2u);
  EXPECT_EQ(find_control("a\nb"), 1u);
  EXPECT_EQ(find_control(std::string("a\0", 2)), 1u);
  EXPECT_EQ(find_control("a\x1f"), 1u);
  EXPECT_EQ(find_control("\x7f"), 0u);
}

TEST(FieldSyntax, TheServersOwnHeadersInAnyCase) {
  for (const char* name : {"Content-Length", "TRANSFER-ENCODING", "connection", "Keep-Alive",
                           "Date", "x-hello-shape-decision"})
    EXPECT_TRUE(is_server_header(name)) << name;
  for (const char* name : {"Content-Type", "X-Date", "X-Hello-Shape", "Server", "dates"})
    EXPECT_FALSE(is_server_header(name)) << name;
}

}  // namespace
}  // namespace hello
