// An HTTP/1.1 request upgraded to HTTP/2 (Upgrade: h2c) handed to the
// session (H2Session::upgraded(), docs/http2.md): the 101 head, the
// session's SETTINGS and stream 1's answer; and HTTP2-Settings that decode
// but hold a value SETTINGS may not carry: 400 in HTTP/1.1, and close.
#include <string>
#include <vector>

#include "h2_raw_session.h"

namespace hello::test {
namespace {

using namespace h2raw;

constexpr std::string_view kSwitching =
    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";

// One SETTINGS entry, as HTTP2-Settings carries it once decoded.
std::string entry(uint16_t id, uint32_t value) {
  return std::string{static_cast<char>(id >> 8), static_cast<char>(id)} + be32(value);
}

using H2Upgrade = H2RawTest;

// Any valid SETTINGS payload: an unknown setting is ignored, a setting
// given twice takes its last value (RFC 9113 section 6.5.2, 6.5.3).
TEST_F(H2Upgrade, AnUpgradedGetIs101ThenSettingsThenStream1sAnswer) {
  for (const std::string& settings :
       {entry(0x3, 100), entry(0x3, 100) + entry(0x3, 50) + entry(0x99, 12345),
        entry(0x2, 0) + entry(0x4, 0x7fffffffu) + entry(0x5, 16384) + entry(0x5, (1u << 24) - 1)}) {
    session_.reset();
    heard_.clear();
    nghttp2_hd_inflate_del(inflater_);
    nghttp2_hd_inflate_new(&inflater_);
    Upgrade u;
    u.settings = settings;
    u.method = kGet;
    u.path = "/";
    std::string out;
    Fed fed = session().upgraded(u, out);
    ASSERT_EQ(out.substr(0, kSwitching.size()), kSwitching);
    std::vector<Frame> fs = frames(std::string_view(out).substr(kSwitching.size()));
    hear(fs);
    ASSERT_FALSE(fs.empty());
    EXPECT_EQ(fs[0].type, kSettings);
    EXPECT_FALSE(goaway_code(fs).has_value());
    EXPECT_EQ(field(1, ":status"), "200");
    EXPECT_EQ(heard_[1].body, "Hello!!!");
    EXPECT_EQ(fed.answered, 1u);
    EXPECT_EQ(fed.next, Fed::Next::read);
  }
  EXPECT_EQ(stats_.responses_2xx.get(), 3u);
}

// An upgraded HEAD is answered as HEAD is: the GET's fields, no DATA.
TEST_F(H2Upgrade, AnUpgradedHeadGetsTheFieldsAndNoData) {
  std::string settings = entry(0x3, 100);
  Upgrade u;
  u.settings = settings;
  u.method = kHead;
  u.path = "/";
  std::string out;
  Fed fed = session().upgraded(u, out);
  ASSERT_EQ(out.substr(0, kSwitching.size()), kSwitching);
  std::vector<Frame> fs = frames(std::string_view(out).substr(kSwitching.size()));
  hear(fs);
  EXPECT_EQ(field(1, ":status"), "200");
  EXPECT_EQ(field(1, "content-length"), "8");
  EXPECT_EQ(count(fs, kData), 0);
  EXPECT_EQ(count(fs, kHeaders, kEndStream), 1);
  EXPECT_EQ(fed.answered, 1u);
}

// RFC 9113 section 6.5.2: ENABLE_PUSH is 0 or 1, INITIAL_WINDOW_SIZE at
// most 2^31-1, MAX_FRAME_SIZE from 2^14 to 2^24-1; and no more entries
// than a SETTINGS frame may have (H2Defences::kMaxSettingsEntries). The
// request was HTTP/1.1 and nothing was switched yet: its answer is
// HTTP/1.1's 400 (docs/http2.md), not a 101 and a GOAWAY.
TEST_F(H2Upgrade, SettingsWithAValueSettingsMayNotHoldAre400AndClose) {
  const std::string bad_request = table_.error(400, Variant::close_11).bytes;
  uint64_t answered_4xx = 0;
  std::string too_many;
  for (size_t i = 0; i <= H2Defences::kMaxSettingsEntries; ++i) too_many += entry(0x3, 100);
  for (const std::string& settings : {entry(0x2, 2), entry(0x4, 0x80000000u), entry(0x5, 16383),
                                      entry(0x5, 1u << 24), entry(0x3, 100) + entry(0x2, 7)}) {
    session_.reset();
    Upgrade u;
    u.settings = settings;
    u.method = kGet;
    u.path = "/";
    std::string out;
    Fed fed = session().upgraded(u, out);
    EXPECT_EQ(out, bad_request);
    EXPECT_EQ(fed.next, Fed::Next::close);
    EXPECT_TRUE(fed.clean_end) << "the 400 is read before the close";
    EXPECT_EQ(fed.answered, 1u);
    EXPECT_EQ(stats_.responses_4xx.get(), ++answered_4xx);
    EXPECT_EQ(session().live(), 0u) << "no stream 1 was opened";
  }
  EXPECT_EQ(stats_.responses_2xx.get(), 0u);
}

}  // namespace
}  // namespace hello::test
