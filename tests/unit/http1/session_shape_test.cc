// Shaped answers in the heart: the query and X-Hello-Shape read however the
// bytes are cut, the persona's layout with the shaped status, length and
// headers, the decision header, bodies left to the connection, resets, and
// 400 for a bad parameter with the connection going on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http1/session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace hello {
namespace {

constexpr std::string_view kRoot = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

std::string get(std::string_view target, std::string_view headers = {}) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: a\r\n" + std::string(headers) + "\r\n";
}

// The bytes of a body the heart left to the connection.
std::string bytes_of(const BodySource& body) {
  std::string s;
  for (uint64_t i = 0; i < body.length; ++i) s += body.base[i % body.period];
  return s;
}

class SessionShapeTest : public ::testing::Test {
 protected:
  explicit SessionShapeTest(bool shape = true, std::string shape_default = {})
      : table_(test::kTestPersona, options(shape, std::move(shape_default))),
        dice_(7),
        session_(table_, sink_, {}, &dice_) {}
  static TableOptions options(bool shape, std::string shape_default) {
    TableOptions o;
    o.shape = shape;
    o.shape_default = std::move(shape_default);
    return o;
  }

  // Feeds `in` cut at `cuts` as a connection would: a waiting answer is
  // resumed at once, a body left to the connection is appended after "|",
  // and the rest of the input fed again. Records what each call decided.
  std::string drive(std::string_view in, std::vector<size_t> cuts = {}) {
    std::string out;
    cuts.push_back(in.size());
    size_t from = 0;
    for (size_t cut : cuts) {
      std::string_view piece = in.substr(from, cut - from);
      from = cut;
      while (true) {
        Fed fed = session_.feed(piece.data(), piece.size(), out);
        if (fed.next == Fed::Next::later) {
          delays_.push_back(fed.delay_us);
          size_t parsed = fed.consumed;  // up to the request that waited
          fed = session_.resume(out);
          fed.consumed = parsed;
        }
        feds_.push_back(fed);
        if (fed.streams()) out += "|" + bytes_of(fed.body);
        if (fed.next == Fed::Next::close) return out;
        if (fed.consumed >= piece.size()) break;
        piece.remove_prefix(fed.consumed);
      }
    }
    return out;
  }

  ResponseTable table_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  Dice dice_;
  Session session_;
  std::vector<Fed> feds_;
  std::vector<uint64_t> delays_;
};

TEST_F(SessionShapeTest, AShapedStatusKeepsThePersonaLayout) {
  std::string out = drive(get("/?status=503&header=X-A:b"));
  std::string date = out.substr(out.find("Date: ") + 6, 29);
  EXPECT_EQ(out, "HTTP/1.1 503 Service Unavailable\r\nDate: " + date +
                     "\r\nContent-Type: text/plain\r\nX-A: b\r\n"
                     "X-Hello-Shape-Decision: status=503\r\nContent-Length: 8\r\n\r\nHello!!!");
  EXPECT_EQ(stats_.shaped.get(), 1u);
  EXPECT_EQ(stats_.responses_5xx.get(), 1u);
}

TEST_F(SessionShapeTest, WithoutParametersTheAnswerIsTheUsualOne) {
  std::string unshaped = table_.route(0, Variant::keep_alive_11).bytes;
  EXPECT_EQ(drive(get("/")), unshaped);
  EXPECT_EQ(drive(get("/?cachebust=1")), unshaped);
  EXPECT_EQ(stats_.shaped.get(), 0u);
}

// A target with a fragment is malformed (RFC 9112 section 3.2), shaping
// parameters or not: 400 and close, never a shaped answer.
TEST_F(SessionShapeTest, AFragmentIs400WhateverTheQuery) {
  std::string bad = table_.error(400, Variant::close_11).bytes;
  for (const char* target :
       {"/?cachebust=1#frag", "/?status=503#x", "/#status=503", "/?status=503&#"}) {
    session_.reset();
    EXPECT_EQ(drive(get(target)), bad) << target;
  }
  EXPECT_EQ(stats_.shaped.get(), 0u);
  EXPECT_EQ(stats_.shape_errors.get(), 0u);
}

TEST_F(SessionShapeTest, TheQueryAndTheHeaderAreReadHoweverTheBytesAreCut) {
  std::string in =
      get("/?status=404&size=5", "X-Other: 1\r\nx-hello-SHAPE: header=X-B:c\r\n") + get("/");
  std::string expected = drive(in);
  ASSERT_NE(expected.find("HTTP/1.1 404 Not Found"), std::string::npos) << expected;
  ASSERT_NE(expected.find("X-B: c\r\n"), std::string::npos) << expected;
  ASSERT_NE(expected.find("status=404 size=5"), std::string::npos) << expected;
  ASSERT_NE(expected.find("|01234HTTP/1.1 200 OK"), std::string::npos) << expected;
  test::for_each_split(in, [&](std::string_view, std::string_view, size_t split) {
    session_.reset();
    ASSERT_EQ(drive(in, {split}), expected) << "split at " << split;
  });
}

TEST_F(SessionShapeTest, TheHeaderOverridesTheQuery) {
  std::string out = drive(get("/?status=503", "X-Hello-Shape: status=502\r\n"));
  EXPECT_EQ(out.substr(0, 29), "HTTP/1.1 502 Bad Gateway\r\nDat");
}

TEST_F(SessionShapeTest, ABadParameterIs400WithOneLineAndTheConnectionGoesOn) {
  std::string out = drive(get("/?delay=abc") + get("/?status=99", "Connection: keep-alive\r\n") +
                          std::string(kRoot));
  EXPECT_EQ(stats_.shape_errors.get(), 2u);
  EXPECT_NE(out.find("HTTP/1.1 400 Bad Request\r\n"), std::string::npos);
  EXPECT_NE(out.find("Content-Length: 24\r\n\r\ndelay=abc: not a number\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\r\n\r\nstatus=99: not a status from 200 to 599\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 8), "Hello!!!");
  EXPECT_EQ(feds_.back().next, Fed::Next::read);
}

TEST_F(SessionShapeTest, TooMuchShapingTextIs400) {
  std::string out = drive(get("/?x=" + std::string(Session::kMaxShapeText, 'a')));
  EXPECT_NE(out.find("shaping parameters: over 4096 bytes\n"), std::string::npos) << out;
}

TEST_F(SessionShapeTest, ASizedBodyIsLeftToTheConnectionAndParsingStopsAfterIt) {
  std::string in = get("/?size=100000") + std::string(kRoot);
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  EXPECT_EQ(fed.next, Fed::Next::read);
  EXPECT_EQ(fed.consumed, in.size() - kRoot.size());
  ASSERT_TRUE(fed.streams());
  EXPECT_EQ(fed.body.length, 100000u);
  EXPECT_EQ(fed.body.period, kPatternBytes);
  EXPECT_NE(out.find("Content-Length: 100000\r\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\n\r\n") << "the head alone";
  std::string rest;
  fed = session_.feed(in.data() + fed.consumed, kRoot.size(), rest);
  EXPECT_FALSE(fed.streams());
  EXPECT_EQ(rest, table_.route(0, Variant::keep_alive_11).bytes);
}

TEST_F(SessionShapeTest, NoBodyFor204And304NorForHead) {
  std::string out = drive(get("/?status=204"));
  EXPECT_EQ(out.find("Content-Length"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 4), "\r\n\r\n");
  out = drive("HEAD /?size=10 HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_NE(out.find("Content-Length: 10\r\n\r\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\n\r\n");
  EXPECT_FALSE(feds_.back().streams());
}

TEST_F(SessionShapeTest, ADelayWaitsThenAnswersShaped) {
  std::string out = drive(get("/?delay=1500us&status=201") + std::string(kRoot));
  EXPECT_EQ(delays_, std::vector<uint64_t>{1500});
  EXPECT_EQ(out.substr(0, 21), "HTTP/1.1 201 Created\r");
  EXPECT_NE(out.find("X-Hello-Shape-Decision: delay=1500us status=201\r\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 8), "Hello!!!");
}

TEST_F(SessionShapeTest, CloseSendsTheCloseLayoutAndEnds) {
  std::string out = drive(get("/?close=true") + std::string(kRoot));
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(out.find("close=1"), std::string::npos);
  EXPECT_EQ(feds_.back().next, Fed::Next::close);
  EXPECT_EQ(out.find("HTTP/1.1", 1), std::string::npos) << "nothing after the closing answer";
}

TEST_F(SessionShapeTest, AResetAnswersNothingAndCloses) {
  std::string in = std::string(kRoot) + get("/?reset=100") + std::string(kRoot);
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  EXPECT_EQ(fed.next, Fed::Next::close);
  EXPECT_TRUE(fed.reset);
  EXPECT_EQ(fed.answered, 1u);
  EXPECT_EQ(out, table_.route(0, Variant::keep_alive_11).bytes) << "the answer before it only";
  EXPECT_EQ(stats_.resets.get(), 1u);
}

TEST_F(SessionShapeTest, ADripLeavesEvenTheRoutesBodyToTheConnection) {
  std::string in = get("/?drip=1s");
  std::string out;
  Fed fed = session_.feed(in.data(), in.size(), out);
  ASSERT_TRUE(fed.streams());
  EXPECT_EQ(fed.drip_us, 1000000u);
  EXPECT_EQ(bytes_of(fed.body), "Hello!!!");
  EXPECT_NE(out.find("Content-Length: 8\r\n"), std::string::npos);
}

TEST_F(SessionShapeTest, AStatusMixFollowsTheDice) {
  std::string in = get("/?status=503:20,404:5");
  int counts[600] = {};
  for (int i = 0; i < 2000; ++i) {
    std::string out = drive(in);
    int status = std::stoi(out.substr(9, 3));
    ++counts[status];
    std::string decision = "Decision: status=" + std::to_string(status) + "\r\n";
    ASSERT_NE(out.find(decision), std::string::npos) << out;
  }
  EXPECT_NEAR(counts[503], 400, 80);
  EXPECT_NEAR(counts[404], 100, 40);
  EXPECT_EQ(counts[503] + counts[404] + counts[200], 2000);
}

TEST_F(SessionShapeTest, AnHttp10RequestGetsTheHttp10Layout) {
  std::string out = drive("GET /?status=503 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(out.substr(0, 17), "HTTP/1.1 503 Serv") << "the test persona answers in HTTP/1.1";
  EXPECT_EQ(out.find("Connection:"), std::string::npos) << "its close_10 line is empty";
  EXPECT_EQ(feds_.back().next, Fed::Next::close);
}

TEST_F(SessionShapeTest, AShaped3xxIsCountedAs3xx) {
  drive(get("/?status=302"));
  EXPECT_EQ(stats_.responses_3xx.get(), 1u);
  EXPECT_EQ(stats_.responses_4xx.get(), 0u);
}

TEST_F(SessionShapeTest, HeadersThePersonaSendsAreRefused) {
  std::string out = drive(get("/?header=Content-Type:text/html"));
  EXPECT_NE(
      out.find("\r\n\r\nheader=Content-Type:text/html: the server sends this header itself\n"),
      std::string::npos)
      << out;
  EXPECT_NE(drive(get("/?header=date:x")).find("HTTP/1.1 400 "), std::string::npos);
}

// The rest of a delay mix is the route's own delay, as the rest of a status
// or size mix is the route's own status or body.
TEST(SessionShapeDelay, TheRestOfADelayMixIsTheRoutesOwnDelay) {
  std::vector<FileRoute> routes{test::text_route("/slow", "slow", 200000)};
  TableOptions options;
  options.shape = true;
  options.routes = &routes;
  ResponseTable table(test::kTestPersona, options);
  WorkerStats stats;
  Accounting sink(stats);
  Dice dice(1);
  Session session(table, sink, {}, &dice);
  std::string in = get("/slow?delay=1ms:0&status=201");
  std::string out;
  Fed fed = session.feed(in.data(), in.size(), out);
  ASSERT_EQ(fed.next, Fed::Next::later);
  EXPECT_EQ(fed.delay_us, 200000u);
  session.resume(out);
  EXPECT_NE(out.find("X-Hello-Shape-Decision: delay=200ms status=201\r\n"), std::string::npos)
      << out;
}

class SessionShapeOffTest : public SessionShapeTest {
 protected:
  SessionShapeOffTest() : SessionShapeTest(false) {}
};

TEST_F(SessionShapeOffTest, WithoutShapeAQueryAndTheHeaderChangeNothing) {
  std::string unshaped = table_.route(0, Variant::keep_alive_11).bytes;
  EXPECT_EQ(drive(get("/?status=503&size=10", "X-Hello-Shape: status=500\r\n")), unshaped);
  EXPECT_EQ(drive(get("/?delay=abc")), unshaped);
  EXPECT_FALSE(table_.shaping());
}

class SessionShapeDefaultTest : public SessionShapeTest {
 protected:
  SessionShapeDefaultTest() : SessionShapeTest(false, "status=418") {}
};

TEST_F(SessionShapeDefaultTest, TheDefaultShapesRequestsThatCarryNone) {
  EXPECT_EQ(drive(get("/")).substr(0, 13), "HTTP/1.1 418 ");
  EXPECT_EQ(drive(get("/?status=201")).substr(0, 13), "HTTP/1.1 201 ");
  EXPECT_EQ(drive(get("/?unrelated=1")).substr(0, 13), "HTTP/1.1 418 ");
  EXPECT_EQ(drive(get("/nope")).substr(0, 13), "HTTP/1.1 404 ") << "shaping is for routes";
}

}  // namespace
}  // namespace hello
