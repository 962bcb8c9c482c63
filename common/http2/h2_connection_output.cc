// What the connection sends of its own accord or for the session: header
// blocks, DATA within the windows, RST_STREAM, GOAWAY, PING; and how
// streams close and are remembered once closed.
#include <algorithm>

#include "base/check.h"
#include "http2/h2_connection.h"

namespace hello {

using namespace h2;

void H2Connection::respond(H2Flow& s, std::string_view block, bool end, std::string& out) {
  // A smaller HPACK table the client asked for, acknowledged by a size
  // update to 0 at the block's start (we never index).
  size_t signal = signal_table_ ? 1 : 0;
  signal_table_ = false;
  size_t total = signal + block.size();
  size_t first = std::min<size_t>(total, kMaxFrame);
  uint8_t flags = (end ? kEndStream : 0) | (total <= kMaxFrame ? kEndHeaders : 0);
  append_head(out, first, kHeaders, flags, s.id);
  if (signal != 0) out.push_back('\x20');
  out.append(block.data(), first - signal);
  for (size_t at = first - signal; at < block.size();) {
    size_t n = std::min<size_t>(block.size() - at, kMaxFrame);
    append_head(out, n, kContinuation, at + n == block.size() ? kEndHeaders : 0, s.id);
    out.append(block.data() + at, n);
    at += n;
  }
  if (end) {
    s.end_out = true;
    sent_end(s);
  }
}

size_t H2Connection::sendable(const H2Flow& s) const {
  int64_t n = std::min<int64_t>({send_window_, s.send_window, kMaxFrame});
  return n > 0 ? static_cast<size_t>(n) : 0;
}

void H2Connection::data_head(H2Flow& s, size_t n, bool end, std::string& out) {
  HELLO_CHECK(n <= sendable(s));
  append_head(out, n, kData, end ? kEndStream : 0, s.id);
  send_window_ -= static_cast<int64_t>(n);
  s.send_window -= static_cast<int64_t>(n);
  if (end) s.end_out = true;
}

void H2Connection::sent_end(H2Flow& s) {
  if (s.end_in) close(s, false);
}

void H2Connection::reset(H2Flow& s, uint32_t code, std::string& out) {
  uint8_t payload[4];
  write32(payload, code);
  append_frame(out, kRstStream, 0, s.id, payload, sizeof payload);
  accounting_.h2_rst_stream(true);
  close(s, true);
}

void H2Connection::refuse(uint32_t id, H2Limit limit) {
  // REFUSED_STREAM: nothing of the request was processed (RFC 9113 8.7).
  uint8_t payload[4];
  write32(payload, kRefusedStream);
  append_frame(*out_, kRstStream, 0, id, payload, sizeof payload);
  accounting_.h2_rst_stream(true);
  guard_.over_limit(limit);
  remembered_[remember_at_++ % kRemembered] = id | kIgnored;
}

void H2Connection::go_away(uint32_t code, std::string& out) {
  if (failed_ || (goaway_out_ && code == kNoError)) return;
  uint8_t payload[8];
  write32(payload, last_in_);
  write32(payload + 4, code);
  append_frame(out, kGoaway, 0, 0, payload, sizeof payload);
  accounting_.h2_goaway(true);
  goaway_out_ = true;
  if (code != kNoError) {
    failed_ = true;
    read_ = Read::done;
  }
}

// A connection error: GOAWAY; the streams open close with the connection.
void H2Connection::fail(uint32_t code) {
  go_away(code, *out_);
}

void H2Connection::flooded(H2Flood flood) {
  accounting_.h2_flood(flood);
  // As nghttp2 ends a rapid reset: INTERNAL_ERROR; every other flood
  // ENHANCE_YOUR_CALM.
  fail(flood == H2Flood::rapid_reset ? kInternalError : kEnhanceYourCalm);
}

void H2Connection::ping(std::string& out) {
  static constexpr uint8_t kOpaque[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  append_frame(out, kPing, 0, 0, kOpaque, sizeof kOpaque);
}

H2Flow* H2Connection::find(uint32_t id) const {
  for (H2Flow* s = open_; s != nullptr; s = s->flow_next)
    if (s->id == id) return s;
  return nullptr;
}

void H2Connection::link(H2Flow& s) {
  s.flow_prev = nullptr;
  s.flow_next = open_;
  if (open_ != nullptr) open_->flow_prev = &s;
  open_ = &s;
  ++open_count_;
  guard_.stream_opened();
}

void H2Connection::close(H2Flow& s, bool ours) {
  HELLO_CHECK(open_count_ > 0 && (s.flow_prev != nullptr || open_ == &s));
  if (s.flow_prev != nullptr)
    s.flow_prev->flow_next = s.flow_next;
  else
    open_ = s.flow_next;
  if (s.flow_next != nullptr) s.flow_next->flow_prev = s.flow_prev;
  --open_count_;
  if (ours && out_ != nullptr && reset_this_read_ < kResetsKept)
    reset_ids_[reset_this_read_++] = s.id;
  guard_.stream_closed();
  // Frames on it from now on: ignored if we reset it before the client
  // ended it, a connection error STREAM_CLOSED otherwise (as nghttp2).
  remembered_[remember_at_++ % kRemembered] = s.id | (ours && !s.end_in ? kIgnored : 0);
  if (block_flow_ == &s) {
    block_flow_ = nullptr;
    block_ = Block::ignored;  // the rest of its block only decoded
  }
  if (frame_flow_ == &s) frame_flow_ = nullptr;
  events_.closed(s);
}

// The newest closed streams, as many as nghttp2 kept: closed and open
// together at most SETTINGS_MAX_CONCURRENT_STREAMS (and kRemembered).
int H2Connection::closed_state(uint32_t id) const {
  uint32_t keep = setup_.max_concurrent_streams > open_count_
                      ? std::min<uint32_t>(kRemembered, setup_.max_concurrent_streams - open_count_)
                      : 0;
  for (uint32_t i = 1; i <= keep; ++i) {
    uint32_t e = remembered_[static_cast<uint8_t>(remember_at_ - i) % kRemembered];
    if (e != 0 && (e & ~kIgnored) == id) return (e & kIgnored) != 0 ? 1 : 0;
  }
  return -1;
}

H2Flow* H2Connection::upgrade(std::string_view settings) {
  if (!settings_valid(settings)) return nullptr;
  std::string ignored;
  out_ = &ignored;  // applying them sends nothing: no ACK for HTTP2-Settings
  bool applied = apply_settings(reinterpret_cast<const uint8_t*>(settings.data()), settings.size());
  out_ = nullptr;
  if (!applied) return nullptr;
  last_in_ = 1;
  H2Flow& s = events_.opened(1);
  s.open(1, peer_initial_window_);
  s.head_in = s.end_in = true;
  link(s);
  return &s;
}

}  // namespace hello
