// The limits of an HTTP/2 connection and the known attacks on one
// (docs/http2.md#limits-and-floods), over raw frames: each gets its
// RST_STREAM or GOAWAY, is counted, and leaves no stream open. Each test
// fails if its defence is removed (the figures are ours, not nghttp2's
// defaults, where nghttp2 has one).
#include <ctime>
#include <string>
#include <vector>

#include "h2_raw_session.h"
#include "http_bytes.h"
#include "test_time.h"

namespace hello::test {
namespace {

using namespace h2raw;

// The value of `id` in the server's first SETTINGS, or -1.
int64_t setting(const std::vector<Frame>& fs, uint16_t id) {
  for (const Frame& f : fs) {
    if (f.type != kSettings || (f.flags & kAck) != 0) continue;
    for (size_t i = 0; i + 6 <= f.payload.size(); i += 6)
      if ((static_cast<uint8_t>(f.payload[i]) << 8 | static_cast<uint8_t>(f.payload[i + 1])) == id)
        return read32(std::string_view(f.payload).substr(i + 2));
  }
  return -1;
}

using H2Limits_ = H2RawTest;

// --- SETTINGS_MAX_CONCURRENT_STREAMS ---

TEST_F(H2Limits_, MaxConcurrentStreamsIsAdvertisedAndRefusedBeforeTheAck) {
  limits_.max_concurrent_streams = 2;
  auto fs = start(/*ack=*/false);
  EXPECT_EQ(setting(fs, 0x3), 2);
  fs = send(open_post(1) + open_post(3) + open_post(5));
  EXPECT_EQ(rst_code(fs, 5), kRefusedStream);
  EXPECT_FALSE(rst_code(fs, 1).has_value());
  EXPECT_EQ(stats_.h2_over_streams.get(), 1u);
  EXPECT_EQ(stats_.h2_streams_open.get(), 2u);
  EXPECT_TRUE(open_);
}

TEST_F(H2Limits_, OnceAckedAStreamOverTheLimitEndsTheConnection) {
  limits_.max_concurrent_streams = 2;
  start();
  auto fs = send(open_post(1) + open_post(3) + open_post(5));
  EXPECT_EQ(goaway_code(fs), kProtocolError);  // RFC 9113 5.1.2 allows either
  EXPECT_EQ(stats_.h2_goaway_sent.get(), 1u);
}

// --- SETTINGS_MAX_HEADER_LIST_SIZE (--max-header-bytes) ---

TEST_F(H2Limits_, AHeaderListOverTheLimitIsRefusedAndTheConnectionGoesOn) {
  limits_.max_header_list_bytes = 400;
  auto fs = start();
  EXPECT_EQ(setting(fs, 0x6), 400);
  // 4 pseudo-header fields of about 40 bytes each with their 32, and one of
  // 32 + 5 + 300: over 400.
  fs = send(headers(1, request_block("GET", "/", literal("x-big", std::string(300, 'a')))));
  EXPECT_EQ(rst_code(fs, 1), kRefusedStream);
  EXPECT_FALSE(answered(fs, 1));
  EXPECT_EQ(stats_.h2_over_header_list.get(), 1u);
  EXPECT_EQ(stats_.h2_streams_open.get(), 0u);
  // Just under it is answered, and so is the next stream.
  fs =
      send(headers(3, request_block("GET", "/", literal("x-big", std::string(150, 'a')))) + get(5));
  EXPECT_TRUE(answered(fs, 3));
  EXPECT_TRUE(answered(fs, 5));
  EXPECT_EQ(stats_.requests.get(), 2u);
}

TEST_F(H2Limits_, TrailersCountAsAHeaderListOfTheirOwn) {
  limits_.max_header_list_bytes = 400;
  start();
  auto fs = send(open_post(1) + headers(1, literal("x-t", std::string(400, 't'))));
  EXPECT_EQ(rst_code(fs, 1), kRefusedStream);
  EXPECT_EQ(stats_.h2_over_header_list.get(), 1u);
}

// --- Request bodies (--max-body-bytes) ---

// A body over the limit gets the persona's 413, then RST_STREAM NO_ERROR
// (the session's, RFC 9113 section 8.1: the client may stop sending).
TEST_F(H2Limits_, AContentLengthOverTheBodyLimitIsRefusedAtOnce) {
  limits_.max_body_bytes = 10;
  start();
  auto fs = send(open_post(1, literal(28, "11")));
  EXPECT_TRUE(answered(fs, 1)) << "413 without waiting for the DATA";
  EXPECT_EQ(rst_code(fs, 1), 0u);
  EXPECT_EQ(stats_.h2_over_body.get(), 1u);
  EXPECT_EQ(stats_.responses_4xx.get(), 1u);
  fs = send(open_post(3, literal(28, "10")) + data(3, "0123456789", kEndStream));
  EXPECT_TRUE(answered(fs, 3));
  EXPECT_EQ(stats_.responses_2xx.get(), 0u) << "a POST to / is 405";
}

TEST_F(H2Limits_, DataOverTheBodyLimitIsRefusedAndLaterDataIgnored) {
  limits_.max_body_bytes = 10;
  start();
  auto fs = send(open_post(1) + data(1, "012345") + data(1, "67890"));
  EXPECT_TRUE(answered(fs, 1));
  EXPECT_EQ(rst_code(fs, 1), 0u);
  EXPECT_EQ(stats_.h2_over_body.get(), 1u);
  EXPECT_EQ(stats_.h2_streams_open.get(), 0u);
  // DATA the client had in flight on the refused stream ends nothing.
  fs = send(data(1, "x", kEndStream) + get(3));
  EXPECT_FALSE(goaway_code(fs).has_value());
  EXPECT_TRUE(answered(fs, 3));
}

// Padding is flow-controlled but not content (RFC 9113 section 6.1): a
// body of exactly the limit in a DATA frame padded past it is the
// request's, and the JSON echo sends it back, without the padding.
const std::vector<FileRoute> kEchoRoutes = {test::echo_route("/echo")};

class H2EchoLimits_ : public H2RawTest {
 protected:
  H2EchoLimits_() : H2RawTest(options()) {}
  static TableOptions options() {
    TableOptions o;
    o.routes = &kEchoRoutes;
    return o;
  }
};

TEST_F(H2EchoLimits_, PaddingIsNotContent) {
  limits_.max_body_bytes = 10;
  start();
  std::string body = "{\"a\":1234}";
  ASSERT_EQ(body.size(), 10u);
  std::string padded = std::string(1, '\x14') + body + std::string(20, '\0');
  auto fs = send(headers(1, request_block("POST", "/echo"), kEndHeaders) +
                 frame(kData, kPadded | kEndStream, 1, padded));
  ASSERT_TRUE(answered(fs, 1));
  EXPECT_EQ(field(1, ":status"), "200");
  EXPECT_EQ(heard_[1].body, body);
  EXPECT_FALSE(rst_code(fs, 1).has_value());
  EXPECT_EQ(stats_.h2_over_body.get(), 0u);
  EXPECT_EQ(stats_.responses_2xx.get(), 1u);
}

// --- Rapid reset (CVE-2023-44487) ---

TEST_F(H2Limits_, RapidResetEndsTheConnectionAfterTheBurst) {
  start();
  int at = 0;
  for (uint32_t i = 0; i < 1200 && at == 0; ++i) {
    uint32_t id = 1 + 2 * i;
    auto fs = send(get(id) + rst_stream(id, kCancel));
    if (goaway_code(fs).has_value()) {
      EXPECT_EQ(goaway_code(fs), kInternalError);
      at = static_cast<int>(i) + 1;
    }
  }
  // The burst of 500, plus 33 for each second boundary the loop crossed.
  EXPECT_GT(at, static_cast<int>(H2Defences::kResetBurst));
  EXPECT_LE(at, static_cast<int>(H2Defences::kResetBurst) + 70);
  EXPECT_EQ(stats_.h2_flood_rapid_reset.get(), 1u);
  EXPECT_EQ(stats_.h2_rst_received.get(), static_cast<uint64_t>(at));
  EXPECT_EQ(stats_.h2_streams_open.get(), 0u);
  EXPECT_FALSE(open_) << "no stream is open after GOAWAY: the session is done";
}

// --- CONTINUATION flood (CVE-2024-28182) ---

TEST_F(H2Limits_, ContinuationsBeyondTheLimitEndTheConnection) {
  auto with_continuations = [](uint32_t id, size_t n) {
    std::string in = headers(id, request_block(), kEndStream);
    for (size_t i = 0; i < n; ++i)
      in += frame(kContinuation, i + 1 == n ? kEndHeaders : 0, id, literal("x-c", "v"));
    return in;
  };
  start();
  EXPECT_TRUE(answered(send(with_continuations(1, H2Defences::kMaxContinuations)), 1));
  auto fs = send(with_continuations(3, H2Defences::kMaxContinuations + 1));
  EXPECT_EQ(goaway_code(fs), kEnhanceYourCalm);
  EXPECT_FALSE(answered(fs, 3));
  EXPECT_EQ(stats_.h2_flood_continuation.get(), 1u);
  EXPECT_FALSE(open_);
}

// --- SETTINGS floods ---

TEST_F(H2Limits_, ASettingsFrameWithTooManyEntriesEndsTheConnection) {
  start();
  std::vector<std::pair<uint16_t, uint32_t>> entries(H2Defences::kMaxSettingsEntries, {0x4, 100});
  EXPECT_EQ(count(send(settings(entries)), kSettings, kAck), 1);
  entries.push_back({0x4, 100});
  EXPECT_EQ(goaway_code(send(settings(entries))), kEnhanceYourCalm);
  EXPECT_EQ(stats_.h2_flood_settings.get(), 1u);
}

TEST_F(H2Limits_, SettingsFramesBeyondTheBudgetEndTheConnection) {
  start();  // its SETTINGS is the first of 100
  EXPECT_EQ(sends_until_goaway(settings(), 500), 100);
  EXPECT_EQ(stats_.h2_flood_settings.get(), 1u);
  EXPECT_EQ(stats_.h2_goaway_sent.get(), 1u);
  EXPECT_FALSE(open_);
}

// --- PING and ACK floods ---

TEST_F(H2Limits_, PingsBeyondTheBudgetEndTheConnection) {
  start();
  EXPECT_EQ(sends_until_goaway(ping(), 500), 101);
  EXPECT_EQ(stats_.h2_flood_ping.get(), 1u);
  EXPECT_FALSE(open_);
}

TEST_F(H2Limits_, EachRequestRaisesThePingBudget) {
  start();
  for (uint32_t id = 1; id < 100; id += 2) send(get(id));  // 50 requests
  EXPECT_EQ(sends_until_goaway(ping(), 500), 151);
}

TEST_F(H2Limits_, PingAcksQueuedBeyondTheLimitEndTheConnection) {
  start();
  uint32_t id = 1;
  for (int batch = 0; batch < 8; ++batch) {  // 400 requests: a PING budget of 500
    std::string in;
    for (int i = 0; i < 50; ++i, id += 2) in += get(id);
    send(in);
  }
  std::string pings;
  for (size_t i = 0; i <= H2Defences::kMaxOutboundAcks; ++i) pings += ping();
  auto fs = send(pings);
  EXPECT_EQ(goaway_code(fs), kEnhanceYourCalm);
  EXPECT_EQ(stats_.h2_flood_ack.get(), 1u);
  EXPECT_EQ(stats_.h2_flood_ping.get(), 0u);
}

TEST_F(H2Limits_, PingAcksFromTheClientCostNothing) {
  start();
  EXPECT_EQ(sends_until_goaway(ping(kAck), 300), 0);
}

// --- PRIORITY and empty-DATA floods ---

TEST_F(H2Limits_, PriorityFramesBeyondTheBudgetEndTheConnection) {
  start();
  EXPECT_EQ(sends_until_goaway(priority(3, 0), 500), 101);
  EXPECT_EQ(stats_.h2_flood_priority.get(), 1u);
}

TEST_F(H2Limits_, EmptyDataFramesBeyondTheBudgetEndTheConnection) {
  start();
  send(open_post(1));  // one stream: a budget of 101
  EXPECT_EQ(sends_until_goaway(data(1, ""), 500), 102);
  EXPECT_EQ(stats_.h2_flood_empty_data.get(), 1u);
  EXPECT_EQ(stats_.h2_streams_open.get(), 1u) << "the session lives until the connection closes";
  session_.reset();
  EXPECT_EQ(stats_.h2_streams_open.get(), 0u);
}

TEST_F(H2Limits_, AnEmptyDataFrameThatEndsItsStreamIsARequest) {
  start();
  for (uint32_t id = 1; id < 400; id += 2) {
    auto fs = send(open_post(id) + data(id, "", kEndStream));
    ASSERT_TRUE(answered(fs, id)) << id;
  }
  EXPECT_EQ(stats_.h2_flood_empty_data.get(), 0u);
}

// --- Header blocks refused, or on a stream already reset ---

// 16 KiB of one-byte references (0xbe, the newest dynamic-table entry) to a
// field of 4 KB that `insert` adds first (a literal with incremental
// indexing): 64 MB of fields in one block of 16 KiB.
std::string amplified(uint32_t id, bool insert) {
  std::string block = request_block();
  if (insert)
    block += "\x40" + hpack_int(0, 7, 3) + "x-a" + hpack_int(0, 7, 4000) + std::string(4000, 'a');
  block.resize(16384, '\xbe');
  return headers(id, block);
}

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

TEST_F(H2Limits_, TheRestOfABlockOverTheLimitIsDecodedButNotChecked) {
  // nghttp2 checked each field of a refused stream's block (its
  // nghttp2_check_header_value on 4 KB values): about 15 ms a block, where
  // decoding alone is a fraction of a millisecond.
  start();
  send(amplified(1, true));
  double before = thread_cpu_ms();
  for (uint32_t id = 3; id < 3 + 2 * 10; id += 2) {
    auto fs = send(amplified(id, false));
    ASSERT_EQ(rst_code(fs, id), kRefusedStream) << id;
    ASSERT_EQ(count(fs, kRstStream), 1) << "nghttp2 adds no RST_STREAM of its own";
  }
  double per_block = (thread_cpu_ms() - before) / 10;
  EXPECT_LT(per_block, scaled_ms(3.0)) << "ms of CPU a block";
  RecordProperty("cpu_us_per_block", std::to_string(static_cast<long>(per_block * 1000)));
  EXPECT_EQ(stats_.h2_over_header_list.get(), 11u);
  EXPECT_TRUE(open_);
  EXPECT_TRUE(answered(send(get(101)), 101)) << "the connection goes on, its HPACK state intact";
}

TEST_F(H2Limits_, AHeaderListGoesOnCountingOnceA413IsUnderWay) {
  // A Content-Length over the body's limit is answered 413 at once; the
  // fields after it still count against the header list, and past it the
  // stream is reset like any other.
  limits_.max_header_list_bytes = 400;
  start();
  auto fs = send(
      headers(1, request_block("POST", "/",
                               literal(28, "99999999") + literal("x-big", std::string(300, 'b')))));
  EXPECT_EQ(rst_code(fs, 1), kRefusedStream);
  EXPECT_EQ(stats_.h2_over_body.get(), 1u);
  EXPECT_EQ(stats_.h2_over_header_list.get(), 1u);
  EXPECT_TRUE(answered(send(get(3)), 3));
}

TEST_F(H2Limits_, HeaderBlocksOverTheLimitBeyondTheBudgetEndTheConnection) {
  limits_.max_header_list_bytes = 400;
  start();
  std::string big = literal("x-big", std::string(400, 'b'));
  uint32_t id = 1;
  for (int i = 0; i < 16; ++i, id += 2)
    ASSERT_EQ(rst_code(send(headers(id, request_block("GET", "/", big))), id), kRefusedStream);
  EXPECT_TRUE(answered(send(get(id)), id)) << "a request under the limit is still answered";
  id += 2;
  auto fs = send(headers(id, request_block("GET", "/", big)));
  EXPECT_EQ(goaway_code(fs), kEnhanceYourCalm);
  EXPECT_EQ(stats_.h2_flood_refused_headers.get(), 1u);
  EXPECT_EQ(stats_.h2_over_header_list.get(), 17u);
  EXPECT_FALSE(open_);
}

TEST_F(H2Limits_, HeaderBlocksOnAStreamAlreadyRefusedCountAgainstTheBudget) {
  // A stream over the limit before the client's ACK: nghttp2 refuses it
  // and keeps no record of it, and ignores (but decodes) each block sent
  // on it again; a block on a stream reset is a connection error instead.
  limits_.max_concurrent_streams = 1;
  start(/*ack=*/false);
  auto fs = send(open_post(1) + open_post(3));
  ASSERT_EQ(rst_code(fs, 3), kRefusedStream);
  int at = sends_until_goaway(headers(3, request_block(), kEndHeaders), 100);
  EXPECT_EQ(at, 17);
  EXPECT_EQ(stats_.h2_flood_refused_headers.get(), 1u);
}

TEST_F(H2Limits_, AHeaderBlockOnAStreamResetEndsTheConnectionAtOnce) {
  start();
  send(open_post(1) + rst_stream(1, kCancel));
  auto fs = send(headers(1, literal("x-t", "v")));
  EXPECT_TRUE(goaway_code(fs).has_value()) << "nghttp2's STREAM_CLOSED";
  EXPECT_EQ(stats_.h2_flood_refused_headers.get(), 0u);
}

// --- The open-streams gauge ---

TEST_F(H2Limits_, OpenStreamsAreAGaugeThatAClosedSessionEmpties) {
  start();
  send(open_post(1) + open_post(3) + open_post(5));
  EXPECT_EQ(stats_.h2_streams_open.get(), 3u);
  send(data(3, "x", kEndStream));
  EXPECT_EQ(stats_.h2_streams_open.get(), 2u);
  session_.reset();
  EXPECT_EQ(stats_.h2_streams_open.get(), 0u);
}

}  // namespace
}  // namespace hello::test
