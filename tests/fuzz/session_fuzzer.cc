// libFuzzer target over the socket-free heart: arbitrary bytes in, with the
// limits on, fed in pieces of a size the input chooses. Built and run by
// scripts/fuzz with AddressSanitizer and UndefinedBehaviorSanitizer.
//
// Input: byte 0 picks the persona variant (bits 0-1; 3 is hello-floor's
// unparsed mode) and the piece size
// (bits 2-7, 0 meaning all at once); the rest is what a client sends.
#include <fcntl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "access_log.h"
#include "floor_session.h"
#include "http_bytes.h"
#include "session.h"
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
      tables[i] = std::make_unique<hello::ResponseTable>(
          p, hello::TableOptions{.json = (i & 1) != 0, .routes = &routes});
    }
    log = std::make_unique<hello::AccessLog>(log_writer, 0, stats.log_lines_dropped);
  }
  hello::LogWriter log_writer;
  const std::vector<hello::FileRoute> routes = file_routes();
  std::unique_ptr<hello::ResponseTable> tables[4];
  hello::WorkerStats stats;
  std::unique_ptr<hello::AccessLog> log;
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
    heart = std::make_unique<hello::FloorSession>(*fixture.tables[variant], fixture.stats);
  else
    heart = std::make_unique<hello::Session>(*fixture.tables[variant], fixture.stats,
                                             fixture.log.get(), kLimits);
  heart->reset("127.0.0.1");
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
    for (;;) {
      hello::Fed fed = heart->feed(p, m, out);
      check(fed.consumed <= m, "consumed more than it was given");
      if (fed.next != hello::Fed::Next::later) {
        check(fed.consumed == m, "input left unparsed without a waiting answer");
        open = fed.next == hello::Fed::Next::read;
        partial = fed.partial;
        break;
      }
      size_t before_resume = out.size();
      hello::Fed resumed = heart->resume(out);
      check(resumed.answered == 1 && out.size() > before_resume, "a waiting answer went missing");
      check(resumed.consumed == 0, "resume() parsed input");
      p += fed.consumed;
      m -= fed.consumed;
      if (resumed.next == hello::Fed::Next::close) {
        open = false;
        break;
      }
      partial = false;
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
  check(out.size() <= (answered + 1) * 1024, "output larger than its answers");
  if (variant == 3) {
    // The floor answers once per CRLF CRLF, however the input was cut.
    check(answered == hello::test::blank_lines(input),
          "the floor's count differs from a byte-at-a-time matcher");
  }
  fixture.log->flush();
  return 0;
}
