// The HTTP/1 session against hostile-input probes (docs/hardening.md), by RFC section.
#include "http1/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "http_bytes.h"
#include "session_fixture.h"
#include "test_persona.h"

namespace hello {
namespace {

// Answers a hostile-input probe found wrong (docs/hardening.md), each
// checked whole, split in two at every byte and fed one byte at a time.
class ConformanceTest : public SessionTest {
 protected:
  explicit ConformanceTest(const Persona& p = test::kTestPersona) : SessionTest(p) {}
  // What `session` answers to `request` fed in the pieces `cuts` makes of it.
  static std::string answer(Session& session, std::string_view request, std::vector<size_t> cuts) {
    session.reset();
    std::string out;
    size_t from = 0;
    cuts.push_back(request.size());
    for (size_t cut : cuts) {
      session.feed(request.data() + from, cut - from, out);
      from = cut;
    }
    return out;
  }
  // The answer to `request`, after checking that every split gives the same.
  static std::string answer_however_split(Session& session, std::string_view request) {
    std::string whole = answer(session, request, {});
    for (size_t split = 0; split <= request.size(); ++split) {
      std::string out = answer(session, request, {split});
      if (out != whole) {
        ADD_FAILURE() << testing::PrintToString(std::string(request)) << " split at " << split
                      << " answers " << out << "\ninstead of " << whole;
        return whole;
      }
    }
    std::vector<size_t> bytes;
    for (size_t i = 1; i < request.size(); ++i) bytes.push_back(i);
    std::string out = answer(session, request, bytes);
    if (out != whole)
      ADD_FAILURE() << testing::PrintToString(std::string(request))
                    << " one byte at a time answers " << out << "\ninstead of " << whole;
    return whole;
  }
  std::string answer_however_split(std::string_view request) {
    return answer_however_split(session_, request);
  }
  static std::string get(std::string_view target, std::string_view fields) {
    return "GET " + std::string(target) + " HTTP/1.1\r\n" + std::string(fields) + "\r\n";
  }
  static std::string with_host(std::string_view host) {
    return get("/", "Host: " + std::string(host) + "\r\n");
  }
  static std::string post_chunked(std::string_view transfer_encoding) {
    return "POST / HTTP/1.1\r\nHost: a\r\n" + std::string(transfer_encoding) +
           "\r\n3\r\nabc\r\n0\r\n\r\n" + std::string(kGet11);
  }
};

// A chunk whose declared size would take the body over the limit is 413 as
// soon as its size line ends, as a Content-Length over it is: the server does
// not wait for data it would refuse.
TEST_F(ConformanceTest, ChunkOverTheBodyLimitIs413AtItsSizeLine) {
  Limits limits;
  limits.max_body_bytes = 100;
  Session session(table_, sink_, limits);
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string too_large = error(413, Variant::close_11);
  EXPECT_EQ(answer_however_split(session, head + "FFFFFFFFFFFFFFFF\r\n"), too_large);
  EXPECT_EQ(answer_however_split(session, head + "65\r\n"), too_large);  // 101 bytes
  EXPECT_EQ(answer_however_split(session, head + "65;ext=1\r\n"), too_large);
  // 50 and 51 bytes: the second chunk's size line is enough.
  EXPECT_EQ(answer_however_split(session, head + "32\r\n" + std::string(50, 'x') + "\r\n33\r\n"),
            too_large);
  // Exactly at the limit is fine.
  EXPECT_EQ(answer_however_split(session, head + "32\r\n" + std::string(50, 'x') + "\r\n32\r\n" +
                                              std::string(50, 'x') + "\r\n0\r\n\r\n" +
                                              std::string(kGet11)),
            error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11));
}

// RFC 9110 section 5.1: a field name is a token, at least one character.
TEST_F(ConformanceTest, EmptyFieldNameIs400) {
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\n: 1\r\n")), error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split(get("/", ":\r\nHost: a\r\n")), error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "0\r\n: trailer\r\n\r\n"),
            error(400, Variant::close_11));
}

// RFC 9110 section 5.5: a field value may be empty. (llhttp reports an
// empty value at the start of the next line, where a fold would start.)
TEST_F(ConformanceTest, EmptyFieldValuesAreAccepted) {
  const std::string ok = route("/", Variant::keep_alive_11);
  for (const char* fields : {"Host: a\r\nX-A:\r\n", "X-A:\r\nHost: a\r\n", "Host: a\r\nX-B: \r\n",
                             "Host: a\r\nX-A:\r\nX-B: \t \r\nX-C: c\r\n"}) {
    EXPECT_EQ(answer_however_split(get("/", fields) + std::string(kGet11)), ok + ok) << fields;
  }
  // A fold still is not, even after an empty value.
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX-A:\r\nX: a\r\n b\r\n")),
            error(400, Variant::close_11));
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX:\r\n b\r\n")),
            error(400, Variant::close_11));
  // Except one: a continuation of blanks alone after an empty value gives
  // llhttp's empty span at the next line, as an empty value does, and tells
  // the session nothing in between. It adds nothing to the value; RFC 9112
  // section 5.2 lets a server read a fold as blanks. Whole or split alike.
  EXPECT_EQ(answer_however_split(get("/", "Host: a\r\nX:\r\n \r\nY: y\r\n")), ok);
}

// RFC 9112 section 6.1: chunked, alone and last, is the only transfer coding
// a server must know; any other is 501 and a close (as nginx).
TEST_F(ConformanceTest, TransferEncodingMustBeChunkedAlone) {
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  for (const char* te :
       {"Transfer-Encoding: chunked\r\n", "transfer-encoding:CHUNKED\r\n",
        "Transfer-Encoding:  Chunked  \r\n", "X-A:\r\nTransfer-Encoding: chunked\r\n"}) {
    EXPECT_EQ(answer_however_split(post_chunked(te)), ok) << te;
  }
  for (const char* te :
       {"Transfer-Encoding: identity, chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: gzip\r\n", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked, chunked\r\n", "Transfer-Encoding: , chunked\r\n",
        "Transfer-Encoding: chunked,\r\n", "Transfer-Encoding:\r\n",
        "Transfer-Encoding: chunkedx\r\n", "Transfer-Encoding: chunked x\r\n",
        "Transfer-Encoding: xchunked\r\n", "Transfer-Encoding: chunk\r\n"}) {
    EXPECT_EQ(answer_however_split(post_chunked(te)), error(501, Variant::close_11)) << te;
  }
  // Names that only look like it are other fields.
  EXPECT_EQ(answer_however_split(get("/",
                                     "Host: a\r\nTransfer-Encodings: gzip\r\n"
                                     "Transfer_Encoding: gzip\r\n")),
            route("/", Variant::keep_alive_11));
}

// RFC 9112 section 3.2: a Host that is not uri-host [":" port] is 400.
TEST_F(ConformanceTest, HostMustBeAHostAndAnOptionalPort) {
  const std::string ok = route("/", Variant::keep_alive_11);
  for (const char* host : {"a",
                           "a:80",
                           "a:",
                           "127.0.0.1:8080",
                           "localhost",
                           "A.Example:65535",
                           "a:0123456",
                           "999.1.1.1",
                           "a..b",
                           "xn--bcher-kva.example",
                           "a-b.c_d~e",
                           "!$&'()*+,;=",
                           "a%41b%7e",
                           "[::1]",
                           "[::1]:8080",
                           "[2001:DB8::8:800:200c:417a]",
                           "[::ffff:1.2.3.4]",
                           "[v1.fe80::a+en1]",
                           "a ",
                           "a:80 \t"}) {
    EXPECT_EQ(answer_however_split(with_host(host)), ok) << host;
  }
  for (const char* host :
       {"a b",    "a/b",  "",          ":80",          "a:x",      "a:80:80", "a@b",
        "u@a:80", "a?b",  "a#b",       "a\tb",         "a\"b",     "a<b",     "a\\b",
        "a^b",    "a{b",  "a|b",       "a`b",          "\xc3\xa9", "%4",      "%zz",
        "a%",     "[zz]", "[::1",      "::1",          "[::1]x",   "[::1]:x", "a[",
        "a]b",    "[a]",  "[1.2.3.4]", "[::1%25eth0]", "[v1]",     "[v.x]",   "[]"}) {
    EXPECT_EQ(answer_however_split(with_host(host)), error(400, Variant::close_11))
        << testing::PrintToString(std::string(host));
  }
  // HTTP/1.0 needs no Host, but one it sends is checked as well.
  EXPECT_EQ(answer_however_split("GET / HTTP/1.0\r\nHost: a b\r\n\r\n"),
            error(400, Variant::close_10));
}

// RFC 9112 section 3.2.2: an absolute-form target is routed by its path, and
// the Host header (which must still be there, and valid) is ignored.
TEST_F(ConformanceTest, AbsoluteFormIsRoutedByItsPath) {
  const std::string root = route("/", Variant::keep_alive_11);
  const std::string json = route("/json", Variant::keep_alive_11);
  const std::string host = "Host: a\r\n";
  EXPECT_EQ(answer_however_split(get("http://x/", host)), root);
  EXPECT_EQ(answer_however_split(get("HTTP://x", host)), root);
  EXPECT_EQ(answer_however_split(get("hTtPs://x:8080?q=1", host)), root);
  EXPECT_EQ(answer_however_split(get("https://x/json?q=/", "Host: b\r\n")), json);
  EXPECT_EQ(answer_however_split(get("http://[::1]:80/json", host)), json);
  EXPECT_EQ(answer_however_split(get("http://x/json", "Host:\r\n")), json)
      << "the Host of an absolute-form request may be empty";
  EXPECT_EQ(answer_however_split(get("http://" + std::string(300, 'x') + "/json", host)), json)
      << "a long authority is not part of the path";
  EXPECT_EQ(answer_however_split(get("http://x/nope", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("ftp://x/", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("httpx://x/", host)), error(404, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(get("*", host)), error(404, Variant::keep_alive_11));
  // The authority of an http URI is a host (RFC 9110 section 4.2.1), with no
  // userinfo (section 4.2.4).
  for (const char* target : {"http://", "http:///", "http://:80/", "http://u@x/", "http://x:8a/",
                             "https://[::1/", "http://x:80:80"}) {
    EXPECT_EQ(answer_however_split(get(target, host)), error(400, Variant::close_11)) << target;
  }
  EXPECT_EQ(answer_however_split(get("http://x/", "")), error(400, Variant::close_11))
      << "HTTP/1.1 still needs a Host";
  EXPECT_EQ(answer_however_split(get("http://x/", "Host: a b\r\n")), error(400, Variant::close_11))
      << "and a valid one";
}

// RFC 9112 section 3.2: no form of request target has a fragment (origin-form
// is absolute-path ["?" query], and an absolute-URI has none either), so a
// '#' anywhere in it is a malformed request line: 400 and close.
TEST_F(ConformanceTest, AFragmentInTheTargetIs400) {
  const std::string bad = error(400, Variant::close_11);
  for (const std::string& target : std::vector<std::string>{
           "/#x", "/#", "/json#x", "/json?q#x", "/?#", "/json?a=1&b=2#f", "http://x/#y",
           "http://x#y", "http://x?q#y", "HTTPS://x:80/json#", "*#", "ftp://x/#y", "http:#/",
           "/" + std::string(200, 'a') + "#x", "/" + std::string(200, 'a') + "?q#x"}) {
    EXPECT_EQ(answer_however_split(get(target, "Host: a\r\n")), bad) << target;
  }
  // The bytes around a '#' that is not in the target are fine.
  EXPECT_EQ(answer_however_split(get("/json?q=%23", "Host: a\r\nX-A: #\r\n")),
            route("/json", Variant::keep_alive_11));
}

// RFC 9110 section 2.5: a recipient that implements a major version should
// process a higher minor one as the highest it implements, as nginx does:
// HTTP/1.2 to 1.9 are answered as HTTP/1.1, with its keep-alive and Host
// rules. (llhttp 8.1 refuses them in strict mode unless told not to.)
TEST_F(ConformanceTest, HigherMinorVersionsAreAnsweredAsHttp11) {
  for (int minor = 2; minor <= 9; ++minor) {
    std::string version = "HTTP/1." + std::to_string(minor);
    EXPECT_EQ(
        answer_however_split("GET / " + version + "\r\nHost: a\r\n\r\n" + std::string(kGet11)),
        route("/", Variant::keep_alive_11) + route("/", Variant::keep_alive_11))
        << version;
    EXPECT_EQ(
        answer_however_split("GET /json " + version + "\r\nHost: a\r\nConnection: close\r\n\r\n" +
                             std::string(kGet11)),
        route("/json", Variant::close_11))
        << version;
    EXPECT_EQ(answer_however_split("GET / " + version + "\r\n\r\n"), error(400, Variant::close_11))
        << version << " needs a Host, as HTTP/1.1 does";
  }
}

// Other versions keep their answers: another major version is 505, a
// malformed one 400 or 505 as before.
TEST_F(ConformanceTest, OtherVersionsKeepTheirAnswers) {
  for (const char* version : {"HTTP/2.0", "HTTP/0.9", "HTTP/3.1", "HTTP/0.0", "HTTP/9.9",
                              "HTTP/1.2x", "HTTP/1.20", "HTTP/a.1"}) {
    EXPECT_EQ(answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n"),
              error(505, Variant::close_11))
        << version;
  }
  for (const char* version : {"HTTP/1.x", "HTTP/1.10", "HTTP/1.1x", "HTTP/1.", "HTTP/1", "HTTP/11",
                              "HTTP/1.1 x", "http/1.1", "HTTP/1.1\n"}) {
    EXPECT_EQ(answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n"),
              error(400, Variant::close_11))
        << version;
  }
}

// llhttp 8.1 has no limit on chunk extensions (RFC 9112 section 7.1.1), which
// the reader discards: each counts the bytes of its name and value and 2
// for its ';' and '=' against --max-header-bytes, with the head and the
// trailers. Past it: 413 at once, without waiting for the size line to end.
TEST_F(ConformanceTest, ChunkExtensionsCountAgainstTheHeadLimit) {
  Limits limits;
  limits.max_header_bytes = 200;
  Session session(table_, sink_, limits);
  // The head counts 38 bytes: "/" (1), "Host" "a" and "Transfer-Encoding"
  // "chunked" (29) and the 4 bytes around each of the two lines.
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string too_large = error(413, Variant::close_11);
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  // "a" (1), ';' and '=' (2) and the value (159): 200 bytes in all.
  const std::string at_limit = "1;a=" + std::string(159, 'b');
  EXPECT_EQ(
      answer_however_split(session, head + at_limit + "\r\nx\r\n0\r\n\r\n" + std::string(kGet11)),
      ok);
  EXPECT_EQ(answer_however_split(session, head + at_limit + "b"), too_large);
  // Many short names, on one chunk or on several, and on the last chunk.
  EXPECT_EQ(
      answer_however_split(session, head + "1" + test::repeat(";a", 54) + "\r\nx\r\n0\r\n\r\n"),
      error(405, Variant::keep_alive_11));
  EXPECT_EQ(answer_however_split(session, head + "1" + test::repeat(";a", 55)), too_large);
  EXPECT_EQ(answer_however_split(session, head + test::repeat("1;aaaaaaaaaaaa\r\nx\r\n", 12)),
            too_large);
  EXPECT_EQ(answer_however_split(session, head + "0;a=" + std::string(160, 'b')), too_large);
  // A quoted value counts with its quotes.
  EXPECT_EQ(answer_however_split(session, head + "1;a=\"" + std::string(158, ' ') + "\""),
            too_large);
}

// The connection that sent "1;a=" and gigabytes of extension bytes: with
// the default limits it is answered within the first 16 KiB.
TEST_F(ConformanceTest, AnEndlessChunkExtensionIs413WithinTheHeadLimit) {
  std::string out;
  std::string start = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;a=";
  Fed fed = session_.feed(start.data(), start.size(), out);
  const std::string piece(4096, 'b');
  int pieces = 0;
  while (fed.next != Fed::Next::close && pieces < 1000) {
    fed = session_.feed(piece.data(), piece.size(), out);
    ++pieces;
  }
  EXPECT_EQ(out, error(413, Variant::close_11));
  EXPECT_EQ(pieces, 4) << "16384 bytes of the head and the extension";
}

// llhttp 8.1.0, as Debian 12 ships it, refuses some valid chunk extensions
// (RFC 9112 section 7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name
// [ BWS "=" BWS chunk-ext-val ] )): a second extension after a value that is
// a token, and any whitespace. The client gets 400 and a close
// (docs/hardening.md). If this test fails, llhttp has learned them: update
// docs/hardening.md.
TEST_F(ConformanceTest, ChunkExtensionsLlhttp81TakesAndRefuses) {
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string ok = error(405, Variant::keep_alive_11) + route("/", Variant::keep_alive_11);
  for (const char* ext : {";a", ";a=b", ";a;b", ";a;c=d", ";a=\"b c\"", ";a=\"b\";c=d", ";a="}) {
    EXPECT_EQ(answer_however_split(head + "1" + ext + "\r\nx\r\n0" + ext + "\r\n\r\n" +
                                   std::string(kGet11)),
              ok)
        << ext;
  }
  for (const char* ext : {";a=b;c=d", ";a=b;c", "; a=b", ";a =b", ";a= b", " ;a=b", ";a=b\t"}) {
    EXPECT_EQ(answer_however_split(head + "1" + ext + "\r\nx\r\n0\r\n\r\n"),
              error(400, Variant::close_11))
        << ext;
  }
}

class EchoVersionSessionTest : public ConformanceTest {
 protected:
  static Persona echoing() {
    Persona p = test::kTestPersona;
    p.echo_version = true;
    return p;
  }
  EchoVersionSessionTest() : ConformanceTest(persona_) {}
  static inline const Persona persona_ = echoing();
};

// A persona that answers in the request's version (gunicorn, aiohttp) says
// HTTP/1.1 to HTTP/1.2 to 1.9, the version it answers as.
TEST_F(EchoVersionSessionTest, AHigherMinorVersionIsAnsweredInHttp11) {
  EXPECT_EQ(answer_however_split("GET / HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
  for (const char* version : {"HTTP/1.2", "HTTP/1.5", "HTTP/1.9"}) {
    std::string out = answer_however_split("GET / " + std::string(version) + "\r\nHost: a\r\n\r\n");
    EXPECT_EQ(out, route("/", Variant::keep_alive_11)) << version;
    EXPECT_EQ(out.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << out;
  }
}

}  // namespace
}  // namespace hello
