#include "http2/h2_limits.h"

#include <algorithm>

#include "base/check.h"
#include "http2/h2_frame.h"

namespace hello {

namespace {

// What a connection may send of each frame that costs work without being a
// request, before its first request and then for each request stream it
// opens (in H2Guard::Budgeted's order). A client sends one SETTINGS and
// perhaps a few PINGs; Firefox sent a few PRIORITY frames to build its tree
// and one as it reprioritised a stream; an empty DATA frame that does not
// end its stream does nothing at all. nginx gives PRIORITY frames a budget
// that each new stream raises in the same way.
struct Budget {
  uint32_t base;
  uint32_t per_stream;
};
constexpr Budget kBudgets[] = {
    {100, 1},  // PING (not ACKs: answers to ours, and we send none)
    {100, 1},  // SETTINGS (not ACKs)
    {100, 2},  // PRIORITY
    {100, 1},  // DATA of no bytes without END_STREAM
    // Header blocks over the header list, or on a stream refused:
    // each costs the decoding of a whole block (up to 9 frames of 16 KiB
    // of HPACK, each byte of which may be a field) with no request to show
    // for it. A browser's request over the limit is refused and its page
    // goes on; a connection that keeps sending them is no browser. Not
    // raised per stream: each such block opens or names a stream itself.
    {16, 0},
};

// The size of a field in a field block (RFC 9113 section 6.5.2): its name,
// its value and 32 bytes of overhead.
constexpr size_t kFieldOverhead = 32;

}  // namespace

H2Guard::~H2Guard() {
  // A connection closed with streams open: they close with it.
  if (open_ > 0) accounting_.h2_streams_closed(open_);
}

// MAX_CONCURRENT_STREAMS and MAX_HEADER_LIST_SIZE (from --h2-max-streams
// and --max-header-bytes). Tomcat's SETTINGS (the spring persona's) has the
// first entry alone; the header list's limit holds all the same (the
// setting is advisory).
size_t H2Guard::settings_payload(uint8_t* out) const {
  auto entry = [&](size_t at, uint16_t id, uint32_t value) {
    out[at] = static_cast<uint8_t>(id >> 8);
    out[at + 1] = static_cast<uint8_t>(id);
    h2::write32(out + at + 2, value);
  };
  entry(0, h2::kMaxConcurrentStreams, setup_.max_concurrent_streams);
  if (setup_.tomcat) return 6;
  entry(6, h2::kMaxHeaderListSize,
        static_cast<uint32_t>(std::min<size_t>(setup_.max_header_list_bytes, UINT32_MAX)));
  return 12;
}

bool H2Guard::spend(Budgeted frame) {
  static_assert(std::size(kBudgets) == kBudgeted);
  static_assert(static_cast<int>(H2Flood::ping) + refused_headers ==
                static_cast<int>(H2Flood::refused_headers));
  const Budget& b = kBudgets[frame];
  if (++spent_[frame] <= b.base + static_cast<uint64_t>(b.per_stream) * streams_) return true;
  flood_ = static_cast<H2Flood>(static_cast<int>(H2Flood::ping) + frame);
  return false;
}

bool H2Guard::field_fits(size_t namelen, size_t valuelen) {
  header_bytes_ += namelen + valuelen + kFieldOverhead;
  return header_bytes_ <= setup_.max_header_list_bytes;
}

void H2Guard::stream_opened() {
  ++open_;
  ++streams_;
  accounting_.h2_stream_opened();
}

void H2Guard::stream_closed() {
  HELLO_CHECK(open_ > 0);
  --open_;
  accounting_.h2_streams_closed(1);
}

}  // namespace hello
