// Tomcat's ways over HTTP/2 (H2Setup::tomcat, the spring persona's; what
// tests/fixtures/personas/spring/h2 captured from Tomcat 10.1): a SETTINGS
// of one entry; one PING, right after the ACK of the client's first
// SETTINGS; a body's DATA without END_STREAM, then an empty DATA that ends
// the stream; Tomcat's 101 head, and an upgraded request answered only
// once the client's preface came. Over raw frames, socket-free; the other
// sessions do none of it.
#include <string>
#include <utility>
#include <vector>

#include "h2_raw_session.h"

namespace hello::test {
namespace {

using namespace h2raw;

const std::string kTomcatPing = std::string(7, '\0') + '\x01';

// The index of the first frame of `type` (with all of `flags`) in `fs`, or -1.
int index_of(const std::vector<Frame>& fs, uint8_t type, uint8_t flags = 0) {
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].type == type && (fs[i].flags & flags) == flags) return static_cast<int>(i);
  return -1;
}

// The DATA frames on `stream`: their payloads and flags.
std::vector<std::pair<std::string, uint8_t>> data_of(const std::vector<Frame>& fs,
                                                     uint32_t stream) {
  std::vector<std::pair<std::string, uint8_t>> out;
  for (const Frame& f : fs)
    if (f.type == kData && f.stream == stream) out.emplace_back(f.payload, f.flags);
  return out;
}

class H2Tomcat : public H2RawTest {
 protected:
  H2Tomcat() { limits_.tomcat = true; }
};

TEST_F(H2Tomcat, ItsSettingsHaveOneEntryAndItPingsOnceAfterItsFirstAck) {
  std::vector<Frame> fs = start();
  int at_settings = index_of(fs, kSettings);
  int at_ack = index_of(fs, kSettings, kAck);
  int at_ping = index_of(fs, kPing);
  ASSERT_GE(at_settings, 0);
  ASSERT_GE(at_ack, 0);
  ASSERT_GE(at_ping, 0);
  EXPECT_EQ(fs[static_cast<size_t>(at_settings)].payload,
            std::string("\x00\x03\x00\x00\x00\x64", 6))
      << "MAX_CONCURRENT_STREAMS 100 alone";
  EXPECT_LT(at_ack, at_ping) << "the PING follows the ACK of the client's SETTINGS";
  EXPECT_EQ(fs[static_cast<size_t>(at_ping)].flags, 0);
  EXPECT_EQ(fs[static_cast<size_t>(at_ping)].payload, kTomcatPing);
  EXPECT_EQ(count(fs, kPing), 1);
  // The client's PING ACK, more SETTINGS and a request: no PING again.
  fs = send(ping(kAck) + settings() + get(1));
  EXPECT_EQ(count(fs, kSettings, kAck), 1);
  EXPECT_EQ(count(fs, kPing), 0);
  EXPECT_EQ(field(1, ":status"), "200");
  EXPECT_TRUE(open_);
}

TEST_F(H2Tomcat, ABodyEndsWithAnEmptyDataFrame) {
  start();
  std::vector<Frame> fs = send(get(1));
  EXPECT_EQ(field(1, ":status"), "200");
  using Data = std::vector<std::pair<std::string, uint8_t>>;
  EXPECT_EQ(data_of(fs, 1), (Data{{"Hello!!!", 0}, {"", kEndStream}}));
  EXPECT_EQ(stats_.requests.get(), 1u);
}

// Tomcat's 101 has no reason phrase and carries a Date; stream 1 is
// answered once the client's preface and SETTINGS came and were acked, and
// an upgraded HEAD gets the GET's answer, body and all.
TEST_F(H2Tomcat, AnUpgradedRequestIsAnsweredOnlyAfterThePreface) {
  std::string payload = std::string("\x00\x03\x00\x00\x00\x64", 6);
  Upgrade u;
  u.settings = payload;
  u.method = kHead;
  u.path = "/";
  std::string out;
  Fed fed = session().upgraded(u, out);
  const PreparedResponse& any = table_.route(0, Variant::keep_alive_11);
  ASSERT_GE(any.date_offset, 0);
  std::string head = "HTTP/1.1 101 \r\nConnection: Upgrade\r\nUpgrade: h2c\r\nDate: " +
                     any.bytes.substr(static_cast<size_t>(any.date_offset), 29) + "\r\n\r\n";
  ASSERT_EQ(out.substr(0, head.size()), head);
  std::vector<Frame> fs = frames(std::string_view(out).substr(head.size()));
  EXPECT_EQ(count(fs, kSettings), 1);
  EXPECT_FALSE(answered(fs, 1)) << "not before the client's preface";
  EXPECT_EQ(fed.answered, 0u);
  EXPECT_EQ(fed.next, Fed::Next::read);
  fs = start();
  int ack = index_of(fs, kSettings, kAck);
  int answer = index_of(fs, kHeaders);
  ASSERT_GE(ack, 0);
  ASSERT_GE(answer, 0);
  EXPECT_LT(ack, answer);
  EXPECT_EQ(fs[static_cast<size_t>(answer)].stream, 1u);
  EXPECT_EQ(field(1, ":status"), "200");
  EXPECT_EQ(heard_[1].body, "Hello!!!") << "a HEAD upgraded is answered as a GET";
  EXPECT_EQ(stats_.requests.get(), 1u);
}

// The same exchanges without Tomcat's ways: no PING, one DATA that ends
// the stream.
using H2NotTomcat = H2RawTest;

TEST_F(H2NotTomcat, OtherSessionsNeverPingAndEndABodyWithItsData) {
  std::vector<Frame> fs = start();
  EXPECT_EQ(count(fs, kPing), 0);
  fs = send(settings() + get(1));
  EXPECT_EQ(count(fs, kPing), 0);
  using Data = std::vector<std::pair<std::string, uint8_t>>;
  EXPECT_EQ(data_of(fs, 1), (Data{{"Hello!!!", kEndStream}}));
}

}  // namespace
}  // namespace hello::test
