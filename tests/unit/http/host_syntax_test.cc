#include "http/host_syntax.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace hello {
namespace {

// Whether `value` is valid fed whole, and the same fed in two pieces split
// at every byte and one byte at a time (a mismatch fails the test).
bool valid(std::string_view value, bool* empty_host = nullptr) {
  HostSyntax whole;
  whole.feed(value.data(), value.size());
  for (size_t split = 0; split <= value.size(); ++split) {
    HostSyntax h;
    h.feed(value.data(), split);
    h.feed(value.data() + split, value.size() - split);
    EXPECT_EQ(h.valid(), whole.valid()) << value << " split at " << split;
    EXPECT_EQ(h.empty_host(), whole.empty_host()) << value << " split at " << split;
  }
  HostSyntax bytes;
  for (char c : value) bytes.feed(&c, 1);
  EXPECT_EQ(bytes.valid(), whole.valid()) << value << " a byte at a time";
  if (empty_host != nullptr) *empty_host = whole.empty_host();
  return whole.valid();
}

TEST(HostSyntax, NamesAndPorts) {
  for (const char* v :
       {"a", "localhost", "127.0.0.1", "127.0.0.1:8080", "a:", "a:0123456", "999.1.1.1", "a..b",
        "A.Example.COM:65535", "-._~", "!$&'()*+,;=", "a%41%7e", "%C3%A9", "a ", "a:80 \t "}) {
    bool empty = true;
    EXPECT_TRUE(valid(v, &empty)) << v;
    EXPECT_FALSE(empty) << v;
  }
  for (const char* v : {"", ":80", ":", " "}) {
    bool empty = false;
    EXPECT_TRUE(valid(v, &empty)) << v;
    EXPECT_TRUE(empty) << v;
  }
  for (const char* v :
       {"a b",   " a",   "a/b",  "a?b",  "a#b",  "a@b",  "u@a:80",   "a:x",  "a:80:80",
        "a:8 0", "a:-1", "a\tb", "a\"b", "a<b",  "a>b",  "a\\b",     "a^b",  "a`b",
        "a{b",   "a|b",  "a}b",  "a]",   "a[",   "a[b]", "\xc3\xa9", "\x7f", "%",
        "%4",    "%4g",  "%zz",  "a%",   "a% 1", "a:%31"}) {
    EXPECT_FALSE(valid(v)) << testing::PrintToString(std::string(v));
  }
}

TEST(HostSyntax, IpLiterals) {
  for (const char* v :
       {"[::1]", "[::1]:8080", "[::]", "[::]:", "[1::]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7::]",
        "[::2:3:4:5:6:7:8]", "[2001:DB8::8:800:200c:417a]", "[::ffff:1.2.3.4]", "[::1.2.3.4]",
        "[1:2:3:4:5:6:1.2.3.4]", "[1::255.255.255.255]", "[v1.x]", "[V1F.fe80::a+en1]", "[v1.:]",
        "[::1] ", "[::1]:80\t"}) {
    bool empty = true;
    EXPECT_TRUE(valid(v, &empty)) << v;
    EXPECT_FALSE(empty) << v;
  }
  for (const char* v : {"[]",
                        "[",
                        "[::1",
                        "::1",
                        "[::1]x",
                        "[::1]:x",
                        "[::1]]",
                        "[[::1]]",
                        "[:1]",
                        "[1:]",
                        "[:::]",
                        "[1:::2]",
                        "[1::2::3]",
                        "[12345::]",
                        "[1:2:3:4:5:6:7:8:9]",
                        "[1:2:3:4:5:6:7]",
                        "[1:2:3:4:5:6:7:8::]",
                        "[::1:2:3:4:5:6:7:8]",
                        "[1.2.3.4]",
                        "[::1.2.3]",
                        "[::1.2.3.4.5]",
                        "[::256.1.1.1]",
                        "[::01.1.1.1]",
                        "[::1.2.3.4:1]",
                        "[::1.2.3.a]",
                        "[::a.2.3.4]",
                        "[1:2:3:4:5:6:7:1.2.3.4]",
                        "[::1%25eth0]",
                        "[::1 ]",
                        "[zz]",
                        "[v]",
                        "[v1]",
                        "[v1.]",
                        "[v.x]",
                        "[vg.x]",
                        "[v1.x/]",
                        "a[::1]"}) {
    EXPECT_FALSE(valid(v)) << v;
  }
}

// The IPv6 rule of RFC 3986 is the text form inet_pton(3) reads: compare
// the two on many candidates made of the bytes that matter.
TEST(HostSyntax, Ipv6AgreesWithInetPton) {
  uint32_t seed = 2024;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return seed >> 16;
  };
  const std::string_view pieces[] = {"0",  "1", "ff",      "FFFF", "12345", "a",  ":", ":",
                                     "::", ".", "1.2.3.4", "255",  "256",   "01", "9", "f.1"};
  int valid_seen = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string v;
    for (int n = static_cast<int>(next() % 12); n > 0; --n) v += pieces[next() % 16];
    unsigned char out[16];
    bool expected = inet_pton(AF_INET6, v.c_str(), out) == 1;
    HostSyntax h;
    std::string literal = "[" + v + "]";
    h.feed(literal.data(), literal.size());
    ASSERT_EQ(h.valid(), expected) << literal;
    valid_seen += expected;
  }
  EXPECT_GT(valid_seen, 100) << "the candidates must include valid addresses";
}

TEST(HostSyntax, ResetStartsOver) {
  HostSyntax h;
  h.feed("a b", 3);
  EXPECT_FALSE(h.valid());
  h.reset();
  EXPECT_TRUE(h.valid());
  EXPECT_TRUE(h.empty_host());
  h.feed("[::1]", 5);
  EXPECT_TRUE(h.valid());
  EXPECT_FALSE(h.empty_host());
}

}  // namespace
}  // namespace hello
