// The WebSocket client of one ws_load connection: see ws_load_session.h.
#include "ws_load_session.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace ws_load {

SessionShared::SessionShared(const Options& options, uint64_t seed)
    : opt(options),
      payload(options.size, options.binary),
      rng(seed),
      inflated(new uint8_t[kInflateChunk]) {}

void Session::start(Buffer& out) {
  key_ = make_key();
  head_.reserve(1024);
  put_request(out, shared_.opt, key_);
}

void Session::on_bytes(const uint8_t* p, size_t n, Buffer& out) {
  if (phase_ == Phase::kUpgrading) {
    size_t used = read_head(p, n);
    p += used, n -= used;
  }
  // Each pass consumes at least one byte (a header or part of a payload),
  // so there are at most `n` of them.
  while (n > 0 && (phase_ == Phase::kOpen || phase_ == Phase::kClosing)) {
    size_t used = in_payload_ ? read_payload(p, n, out) : read_header(p, n, out);
    expect(used > 0 && used <= n, "a pass over the server's bytes consumed none or too many");
    p += used, n -= used;
  }
}

void Session::start_sending(Buffer& out) {
  expect(phase_ == Phase::kOpen && !sending_, "start_sending on a session not open");
  sending_ = true;
  for (size_t i = 0; i < shared_.opt.in_flight && phase_ == Phase::kOpen; ++i) put_message(out);
}

void Session::send_close(Buffer& out) {
  if (phase_ != Phase::kOpen) return;
  static constexpr uint8_t kNormal[2] = {0x03, 0xe8};  // 1000, big-endian
  sending_ = false;
  put_client_frame(out, kFin | kClose, kNormal, sizeof kNormal, shared_.rng);
  phase_ = Phase::kClosing;
}

// Collects the 101 up to its blank line; returns the bytes used, leaving
// any frames after it to the caller.
size_t Session::read_head(const uint8_t* p, size_t n) {
  size_t old = head_.size();
  size_t take = std::min(n, kMaxHead - old);
  head_.append(reinterpret_cast<const char*>(p), take);
  // The blank line may straddle two reads.
  size_t end = head_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
  if (end == std::string::npos) {
    if (head_.size() == kMaxHead) fail("handshake: an answer head over 8 KiB");
    return take;
  }
  end += 4;
  Upgrade upgrade;
  std::string why =
      check_answer(std::string_view(head_).substr(0, end), key_, shared_.opt.deflate, upgrade);
  if (!why.empty()) {
    fail(std::move(why));
    return take;
  }
  if (upgrade.deflate) {
    deflater_ = std::make_unique<Deflater>();
    inflater_ = std::make_unique<Inflater>();
    const char* problem = deflater_->init(upgrade.params);
    if (problem == nullptr) problem = inflater_->init();
    if (problem != nullptr) {
      fail(fmt::format("handshake: {}", problem));
      return take;
    }
  }
  phase_ = Phase::kOpen;
  std::string().swap(head_);
  return end - old;
}

size_t Session::read_header(const uint8_t* p, size_t n, Buffer& out) {
  FrameHeader h;
  const char* why = nullptr;
  HeaderParse parsed = HeaderParse::kNeedMore;
  size_t used = 0;
  // Fast path: the whole header is in this read, as it nearly always is.
  if (header_len_ == 0) {
    parsed = parse_header(p, n, h, &why);
    used = h.size;
  }
  if (parsed == HeaderParse::kNeedMore) {
    size_t take = std::min(n, kMaxFrameHeader - header_len_);
    std::memcpy(header_ + header_len_, p, take);
    parsed = parse_header(header_, header_len_ + take, h, &why);
    if (parsed == HeaderParse::kNeedMore) {
      header_len_ += take;
      return take;
    }
    // It needed more than header_len_ bytes before, so this is above 0.
    used = h.size - header_len_;
    header_len_ = 0;
  }
  if (parsed == HeaderParse::kBad) {
    fail(why);
    return n;
  }
  begin_frame(h, out);
  return used;
}

void Session::begin_frame(const FrameHeader& h, Buffer& out) {
  uint8_t op = h.opcode();
  if (h.masked) return fail("a masked frame from the server");
  if (h.first & kRsv23) return fail("a frame with RSV2 or RSV3 set");
  if (h.control()) {
    if (op != kClose && op != kPing && op != kPong) return fail("an unknown control opcode");
    if (!h.fin() || h.length > kMaxControlPayload || h.rsv1())
      return fail("a fragmented, long or compressed control frame");
    control_len_ = 0;
  } else if (op == kContinuation) {
    if (!in_.active) return fail("a continuation frame with no message begun");
    if (h.rsv1()) return fail("RSV1 on a continuation frame");
  } else if (op == kText || op == kBinary) {
    if (in_.active) return fail("a new message inside a fragmented one");
    if (h.rsv1() && inflater_ == nullptr) return fail("RSV1 without permessage-deflate");
    begin_message(op, h.rsv1());
  } else {
    return fail("an unknown data opcode");
  }
  frame_ = h;
  frame_left_ = h.length;
  in_payload_ = true;
  if (frame_left_ == 0 && phase_ != Phase::kFailed) end_frame(out);
}

void Session::begin_message(uint8_t opcode, bool compressed) {
  if (next_echo_ == next_send_) return fail("a message that echoes nothing sent");
  if (opcode != (shared_.opt.binary ? kBinary : kText))
    return fail("an echo of the other type (text for binary or the reverse)");
  in_ = {};
  in_.active = true;
  in_.compressed = compressed;
  shared_.payload.stamp(next_echo_, in_.stamp);
}

size_t Session::read_payload(const uint8_t* p, size_t n, Buffer& out) {
  size_t take = static_cast<size_t>(std::min<uint64_t>(n, frame_left_));
  if (frame_.control()) {
    std::memcpy(control_ + control_len_, p, take);
    control_len_ += take;
  } else if (in_.compressed) {
    auto sink = [this](const uint8_t* bytes, size_t count) { return message_bytes(bytes, count); };
    if (const char* why = inflater_->feed(p, take, shared_.inflated.get(), kInflateChunk, sink))
      fail(fmt::format("inflate: {}", why));
  } else {
    message_bytes(p, take);
  }
  if (phase_ == Phase::kFailed) return n;
  frame_left_ -= take;
  if (frame_left_ == 0) end_frame(out);
  return take;
}

// The next `n` uncompressed bytes of the echo; false if they are not what
// was sent, which fails the session.
bool Session::message_bytes(const uint8_t* p, size_t n) {
  if (n > shared_.payload.size() - in_.offset) {
    fail("an echo longer than the message sent");
    return false;
  }
  uint64_t at = 0;
  if (shared_.opt.verify && !shared_.payload.matches(in_.stamp, in_.offset, p, n, &at)) {
    // The first bytes number the message: a difference there is most
    // likely an echo out of order, or of another connection's message.
    fail(at < shared_.payload.stamp_width()
             ? "an echo whose number (first bytes) is not the one due"
             : "an echo that differs from the message sent");
    return false;
  }
  in_.offset += n;
  return true;
}

void Session::end_frame(Buffer& out) {
  in_payload_ = false;
  if (!frame_.control()) {
    if (frame_.fin()) end_message(out);
    return;
  }
  switch (frame_.opcode()) {
    case kPing:
      put_client_frame(out, kFin | kPong, control_, control_len_, shared_.rng);
      break;
    case kClose:
      on_close_frame(out);
      break;
    default:  // a pong nobody asked for: RFC 6455 section 5.5.3 allows it
      break;
  }
}

void Session::end_message(Buffer& out) {
  if (in_.compressed) {
    auto sink = [this](const uint8_t* bytes, size_t count) { return message_bytes(bytes, count); };
    if (const char* why = inflater_->end_message(shared_.inflated.get(), kInflateChunk, sink))
      return fail(fmt::format("inflate: {}", why));
    if (phase_ == Phase::kFailed) return;
  }
  if (in_.offset != shared_.payload.size()) return fail("an echo shorter than the message sent");
  in_ = {};
  ++next_echo_;
  ++shared_.echoes;
  if (sending_) put_message(out);
}

void Session::on_close_frame(Buffer& out) {
  if (phase_ == Phase::kClosing) {
    phase_ = Phase::kClosed;
    return;
  }
  // The server closed first: answer with its code, as RFC 6455 section
  // 5.5.1 asks, and count it against the run.
  size_t code_len = std::min<size_t>(control_len_, 2);
  put_client_frame(out, kFin | kClose, control_, code_len, shared_.rng);
  if (code_len < 2) return fail("closed by the server without a code");
  fail(fmt::format("closed by the server with code {}", control_[0] << 8 | control_[1]));
}

// Appends message number next_send_, framed and masked.
void Session::put_message(Buffer& out) {
  const Payload& payload = shared_.payload;
  uint8_t stamp[kStampWidth];
  payload.stamp(next_send_++, stamp);
  size_t width = payload.stamp_width(), size = payload.size();
  uint8_t first = kFin | (shared_.opt.binary ? kBinary : kText);
  if (deflater_ != nullptr) {
    Buffer& z = shared_.compressed;
    if (const char* why =
            deflater_->compress(stamp, width, payload.base() + width, size - width, z))
      return fail(fmt::format("deflate: {}", why));
    put_client_frame(out, first | kRsv1, z.data(), z.size(), shared_.rng);
    return;
  }
  // The stamp and the template are masked straight into the buffer: one
  // pass over the payload per message, no copy of it first.
  uint32_t mask = static_cast<uint32_t>(shared_.rng.next());
  uint8_t key[4];
  std::memcpy(key, &mask, 4);
  uint8_t* at = out.tail(client_header_size(size) + size);
  uint8_t* body = put_client_header(at, first, size, key);
  mask_copy(body, stamp, width, key, 0);
  mask_copy(body + width, payload.base() + width, size - width, key, width);
  out.commit(static_cast<size_t>(body - at) + size);
}

void Session::fail(std::string why) {
  if (phase_ == Phase::kFailed) return;
  phase_ = Phase::kFailed;
  failure_ = std::move(why);
  sending_ = false;
}

}  // namespace ws_load
