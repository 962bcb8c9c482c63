// The request reader's refusals and interim answers (http1/request_reader.cc,
// docs/hardening.md): the head's byte limit and its 100 header lines (431
// and close, at the limit and one past it), Expect on HTTP/1.0 (ignored),
// 100-continue only for a request with a body, and the Host memo, which
// must take only the very value it checked. Each answer byte for byte,
// whole and cut at every byte.
#include <gtest/gtest.h>

#include <string>

#include "http1/session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

class RequestReaderTest : public ::testing::Test {
 protected:
  RequestReaderTest() : table_(test::kTestPersona, {}) {}

  // What a fresh session with `limits` answers to `request` fed whole,
  // after checking that every cut in two answers the same; open_ says
  // whether the whole one stays open.
  std::string answer(std::string_view request, const Limits& limits = {}) {
    Session session(table_, sink_, limits);
    std::string whole;
    open_ = session.feed(request.data(), request.size(), whole).next != Fed::Next::close;
    test::for_each_split(request, [&](std::string_view a, std::string_view b, size_t split) {
      session.reset();
      std::string out;
      session.feed(a.data(), a.size(), out);
      session.feed(b.data(), b.size(), out);
      EXPECT_EQ(out, whole) << "split at " << split;
    });
    return whole;
  }
  std::string route(Variant v) { return table_.route(0, v).bytes; }
  std::string error(int status, Variant v) { return table_.error(status, v).bytes; }

  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  bool open_ = true;
};

// --- 431: the head's bytes (--max-header-bytes) ---

// The head counts its target, each name and value, and 4 bytes for each
// field line's ": " and CRLF: "/" (1) and "Host: a" (4 + 1 + 4) make 10.
TEST_F(RequestReaderTest, AValueThatTakesTheHeadPastTheLimitIs431AndClose) {
  Limits limits;
  limits.max_header_bytes = 200;
  // "X" and its 4 bytes: 15, then the value.
  auto with_value = [](size_t n) {
    return "GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(n, 'v') + "\r\n\r\n";
  };
  EXPECT_EQ(answer(with_value(185), limits), route(Variant::keep_alive_11));
  EXPECT_TRUE(open_);
  EXPECT_EQ(answer(with_value(186), limits), error(431, Variant::close_11));
  EXPECT_FALSE(open_);
}

TEST_F(RequestReaderTest, ANameThatTakesTheHeadPastTheLimitIs431AndClose) {
  Limits limits;
  limits.max_header_bytes = 200;
  // The name, its 4 bytes and the value "b": 10 + 5, then the name.
  auto with_name = [](size_t n) {
    return "GET / HTTP/1.1\r\nHost: a\r\n" + std::string(n, 'n') + ": b\r\n\r\n";
  };
  EXPECT_EQ(answer(with_name(185), limits), route(Variant::keep_alive_11));
  EXPECT_EQ(answer(with_name(186), limits), error(431, Variant::close_11));
  EXPECT_FALSE(open_);
}

// A name or a value that runs past the limit is refused as soon as it
// does, without waiting for its line to end; one that reaches it exactly
// waits for the rest.
TEST_F(RequestReaderTest, AFieldRunningPastTheLimitIs431BeforeItsLineEnds) {
  Limits limits;
  limits.max_header_bytes = 200;
  auto answer_to_part = [&](const std::string& part) {
    Session session(table_, sink_, limits);
    std::string out;
    Fed fed = session.feed(part.data(), part.size(), out);
    open_ = fed.next != Fed::Next::close;
    return out;
  };
  const std::string head = "GET / HTTP/1.1\r\nHost: a\r\n";  // 10 bytes counted
  EXPECT_EQ(answer_to_part(head + std::string(190, 'n')), "") << "a name of 200";
  EXPECT_TRUE(open_);
  EXPECT_EQ(answer_to_part(head + std::string(191, 'n')), error(431, Variant::close_11));
  EXPECT_FALSE(open_);
  // "X" and its 4 bytes: 15.
  EXPECT_EQ(answer_to_part(head + "X: " + std::string(185, 'v')), "") << "a value of 200";
  EXPECT_EQ(answer_to_part(head + "X: " + std::string(186, 'v')), error(431, Variant::close_11));
}

// A request that ends the head before the limit, but whose next request
// is too long, is answered first: the limit is per request.
TEST_F(RequestReaderTest, TheHeadLimitIsCountedPerRequest) {
  Limits limits;
  limits.max_header_bytes = 200;
  std::string near = "GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(185, 'v') + "\r\n\r\n";
  EXPECT_EQ(answer(near + near, limits),
            route(Variant::keep_alive_11) + route(Variant::keep_alive_11));
}

// --- 431: more than Limits::kMaxHeaders (100) field lines ---

TEST_F(RequestReaderTest, AHundredFieldLinesAreReadAndOneMoreIs431AndClose) {
  // Host and 99 others: 100 lines.
  std::string hundred = "GET / HTTP/1.1\r\nHost: a\r\n" + test::repeat("X: b\r\n", 99);
  EXPECT_EQ(answer(hundred + "\r\n"), route(Variant::keep_alive_11));
  EXPECT_TRUE(open_);
  EXPECT_EQ(answer(hundred + "Y: c\r\n\r\n"), error(431, Variant::close_11));
  EXPECT_FALSE(open_);
  // In HTTP/1.0 alike, in its own answer.
  EXPECT_EQ(answer("GET / HTTP/1.0\r\n" + test::repeat("X: b\r\n", 101) + "\r\n"),
            error(431, Variant::close_10));
}

// --- Expect ---

// RFC 9110 section 10.1.1: an HTTP/1.0 request's expectations are ignored,
// so no interim 100 and no 417.
TEST_F(RequestReaderTest, ExpectOnHttp10IsIgnored) {
  EXPECT_EQ(answer("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"),
            error(405, Variant::close_10));
  EXPECT_EQ(answer("GET / HTTP/1.0\r\nExpect: teapot\r\n\r\n"), route(Variant::close_10));
  EXPECT_EQ(answer("GET / HTTP/1.0\r\nConnection: keep-alive\r\nExpect: teapot\r\n\r\n"),
            route(Variant::keep_alive_10));
  EXPECT_TRUE(open_);
}

// The interim answer is for a client waiting to send its body: none when
// there is no body to wait for.
TEST_F(RequestReaderTest, OneHundredContinueOnlyForARequestWithABody) {
  const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  EXPECT_EQ(answer("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"),
            route(Variant::keep_alive_11));
  EXPECT_EQ(
      answer("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"),
      error(405, Variant::keep_alive_11));
  EXPECT_EQ(
      answer("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"),
      kContinue + error(405, Variant::keep_alive_11));
  EXPECT_EQ(answer("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"),
            kContinue + error(405, Variant::keep_alive_11));
}

// --- The Host memo ---

// A Host value of 8 to 16 bytes found valid is remembered by its first and
// last eight bytes and its length; the same value again is taken without a
// second look. A value that shares its first eight bytes and length but
// not its end, or its first and last eight bytes but not its length, is
// another value, and is checked: these two are not hosts.
TEST_F(RequestReaderTest, TheHostMemoTakesOnlyTheValueItChecked) {
  Session session(table_, sink_);
  auto feed = [&](std::string_view host) {
    std::string in = "GET / HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
    std::string out;
    session.reset();
    session.feed(in.data(), in.size(), out);
    return out;
  };
  const std::string ok = route(Variant::keep_alive_11);
  const std::string bad = error(400, Variant::close_11);
  ASSERT_EQ(feed("127.0.0.1:8080"), ok);
  ASSERT_EQ(feed("127.0.0.1:8080"), ok) << "the memo's own value";
  EXPECT_EQ(feed("127.0.0.1:80 x"), bad) << "the same length and first eight bytes";
  ASSERT_EQ(feed("127.0.0.1:8080"), ok);
  EXPECT_EQ(feed("127.0.0. 0.1:8080"), bad) << "the same first and last eight bytes";
  // 16 bytes: the two words meet without overlapping.
  ASSERT_EQ(feed("localhost.a:8080"), ok);
  EXPECT_EQ(feed("localhos@.a:8080"), bad);
  EXPECT_EQ(feed("localhost.a:8080"), ok);
}

}  // namespace
}  // namespace hello
