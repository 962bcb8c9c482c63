// libFuzzer target over the socket-free heart: arbitrary bytes in, with the
// limits on, fed in pieces of a size the input chooses. Built and run by
// scripts/fuzz with AddressSanitizer and UndefinedBehaviorSanitizer.
//
// Input: byte 0 picks the persona variant (bits 0-1: 0 unshaped, 1 with
// --shape, 2 with --shape and a default shape, 3 hello-floor's unparsed
// mode) and the piece size
// (bits 2-7, 0 meaning all at once); the rest is what a client sends.
#include <fcntl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http1/floor_session.h"
#include "http1/session.h"
#include "http_bytes.h"
#include "observe/access_log.h"
#include "test_persona.h"

namespace {

using hello::Persona;

// Routes as a route file would give them: a JSON echo (POST /e, so that
// arbitrary bodies reach simdjson), a JSON route with headers, and two
// routes whose answers wait (GET /d, and POST /de, a waiting echo).
std::vector<hello::FileRoute> file_routes() {
  std::vector<hello::FileRoute> r{hello::test::echo_route("/e"), hello::test::text_route("/j", "")};
  r[1].status = 201;
  r[1].kind = hello::FileRoute::Kind::json;
  r[1].content_type = "application/json";
  r[1].content = "[1]";
  r[1].headers = {{"X-A", "1"}};
  r.push_back(r[1]);
  r[2].path = "/d";
  r[2].delay_us = 1000;
  r.push_back(hello::test::echo_route("/de", 1));
  return r;
}

struct Fixture {
  Fixture() : log_writer(open("/dev/null", O_WRONLY | O_CLOEXEC), true, 1) {
    for (int i = 0; i < 4; ++i) {
      Persona p = hello::test::kTestPersona;
      p.always_close = i & 1;
      p.keep_alive_http10 = !(i & 2);
      p.head_allowed = !(i & 2);
      p.no_parsing = i == 3;  // hello-floor's matcher
      hello::TableOptions options{.json = (i & 1) != 0, .routes = &routes};
      // Shaping: queries and X-Hello-Shape read, and a default with every
      // parameter; small caps, so inputs reach them.
      options.shape = i == 1 || i == 2;
      if (i == 2)
        options.shape_default =
            "delay=1ms:30&status=204:10,503:10&size=70000:20,5:20&close=10&reset=5&header=X-D:1";
      options.shape_limits = {.max_delay_us = 2000000, .max_size = 100000};
      tables[i] = std::make_unique<hello::ResponseTable>(p, options);
    }
    log = std::make_unique<hello::AccessLog>(log_writer, 0, stats.log_lines_dropped);
    sink = std::make_unique<hello::Accounting>(stats, nullptr, log.get());
    sink->serving("127.0.0.1", 40000, 0, 0);
  }
  hello::LogWriter log_writer;
  const std::vector<hello::FileRoute> routes = file_routes();
  std::unique_ptr<hello::ResponseTable> tables[4];
  hello::WorkerStats stats;
  hello::Dice dice{1};
  std::unique_ptr<hello::AccessLog> log;
  std::unique_ptr<hello::Accounting> sink;
};

// Small limits, so inputs reach them.
constexpr hello::Limits kLimits{.max_header_bytes = 1024, .max_body_bytes = 4096};

void check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  if (size == 0) return 0;
  int variant = data[0] & 3;
  size_t piece = data[0] >> 2;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  size_t left = size - 1;
  const std::string_view input(bytes, left);
  if (piece == 0) piece = left > 0 ? left : 1;

  std::unique_ptr<hello::Heart> heart;
  if (variant == 3)
    heart = std::make_unique<hello::FloorSession>(*fixture.tables[variant], *fixture.sink);
  else
    heart = std::make_unique<hello::Session>(*fixture.tables[variant], *fixture.sink, kLimits,
                                             &fixture.dice);
  heart->reset();
  std::string out;
  bool open = true;
  bool partial = false;
  uint64_t before = fixture.stats.requests.get() + fixture.stats.parse_errors.get();
  while (left > 0) {
    size_t n = piece < left ? piece : left;
    size_t had = out.size();
    bool was_open = open;
    // A waiting answer is resumed at once (the connection would wait on its
    // timer), and the rest of the piece is fed after it, as the connection
    // feeds what it held.
    const char* p = bytes;
    size_t m = n;
    // A body left to the connection (a shaped size or drip) is "sent"
    // and the rest of the piece fed after it, as the connection does.
    for (;;) {
      hello::Fed fed = heart->feed(p, m, out);
      check(fed.consumed <= m, "consumed more than it was given");
      size_t parsed = fed.consumed;
      if (fed.next == hello::Fed::Next::later) {
        size_t before_resume = out.size();
        fed = heart->resume(out);
        check(fed.reset || (fed.answered == 1 && out.size() > before_resume),
              "a waiting answer went missing");
        check(fed.consumed == 0, "resume() parsed input");
      } else if (!fed.streams()) {
        check(fed.next != hello::Fed::Next::read || fed.consumed == m,
              "input left unparsed without a waiting answer or a body");
      }
      if (fed.streams()) {
        check(fed.body.base != nullptr && fed.body.period > 0 && fed.body.length <= 100000,
              "a body beyond --max-size");
        check(out.size() >= 4 && out.compare(out.size() - 4, 4, "\r\n\r\n") == 0,
              "a body without its head just before");
        out.append(fed.body.base, std::min<uint64_t>(fed.body.length, fed.body.period));
      }
      check(!fed.reset || fed.next == hello::Fed::Next::close, "a reset that does not close");
      if (fed.next == hello::Fed::Next::close) {
        open = false;
        break;
      }
      partial = fed.partial;
      p += parsed;
      m -= parsed;
      if (m == 0) break;
    }
    if (!was_open) check(out.size() == had, "answered after closing");
    check(out.size() == had || memcmp(out.data() + had, "HTTP/1.", 7) == 0,
          "output does not start with a status line");
    bytes += n;
    left -= n;
  }
  if (open && partial && variant != 3) {
    size_t had = out.size();
    heart->time_out(out);
    check(out.compare(had, 13, "HTTP/1.1 408 ") == 0 || out.compare(had, 13, "HTTP/1.0 408 ") == 0,
          "a timed-out request did not get 408");
    std::string more;
    check(heart->feed("GET / HTTP/1.1\r\n\r\n", 18, more).next == hello::Fed::Next::close &&
              more.empty(),
          "still open after 408");
  }
  // Every response is at least a status line and a blank line, so the
  // output can never outgrow the answers the input could have asked for.
  uint64_t answered = fixture.stats.requests.get() + fixture.stats.parse_errors.get() - before;
  // A shaped one also carries headers from its shaping text and a body of
  // up to a period of the pattern here (see above).
  size_t most =
      variant == 1 || variant == 2 ? 1024 + 2 * hello::Session::kMaxShapeText + 65536 : 1024;
  check(out.size() <= (answered + 1) * most, "output larger than its answers");
  if (variant == 3) {
    // The floor answers once per CRLF CRLF, however the input was cut.
    check(answered == hello::test::blank_lines(input),
          "the floor's count differs from a byte-at-a-time matcher");
  }
  fixture.log->flush();
  return 0;
}
