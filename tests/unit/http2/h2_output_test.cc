// What an HTTP/2 session sends in one turn (STYLE.md, "a fair turn"): at
// most about H2Session::kMaxOutput per feed, the rest from resume() when
// the session asks for it at once (Fed::wake_us 0); and go_away(), the
// GOAWAY the connection sends when it times out or refuses: NO_ERROR and
// the last stream the session took.
#include <string>
#include <vector>

#include "h2_raw_session.h"
#include "http_bytes.h"

namespace hello::test {
namespace {

using namespace h2raw;

constexpr size_t kBig = 600000;  // over two turns' worth
const std::vector<FileRoute> kBigRoutes = {text_route("/big", std::string(kBig, 'x'))};

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

}  // namespace
}  // namespace hello::test
