// libFuzzer target over the HTTP/2 layer (http2/h2_session.h on
// http2/h2_connection.h): the client's preface, then arbitrary bytes as
// frames, fed in pieces of a size the input chooses, with the limits of
// the input's choosing; time passes between pieces so that delays, drips
// and timeouts run too. Built and run by scripts/fuzz --target frame with
// AddressSanitizer and UndefinedBehaviorSanitizer.
//
// Input: byte 0's bits 0-1 pick the limits (0 the defaults, 1 two streams
// and a header list of 200 bytes, 2 a body of 20 bytes, 3 Tomcat's ways),
// bit 2 leaves the preface to the input; bits 3-7 the piece size (0: all
// at once). The rest is what the client sends after its preface.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http2/h2_session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace {

using namespace hello;

uint64_t now_ns = 1'000'000'000;
uint64_t fuzz_clock() {
  return now_ns;
}

const std::vector<FileRoute> kRoutes = {test::echo_route("/e"),
                                        test::text_route("/d", "later", 5000)};

struct World {
  ResponseTable table{test::kTestPersona, options()};
  H2Answers answers{table};
  Dice dice{7};
  WorkerStats stats;
  Accounting sink{stats};

  static TableOptions options() {
    TableOptions o;
    o.routes = &kRoutes;
    o.shape = true;
    return o;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World;
  if (size == 0) return 0;
  uint8_t control = data[0];
  H2Setup setup{&world->answers};
  setup.dice = &world->dice;
  setup.clock = fuzz_clock;
  switch (control & 3) {
    case 1:
      setup.max_concurrent_streams = 2;
      setup.max_header_list_bytes = 200;
      break;
    case 2:
      setup.max_body_bytes = 20;
      break;
    case 3:
      setup.tomcat = true;
      break;
    default:
      break;
  }
  std::string in;
  if ((control & 4) == 0) in = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  in.append(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t piece = control >> 3;
  if (piece == 0) piece = in.size();
  H2Session session(world->table, setup, world->sink);
  std::string out;
  for (size_t at = 0; at < in.size(); at += piece) {
    out.clear();
    size_t n = std::min(piece, in.size() - at);
    Fed fed = session.feed(in.data() + at, n, out);
    if (fed.next == Fed::Next::close) return 0;
    now_ns += 1'000'000;  // a millisecond between reads
    out.clear();
    if (session.resume(out).next == Fed::Next::close) return 0;
  }
  return 0;
}
