// What an HTTP/2 session sends in one turn (STYLE.md, "a fair turn"): at
// most about H2Session::kMaxOutput per feed, the rest from resume() when
// the session asks for it at once (Fed::wake_us 0); and go_away(), the
// GOAWAY the connection sends when it times out or refuses: NO_ERROR and
// the last stream the session took; and the HPACK decoder failing for want
// of memory.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "h2_raw_session.h"
#include "http_bytes.h"

namespace hello::test {
namespace {

using namespace h2raw;

constexpr size_t kBig = 600000;  // over two turns' worth
const std::vector<FileRoute> kBigRoutes = {text_route("/big", std::string(kBig, 'x')),
                                           text_route("/slow", "slow", 200000)};

// nghttp2's allocator, failing every allocation once `budget` more have
// been made; a negative budget: none fails.
int64_t budget = -1;
bool spend() {
  if (budget == 0) return false;
  if (budget > 0) --budget;
  return true;
}
nghttp2_mem kFailing = {
    nullptr,
    [](size_t n, void*) { return spend() ? malloc(n) : nullptr; },
    [](void* p, void*) { free(p); },
    [](size_t count, size_t n, void*) { return spend() ? calloc(count, n) : nullptr; },
    [](void* p, size_t n, void*) { return spend() ? realloc(p, n) : nullptr; },
};

class H2Output : public H2RawTest {
 protected:
  H2Output() : H2RawTest(options()) {}
  static TableOptions options() {
    TableOptions o;
    o.routes = &kBigRoutes;
    return o;
  }
  // The preface with windows that hold nothing back: the stream's initial
  // window and the connection's at 2^31-1.
  std::vector<Frame> start_open() {
    return send(std::string(kPreface) + settings({{0x4, 0x7fffffff}}) + settings_ack() +
                window_update(0, 0x7fffffff - 65535));
  }
};

TEST_F(H2Output, AFeedSendsAboutKMaxOutputAndResumeTheRest) {
  start_open();
  std::string out;
  std::string in = get(1, "/big");
  Fed fed = session().feed(in.data(), in.size(), out);
  // The drain stops at the first frame that takes it to kMaxOutput.
  EXPECT_GE(out.size(), H2Session::kMaxOutput);
  EXPECT_LT(out.size(), H2Session::kMaxOutput + 16384 + 9);
  EXPECT_EQ(fed.wake_us, 0u) << "more to send at once";
  EXPECT_EQ(fed.next, Fed::Next::read);
  std::vector<Frame> fs = frames(out);
  hear(fs);
  EXPECT_EQ(count(fs, kData, kEndStream), 0);
  int turns = 1;
  for (; turns < 10 && fed.wake_us == 0; ++turns) {
    out.clear();
    fed = session().resume(out);
    EXPECT_LT(out.size(), H2Session::kMaxOutput + 16384 + 9) << turns;
    fs = frames(out);
    hear(fs);
  }
  EXPECT_EQ(turns, 3) << "600,000 bytes: two full turns and a last";
  EXPECT_EQ(count(fs, kData, kEndStream), 1);
  EXPECT_EQ(heard_[1].body.size(), kBig);
  EXPECT_EQ(fed.wake_us, Fed::kNever);
  EXPECT_EQ(session().live(), 0u);
}

TEST_F(H2Output, GoAwayNamesTheLastStreamTakenWithNoError) {
  start();
  send(get(1) + get(3));
  std::string out;
  session().go_away(out);
  std::vector<Frame> fs = frames(out);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].type, kGoaway);
  EXPECT_EQ(fs[0].stream, 0u);
  ASSERT_GE(fs[0].payload.size(), 8u);
  EXPECT_EQ(read32(fs[0].payload), 3u) << "the last stream";
  EXPECT_EQ(read32(std::string_view(fs[0].payload).substr(4)), kNoError);
  EXPECT_EQ(stats_.h2_goaway_sent.get(), 1u);
  // A stream the client opens after it is not answered.
  fs = send(get(5));
  EXPECT_FALSE(answered(fs, 5));
  EXPECT_EQ(stats_.requests.get(), 2u);
}

// nghttp2's HPACK inflater is the one part of the session that allocates
// (the dynamic table's entries, a literal's bytes); when an allocation
// fails while it decodes a request, the connection ends with GOAWAY
// INTERNAL_ERROR rather than go on with a table it no longer shares with
// the client. Each allocation from the request's on fails in turn; every
// outcome is one of two: the stream answered, or the session closed with
// that GOAWAY and no answer.
TEST_F(H2Output, AnAllocationFailingWhileItDecodesEndsTheSession) {
  int closed = 0;
  int answered_in_full = 0;
  for (int64_t k = 0; k < 30; ++k) {
    session_.reset();
    heard_.clear();
    nghttp2_hd_inflate_del(inflater_);
    nghttp2_hd_inflate_new(&inflater_);
    limits_.memory = &kFailing;
    budget = -1;
    start();
    // Fields added to the client's table and so to the server's.
    std::string block = request_block("GET", "/slow") + "\x40" + hpack_int(0, 7, 5) + "x-one" +
                        hpack_int(0, 7, 300) + std::string(300, 'a') + "\x40" + hpack_int(0, 7, 5) +
                        "x-two" + hpack_int(0, 7, 3) + "bcd";
    budget = k;
    auto fs = send(headers(1, block));
    budget = -1;
    if (!open_) {
      ++closed;
      EXPECT_EQ(goaway_code(fs), kInternalError) << k;
      EXPECT_FALSE(answered(fs, 1)) << k;
    } else {
      ++answered_in_full;
      EXPECT_FALSE(goaway_code(fs).has_value()) << k;
      EXPECT_EQ(session().live(), 1u) << k << ": /slow is answered after 200 ms";
    }
  }
  EXPECT_GT(closed, 0) << "no allocation while decoding failed";
  EXPECT_GT(answered_in_full, 0);
  EXPECT_EQ(closed + answered_in_full, 30);
}

}  // namespace
}  // namespace hello::test
