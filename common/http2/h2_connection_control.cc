// The control frames' work once they are read: RST_STREAM (and the rapid
// reset bucket), SETTINGS, GOAWAY, WINDOW_UPDATE; our windows reopened
// and the ACKs a read calls for.
#include <algorithm>

#include "http2/h2_connection.h"

namespace hello {

using namespace h2;

bool H2Connection::rst_stream() {
  // Rapid reset (CVE-2023-44487): a bucket of kResetBurst, refilled by
  // kResetRate a second, as nghttp2 keeps it; empty, GOAWAY INTERNAL_ERROR.
  uint64_t second = setup_.clock() / 1'000'000'000;
  if (second != reset_second_) {
    resets_left_ = std::min<uint64_t>(
        H2Defences::kResetBurst, resets_left_ + H2Defences::kResetRate * (second - reset_second_));
    reset_second_ = second;
  }
  if (H2Flow* s = find(stream_); s != nullptr) close(*s, false);
  for (uint32_t i = 0; i < reset_this_read_; ++i)  // ours too: now closed both ways
    if (reset_ids_[i] == stream_) reset_ids_[i] = reset_ids_[--reset_this_read_];
  if (resets_left_ == 0) return flooded(H2Flood::rapid_reset), false;
  --resets_left_;
  return true;
}

// A SETTINGS payload of `n` bytes as nghttp2 read one: each setting once,
// where it first came, with the last value it was given (unknown ones
// kept as they came, and ignored); at most kMaxSettingsEntries.
size_t H2Connection::unique_settings(const uint8_t* p, size_t n, Entry* out) {
  size_t count = 0;
  for (size_t at = 0; at + 6 <= n && count < H2Defences::kMaxSettingsEntries; at += 6) {
    Entry e{static_cast<uint16_t>(p[at] << 8 | p[at + 1]), read32(p + at + 2)};
    size_t i = 0;
    if ((e.id >= kHeaderTableSize && e.id <= kMaxHeaderListSize) ||
        e.id == kEnableConnectProtocol || e.id == kNoRfc7540Priorities)
      while (i < count && out[i].id != e.id) ++i;
    else
      i = count;
    out[i] = e;
    if (i == count) ++count;
  }
  return count;
}

// The SETTINGS rules (RFC 9113 section 6.5.2): the error the first
// setting that breaks one earns, or kNoError.
uint32_t H2Connection::settings_error(const Entry* e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    // ENABLE_PUSH, ENABLE_CONNECT_PROTOCOL (RFC 8441) and
    // NO_RFC7540_PRIORITIES (RFC 9218) are 0 or 1.
    if ((e[i].id == kEnablePush || e[i].id == kEnableConnectProtocol ||
         e[i].id == kNoRfc7540Priorities) &&
        e[i].value > 1)
      return kProtocolError;
    if (e[i].id == kInitialWindowSize && e[i].value > kMaxWindow) return kFlowControlError;
    if (e[i].id == kMaxFrameSize && (e[i].value < kMaxFrame || e[i].value > 0xffffff))
      return kProtocolError;
  }
  return kNoError;
}

bool H2Connection::settings_valid(std::string_view payload) {
  if (payload.size() % 6 != 0 || payload.size() > kKeep) return false;
  Entry e[H2Defences::kMaxSettingsEntries];
  size_t n = unique_settings(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), e);
  return settings_error(e, n) == kNoError;
}

// The client's settings applied, in order.
bool H2Connection::apply_settings(const uint8_t* p, size_t n) {
  Entry e[H2Defences::kMaxSettingsEntries];
  size_t count = unique_settings(p, n, e);
  if (uint32_t code = settings_error(e, count); code != kNoError) return fail(code), false;
  for (size_t i = 0; i < count; ++i) {
    if (e[i].id == kHeaderTableSize) {
      // Our encoder never indexes; a table smaller than HPACK's default
      // must still be acknowledged by our next block (RFC 7541 4.2).
      if (e[i].value < kDefaultTableSize) signal_table_ = true;
    } else if (e[i].id == kInitialWindowSize) {
      int64_t delta = static_cast<int64_t>(e[i].value) - peer_initial_window_;
      peer_initial_window_ = e[i].value;
      for (H2Flow* s = open_; s != nullptr; s = s->flow_next) {
        s->send_window += delta;
        if (s->send_window > kMaxWindow) return fail(kFlowControlError), false;
      }
    }
  }
  return true;
}

// The client's GOAWAY: its last stream is one of ours (even), and never
// more than its last GOAWAY's, as nghttp2 checked.
bool H2Connection::goaway() {
  uint32_t last = read32(keep_) & 0x7fffffff;
  if ((last != 0 && (last & 1) != 0) || last > goaway_last_in_) return fail(kProtocolError), false;
  goaway_last_in_ = last;
  goaway_in_ = true;
  return true;
}

bool H2Connection::settings() {
  if (!apply_settings(keep_, length_)) return false;
  ack(kSettings, nullptr, 0);
  acked_theirs_ = true;
  return !failed_;
}

bool H2Connection::window_update() {
  uint32_t increment = read32(keep_) & 0x7fffffff;
  if (stream_ == 0) {
    if (increment == 0) return fail(kProtocolError), false;
    send_window_ += increment;
    if (send_window_ > kMaxWindow) return fail(kFlowControlError), false;
    return true;
  }
  H2Flow* s = find(stream_);
  if (s == nullptr) {
    if (idle(stream_)) return fail(kProtocolError), false;
    return true;  // closed: ignored
  }
  // On a stream a stream error; a connection error, as nghttp2 made it,
  // which RFC 9113 section 5.4.1 allows.
  if (increment == 0) return fail(kProtocolError), false;
  s->send_window += increment;
  if (s->send_window > kMaxWindow) stream_error(*s, kFlowControlError);
  return !failed_;
}

// DATA taken: our windows reopened as soon as half of one is used, as
// nghttp2 did, so a client is never held back by our window.
void H2Connection::consume(H2Flow* s, size_t n) {
  auto update = [&](uint32_t stream, uint32_t& consumed) {
    consumed += static_cast<uint32_t>(n);
    if (consumed < static_cast<uint32_t>(kInitialWindow) / 2) return;
    uint8_t increment[4];
    write32(increment, consumed);
    append_frame(*out_, kWindowUpdate, 0, stream, increment, sizeof increment);
    consumed = 0;
  };
  if (n == 0) return;
  update(0, recv_consumed_);
  if (s != nullptr && (flags_ & kEndStream) == 0) update(s->id, s->recv_consumed);
}

void H2Connection::ack(uint8_t type, const uint8_t* payload, size_t n) {
  // ACKs one read calls for (a read of 64 KiB holds 3,855 PINGs): a client
  // waits for one before the next, a flood does not.
  if (++acks_this_read_ > H2Defences::kMaxOutboundAcks) return flooded(H2Flood::ack);
  append_frame(*out_, type, kAck, 0, payload, n);
}

}  // namespace hello
