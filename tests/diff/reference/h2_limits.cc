// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_limits.cc), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
#include "reference/h2_limits.h"

#include <algorithm>
#include <charconv>

#include "base/check.h"

namespace hello::reference {

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
  // A session ended with streams open (the connection closed): nghttp2 calls
  // no stream-close callback from nghttp2_session_del().
  if (open_ > 0) accounting_.h2_streams_closed(open_);
}

nghttp2_option* H2Guard::options() {
  nghttp2_option* opt = nullptr;
  HELLO_CHECK(nghttp2_option_new(&opt) == 0);
  // Twice the SETTINGS RFC 9113 and its extensions define (8): a frame with
  // more is an attack on the parser, answered with GOAWAY ENHANCE_YOUR_CALM
  // (CVE-2020-11080).
  nghttp2_option_set_max_settings(opt, H2Defences::kMaxSettingsEntries);
  // ACKs the session may queue before it has sent them: one read of 64 KiB
  // holds 3,855 PINGs; a client waits for its PING's ACK before the next.
  nghttp2_option_set_max_outbound_ack(opt, H2Defences::kMaxOutboundAcks);
  // Rapid reset (CVE-2023-44487; Debian's 1.52.0-1+deb12u1 has the call):
  // streams reset by the client, a burst of 500 then 33 a second (nghttp2's
  // own rate; half its burst of 1000, since a reset stream costs us a
  // request); past it GOAWAY INTERNAL_ERROR, as nghttp2 sends it.
  nghttp2_option_set_stream_reset_rate_limit(opt, H2Defences::kResetBurst, H2Defences::kResetRate);
  // CONTINUATION flood (CVE-2024-28182, 1.52.0-1+deb12u2): a header list
  // under --max-header-bytes fits in one HEADERS frame of 16 KiB.
  nghttp2_option_set_max_continuations(opt, H2Defences::kMaxContinuations);
  // nghttp2 checks HTTP messaging (pseudo-headers, connection-specific
  // fields, Content-Length against DATA) and sends WINDOW_UPDATE itself: the
  // defaults, kept (no nghttp2_option_set_no_http_messaging or
  // nghttp2_option_set_no_auto_window_update).
  return opt;
}

void H2Guard::submit_settings(nghttp2_session* session) const {
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, setup_.max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<uint32_t>(std::min<size_t>(setup_.max_header_list_bytes, UINT32_MAX))}};
  // Tomcat's SETTINGS (the spring persona's) has the first entry alone; the
  // header list's limit holds all the same (the setting is advisory).
  size_t n = setup_.tomcat ? 1 : 2;
  HELLO_CHECK(nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, n) == 0);
}

// nghttp2_session_upgrade2() takes any value and answers a bad one with
// GOAWAY after the 101; nghttp2_pack_settings_payload() applies the rules
// nghttp2 applies to a SETTINGS frame received.
bool H2Guard::settings_valid(std::string_view payload) {
  constexpr size_t kEntry = 6;
  size_t n = payload.size() / kEntry;
  if (payload.size() % kEntry != 0 || n > H2Defences::kMaxSettingsEntries) return false;
  nghttp2_settings_entry iv[H2Defences::kMaxSettingsEntries];
  const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
  for (size_t i = 0; i < n; ++i, p += kEntry)
    iv[i] = {static_cast<int32_t>(p[0] << 8 | p[1]), static_cast<uint32_t>(p[2]) << 24 |
                                                         static_cast<uint32_t>(p[3]) << 16 |
                                                         static_cast<uint32_t>(p[4]) << 8 | p[5]};
  uint8_t packed[kEntry * H2Defences::kMaxSettingsEntries];
  return nghttp2_pack_settings_payload(packed, sizeof packed, iv, n) >= 0;
}

int H2Guard::on_begin_frame(nghttp2_session* session, const nghttp2_frame_hd& hd) {
  bool ack = (hd.flags & NGHTTP2_FLAG_ACK) != 0;
  Budgeted spent = kBudgeted;
  switch (hd.type) {
    case NGHTTP2_HEADERS:
      header_bytes_ = 0;  // a new field block (a request's, or trailers)
      ++streams_;
      // RFC 9113 section 5.1.1: a stream id below the last one is a
      // connection error. nghttp2 1.52 ignores such a HEADERS on a stream it
      // no longer knows, lest trailers sent before our RST_STREAM arrived
      // end the connection; it remembers closed streams up to our
      // SETTINGS_MAX_CONCURRENT_STREAMS, so a stream it has no record of
      // was never opened (idle).
      if (hd.stream_id < last_stream_ && (hd.stream_id & 1) == 1 &&
          nghttp2_session_find_stream(session, hd.stream_id) == nullptr) {
        bad_stream_id_ = true;
        return NGHTTP2_ERR_CALLBACK_FAILURE;
      }
      // A block on a stream nghttp2 refused (over the streams limit, before
      // the client's ACK), of which it keeps no record: it decodes the block
      // for HPACK's sake and reports none of it. (On a stream reset or
      // closed, a block is a connection error: nghttp2 ends it.)
      if (hd.stream_id <= last_stream_ &&
          nghttp2_session_get_stream_user_data(session, hd.stream_id) == nullptr)
        spent = refused_headers;
      last_stream_ = std::max(last_stream_, hd.stream_id);
      break;
    case NGHTTP2_PING:
      if (!ack) spent = ping;
      break;
    case NGHTTP2_SETTINGS:
      if (!ack) spent = settings;
      break;
    case NGHTTP2_PRIORITY:
      spent = priority;
      break;
    case NGHTTP2_DATA:
      if (hd.length == 0 && (hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) spent = empty_data;
      break;
    case NGHTTP2_RST_STREAM:
      accounting_.h2_rst_stream(false);
      break;
    case NGHTTP2_GOAWAY:
      accounting_.h2_goaway(false);
      break;
    default:
      break;
  }
  if (spent == kBudgeted || spend(spent)) return 0;
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

bool H2Guard::spend(Budgeted frame) {
  static_assert(std::size(kBudgets) == kBudgeted);
  static_assert(static_cast<int>(H2Flood::ping) + refused_headers ==
                static_cast<int>(H2Flood::refused_headers));
  const Budget& b = kBudgets[frame];
  if (++spent_[frame] <= b.base + static_cast<uint64_t>(b.per_stream) * streams_) return true;
  flooded_ = static_cast<H2Flood>(static_cast<int>(H2Flood::ping) + frame);
  return false;
}

bool H2Guard::field_fits(size_t namelen, size_t valuelen) {
  header_bytes_ += namelen + valuelen + kFieldOverhead;
  return header_bytes_ <= setup_.max_header_list_bytes;
}

// NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE switches nghttp2 1.52 to its path
// for a block the application refuses (NGHTTP2_IB_IGN_HEADER_BLOCK): the
// rest is decoded, but no field is checked (nghttp2_http_on_header, whose
// nghttp2_check_header_value was nearly all the cost of an oversized
// block) or reported. It would reset the stream with INTERNAL_ERROR, but
// our RST_STREAM came first: the stream is closing, and it adds none.
int H2Guard::refuse_header_list(nghttp2_session* session, int32_t stream_id) {
  refuse(session, stream_id, H2Limit::header_list);
  return spend(refused_headers) ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE
                                : NGHTTP2_ERR_CALLBACK_FAILURE;
}

bool H2Guard::length_fits(const uint8_t* value, size_t valuelen) const {
  // nghttp2 has checked that a Content-Length is digits alone; one too long
  // for 64 bits is over any limit.
  uint64_t length = 0;
  const char* p = reinterpret_cast<const char*>(value);
  auto [end, ec] = std::from_chars(p, p + valuelen, length);
  return ec == std::errc{} && end == p + valuelen && length <= setup_.max_body_bytes;
}

void H2Guard::refuse(nghttp2_session* session, int32_t stream_id, H2Limit limit) {
  // REFUSED_STREAM: nothing of the request was processed (RFC 9113 section
  // 8.7), as h2o refuses a body over its limit.
  nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_REFUSED_STREAM);
  accounting_.h2_over_limit(limit);
}

void H2Guard::on_invalid_frame(int lib_error) {
  // A HEADERS beyond our SETTINGS_MAX_CONCURRENT_STREAMS: nghttp2 resets
  // the stream with REFUSED_STREAM (before the client acknowledged our
  // SETTINGS) or ends the connection with PROTOCOL_ERROR (after), which it
  // reports as a protocol error like any other.
  if (lib_error == NGHTTP2_ERR_REFUSED_STREAM) accounting_.h2_over_limit(H2Limit::streams);
}

void H2Guard::on_frame_sent(const nghttp2_frame& frame) {
  if (frame.hd.type == NGHTTP2_RST_STREAM) {
    accounting_.h2_rst_stream(true);
    return;
  }
  if (frame.hd.type != NGHTTP2_GOAWAY) return;
  accounting_.h2_goaway(true);
  if (own_goaway_) return;
  // nghttp2's own: of its server session, only the reset rate limit sends
  // INTERNAL_ERROR, and only too many SETTINGS entries ENHANCE_YOUR_CALM.
  if (frame.goaway.error_code == NGHTTP2_INTERNAL_ERROR)
    accounting_.h2_flood(H2Flood::rapid_reset);
  else if (frame.goaway.error_code == NGHTTP2_ENHANCE_YOUR_CALM)
    accounting_.h2_flood(H2Flood::settings);
}

void H2Guard::recv_failed(nghttp2_session* session, long rv) {
  uint32_t code = NGHTTP2_ENHANCE_YOUR_CALM;
  if (bad_stream_id_ && rv == NGHTTP2_ERR_CALLBACK_FAILURE)
    code = NGHTTP2_PROTOCOL_ERROR;
  else if (flooded_.has_value() && rv == NGHTTP2_ERR_CALLBACK_FAILURE)
    accounting_.h2_flood(*flooded_);
  else if (rv == NGHTTP2_ERR_FLOODED)
    accounting_.h2_flood(H2Flood::ack);
  else if (rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
    accounting_.h2_flood(H2Flood::continuation);
  else if (rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC)
    code = NGHTTP2_PROTOCOL_ERROR;  // RFC 9113 section 3.4: a connection error
  else
    return;
  own_goaway_ = true;
  nghttp2_session_terminate_session(session, code);
}

void H2Guard::stream_opened() {
  ++open_;
  accounting_.h2_stream_opened();
}

void H2Guard::stream_closed() {
  HELLO_CHECK(open_ > 0);
  --open_;
  accounting_.h2_streams_closed(1);
}

}  // namespace hello::reference
