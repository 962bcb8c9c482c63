#include "websocket/ws_heart.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>

#include "persona/answer.h"
#include "websocket/ws_handshake.h"

namespace hello {

namespace {

constexpr uint8_t kText = static_cast<uint8_t>(WsOpcode::text);
constexpr uint8_t kClose = static_cast<uint8_t>(WsOpcode::close);
constexpr uint8_t kPing = static_cast<uint8_t>(WsOpcode::ping);
constexpr uint8_t kPong = static_cast<uint8_t>(WsOpcode::pong);

}  // namespace

WsHeart::WsHeart(const WsTable& table, Accounting& sink, Dice* dice)
    : Heart(kTraits), table_(table), sink_(sink), dice_(dice) {
  reset();
}

void WsHeart::reset() {
  state_ = State::closed;
  header_length_ = 0;
  in_frame_ = false;
  bad_length_ = false;
  client_closed_ = false;
  upgraded_ = false;
  message_opcode_ = 0;
  control_length_ = 0;
  close_code_ = 0;
  frame_ = {};
  frame_done_ = 0;
  stalled_since_us_ = 0;
  next_ping_us_ = 0;
  pong_due_us_ = 0;
  pings_ = 0;
  utf8_.reset();
  message_.clear();
  deflate_.reset();
  compressed_ = false;
  shaping_.reset();
}

void WsHeart::release() {
  if (upgraded_) {
    Answered line;
    if (sink_.logs()) [[unlikely]] {
      line.status = 101;
      line.method = "GET";
      line.target = log_target_;
      line.body_bytes = bytes_out_;
      line.began_ns = began_ns_;
    }
    sink_.ws_ended(line);
  }
  upgraded_ = false;
  if (message_.capacity() > kKeptMessage) std::string().swap(message_);
  if (scratch_.capacity() > kKeptMessage) std::string().swap(scratch_);
  deflate_.reset();
}

uint64_t WsHeart::steady_us() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count());
}

Fed WsHeart::upgraded(const Upgrade& u, std::string& out) {
  char accept[28];
  ws_accept(u.ws_key, accept);
  // With permessage-deflate the streams are made now and kept: context
  // takeover needs each direction's window from message to message.
  if (u.ws_deflate) {
    deflate_ = std::make_unique<WsDeflate>();
    if (!deflate_->ready()) deflate_.reset();  // zlib had no memory: declined
  }
  if (u.ws_shape != nullptr && dice_ != nullptr) {
    shaping_ = std::make_unique<WsShaping>();
    shaping_->shape = *u.ws_shape;
    shaping_->shape.header_count = 0;  // headers mean nothing here, and point into the request
  }
  bytes_out_ = 0;
  if (sink_.logs()) [[unlikely]] {
    log_target_.assign(u.target);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    began_ns_ = static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
  }
  table_.append_switching(out, {accept, sizeof accept}, deflate_ != nullptr);
  state_ = State::open;
  upgraded_ = true;
  sink_.ws_upgraded();
  // The 101 and the echoes are counted as WebSocket traffic, not requests.
  Fed fed;
  fed.consumed = 0;
  if (uint16_t every = table_.persona().ping_interval_s; every > 0) {
    uint64_t now = clock_();
    next_ping_us_ = now + uint64_t{every} * 1'000'000;
    fed.wake_us = wake_after(now);
  }
  return fed;
}

Fed WsHeart::feed(const char* data, size_t len, std::string& out) {
  Fed fed;
  fed.consumed = len;
  const auto* p = reinterpret_cast<const uint8_t*>(data);
  const uint8_t* end = p + len;
  while (p < end && state_ != State::closed) {
    if (!in_frame_) {
      size_t took = take_header(p, static_cast<size_t>(end - p));
      if (took == 0) break;  // the rest of the header comes in a later read
      p += took;
      if (!admit(out)) break;
      frame_done_ = 0;
      bool data_frame = !ws_is_control(frame_.opcode);
      // The common message: one frame, whole in this read, no compression.
      if (data_frame && frame_.fin && !in_message() && deflate_ == nullptr && shaping_ == nullptr &&
          static_cast<uint64_t>(end - p) >= frame_.length) {
        if (!echo_whole(p, out)) break;
        p += frame_.length;
        continue;
      }
      in_frame_ = true;
      if (data_frame && !in_message()) {
        message_opcode_ = frame_.opcode;
        compressed_ = frame_.rsv != 0;  // RSV1, which admit() let through
        utf8_.reset();
        message_.clear();
      }
    }
    size_t n = static_cast<size_t>(
        std::min<uint64_t>(static_cast<uint64_t>(end - p), frame_.length - frame_done_));
    if (n > 0 && !take_payload(p, n, out)) break;
    p += n;
    frame_done_ += n;
    if (frame_done_ == frame_.length && !end_frame(out)) break;
  }
  if (state_ == State::closed) {
    fed.next = Fed::Next::close;
    // Clean only when the client's close ended the input: after a failure
    // the rest of the client's frame may still be coming.
    fed.clean_end = client_closed_ && p == end;
    return fed;
  }
  bool partial = in_frame_ || header_length_ > 0 || in_message();
  if (partial || next_ping_us_ != 0 || shaping_ != nullptr) {
    uint64_t now = clock_();
    if (partial) stalled_since_us_ = now;
    fed.wake_us = wake_after(now);
  }
  return fed;
}

bool WsHeart::partial() const {
  return in_frame_ || header_length_ > 0 || in_message();
}

// How long until the next thing the heart must do on its own: a stalled
// message's end, a ping due, a pong overdue.
uint64_t WsHeart::wake_after(uint64_t now) const {
  uint64_t at = Fed::kNever;
  if (partial()) at = stalled_since_us_ + kStallUs;
  // Pings only while open: after our close nothing more is sent.
  if (state_ != State::open) {
  } else if (pong_due_us_ != 0) {
    at = std::min(at, pong_due_us_);
  } else if (next_ping_us_ != 0) {
    at = std::min(at, next_ping_us_);
  }
  if (shaping_ != nullptr && !shaping_->due.empty()) at = std::min(at, shaping_->due.front().first);
  return at == Fed::kNever ? at : at > now ? at - now : 0;
}

// The persona's pings (Sanic's: every 20 s, 1011 if no pong within 20 s,
// as websockets' keepalive does): one is sent when due; its pong must come
// back before the timeout.
bool WsHeart::keep_alive(std::string& out, uint64_t now) {
  const WebSocketPersona& ws = table_.persona();
  if (pong_due_us_ != 0 && now >= pong_due_us_)
    return fail(out, kWsInternalError, "keepalive ping timeout");
  if (pong_due_us_ == 0 && next_ping_us_ != 0 && now >= next_ping_us_) {
    // websockets sends 4 random bytes; a count serves as well and is the
    // same from run to run.
    ++pings_;
    char payload[4] = {static_cast<char>(pings_ >> 24), static_cast<char>(pings_ >> 16),
                       static_cast<char>(pings_ >> 8), static_cast<char>(pings_)};
    append_ws_header(out, kPing, sizeof payload);
    out.append(payload, sizeof payload);
    pong_due_us_ = now + uint64_t{ws.ping_timeout_s} * 1'000'000;
    next_ping_us_ = now + uint64_t{ws.ping_interval_s} * 1'000'000;
  }
  return true;
}

Fed WsHeart::resume(std::string& out) {
  Fed fed;
  fed.consumed = 0;
  if (state_ == State::closed) {
    fed.next = Fed::Next::close;
    return fed;
  }
  uint64_t now = clock_();
  if (partial() && now - stalled_since_us_ >= kStallUs) {
    fail(out, kWsPolicy, "message timed out");
    fed.next = Fed::Next::close;
    return fed;
  }
  if (state_ == State::open && !keep_alive(out, now)) {
    fed.next = Fed::Next::close;
    return fed;
  }
  if (state_ == State::open && shaping_ != nullptr) shaping_->release(out, now, false);
  fed.wake_us = wake_after(now);
  return fed;
}

void WsHeart::goodbye(std::string& out) {
  if (state_ != State::open) return;
  if (shaping_ != nullptr) shaping_->release(out, 0, true);  // the echoes owed, then the close
  send_close(out, table_.persona().going_away, {});
  state_ = State::closing;
}

size_t WsHeart::take_header(const uint8_t* p, size_t len) {
  if (header_length_ == 0) {
    WsHeaderRead r = read_ws_header(p, len, frame_);
    if (r == WsHeaderRead::done) return frame_.size;
    if (r == WsHeaderRead::malformed) {
      bad_length_ = true;  // admit() fails it
      return len;
    }
    memcpy(header_, p, len);  // less than kWsMaxHeader bytes
    header_length_ = static_cast<uint8_t>(len);
    return 0;
  }
  // The header began in an earlier read: complete it from this one.
  size_t had = header_length_;
  size_t add = std::min(len, kWsMaxHeader - had);
  memcpy(header_ + had, p, add);
  WsHeaderRead r = read_ws_header(header_, had + add, frame_);
  if (r == WsHeaderRead::more) {
    header_length_ = static_cast<uint8_t>(had + add);
    return 0;
  }
  header_length_ = 0;
  if (r == WsHeaderRead::malformed) {
    bad_length_ = true;
    return add;
  }
  return frame_.size - had;
}

bool WsHeart::admit(std::string& out) {
  const WsFrameHeader& f = frame_;
  // Section 5.2: a length in more bytes than it needs, or over 2^63.
  if (bad_length_) return fail(out, kWsProtocolError, "length not in its minimal form");
  // Section 5.1: "The server MUST close the connection upon receiving a
  // frame that is not masked" (and one whose length is not minimal, 5.2).
  if (!f.masked) return fail(out, kWsProtocolError, "frame not masked");
  // Section 5.2: RSV bits only as an agreed extension defines them. RFC
  // 7692 section 6: RSV1 marks a compressed message, on its first frame only.
  bool compressed_start = deflate_ != nullptr && f.rsv == 4 &&
                          (f.opcode == kText || f.opcode == static_cast<uint8_t>(WsOpcode::binary));
  if (f.rsv != 0 && !compressed_start) return fail(out, kWsProtocolError, "reserved bit set");
  if (ws_is_control(f.opcode)) {
    if (f.opcode > kPong) return fail(out, kWsProtocolError, "reserved opcode");
    // Section 5.5: at most 125 bytes, never fragmented.
    if (f.length > kWsMaxControl || !f.fin)
      return fail(out, kWsProtocolError, "control frame too long or fragmented");
    control_length_ = 0;
    return true;
  }
  if (f.opcode > static_cast<uint8_t>(WsOpcode::binary))
    return fail(out, kWsProtocolError, "reserved opcode");
  if (f.opcode == 0 && !in_message()) return fail(out, kWsProtocolError, "nothing to continue");
  if (f.opcode != 0 && in_message()) return fail(out, kWsProtocolError, "message not finished");
  uint64_t so_far = in_message() ? message_.size() : 0;
  const WebSocketPersona& ws = table_.persona();
  if (f.length > ws.max_message - so_far) return fail(out, kWsTooBig, ws.too_big_reason);
  return true;
}

bool WsHeart::echo_whole(const uint8_t* p, std::string& out) {
  uint64_t n = frame_.length;
  if (state_ != State::open) return true;  // after our close: read, not answered
  size_t mark = out.size();
  append_ws_header(out, frame_.opcode, n);
  size_t at = out.size();
  out.resize(at + n);
  auto* to = reinterpret_cast<uint8_t*>(out.data() + at);
  unmask_ws(p, to, n, frame_.mask, 0);
  if (frame_.opcode == kText) {
    utf8_.reset();
    if (!utf8_.feed(to, n) || !utf8_.complete()) {
      out.resize(mark);
      return fail(out, kWsInvalidData, "invalid UTF-8");
    }
  }
  sink_.ws_echoed(n, n);
  bytes_out_ += n;
  return true;
}

bool WsHeart::take_payload(const uint8_t* p, size_t n, std::string& out) {
  if (ws_is_control(frame_.opcode)) {
    unmask_ws(p, control_ + frame_done_, n, frame_.mask, frame_done_);
    return true;
  }
  size_t at = message_.size();
  message_.resize(at + n);
  auto* to = reinterpret_cast<uint8_t*>(message_.data() + at);
  unmask_ws(p, to, n, frame_.mask, frame_done_);
  // Section 8.1: invalid UTF-8 fails the connection where it is found.
  if (message_opcode_ == kText && !compressed_ && !utf8_.feed(to, n))
    return fail(out, kWsInvalidData, "invalid UTF-8");
  return true;
}

bool WsHeart::end_frame(std::string& out) {
  in_frame_ = false;
  if (ws_is_control(frame_.opcode)) return end_control(out);
  if (!frame_.fin) return true;
  if (compressed_) return end_compressed(out);
  if (message_opcode_ == kText && !utf8_.complete())
    return fail(out, kWsInvalidData, "invalid UTF-8");
  if (state_ == State::open) {
    answer(out, message_opcode_, message_.data(), message_.size());
  }
  message_opcode_ = 0;
  message_.clear();
  trim();
  return true;
}

bool WsHeart::end_control(std::string& out) {
  size_t n = static_cast<size_t>(frame_.length);
  const char* payload = reinterpret_cast<const char*>(control_);
  if (frame_.opcode == kPing) {
    // Section 5.5.2: a Pong with the Ping's payload, as soon as practical.
    if (state_ == State::open) echo(out, kPong, payload, n);
    return true;
  }
  if (frame_.opcode == kPong) {
    // The answer to our ping, if it is one; any other is unsolicited.
    if (pong_due_us_ != 0 && n == 4 &&
        static_cast<uint32_t>(control_[0] << 24 | control_[1] << 16 | control_[2] << 8 |
                              control_[3]) == pings_)
      pong_due_us_ = 0;
    return true;
  }
  // Close (section 5.5.1): a code of 2 bytes, then a UTF-8 reason.
  uint16_t code = 0;
  if (n == 1) return fail(out, kWsProtocolError, "close frame of 1 byte");
  if (n >= 2) {
    code = static_cast<uint16_t>(control_[0] << 8 | control_[1]);
    if (!ws_close_code_valid(code)) return fail(out, kWsProtocolError, "invalid close code");
    Utf8Check reason;
    if (!reason.feed(control_ + 2, n - 2) || !reason.complete())
      return fail(out, kWsInvalidData, "invalid UTF-8 in close reason");
  }
  sink_.ws_close_received();
  client_closed_ = true;
  // The client began the close: echo its code, as every framework here
  // does, after the echoes still owed to it.
  if (state_ == State::open && shaping_ != nullptr) shaping_->release(out, 0, true);
  if (state_ == State::open) send_close(out, code, {});
  state_ = State::closed;
  return true;
}

bool WsHeart::end_compressed(std::string& out) {
  const WebSocketPersona& ws = table_.persona();
  // RFC 7692 section 7.2.3.6: even an empty message compresses to a byte.
  if (message_.empty()) return fail(out, kWsInvalidData, "invalid compressed data");
  switch (deflate_->inflate(message_, ws.max_message, scratch_)) {
    case WsDeflate::Inflated::corrupt:
      return fail(out, kWsInvalidData, "invalid compressed data");
    case WsDeflate::Inflated::too_big:
      return fail(out, kWsTooBig, ws.too_big_reason);
    case WsDeflate::Inflated::ok:
      break;
  }
  Utf8Check text;
  const auto* bytes = reinterpret_cast<const uint8_t*>(scratch_.data());
  if (message_opcode_ == kText && (!text.feed(bytes, scratch_.size()) || !text.complete()))
    return fail(out, kWsInvalidData, "invalid UTF-8");
  if (state_ == State::open) {
    // The echo compresses what came in inflated; message_ holds it meanwhile.
    message_.swap(scratch_);
    answer(out, message_opcode_, message_.data(), message_.size());
  }
  message_opcode_ = 0;
  compressed_ = false;
  trim();
  return true;
}

// A message gathered in pieces, inflated or compressed keeps its buffers
// up to kKeptMessage between messages; larger ones are freed.
void WsHeart::trim() {
  if (message_.capacity() > kKeptMessage) std::string().swap(message_);
  if (scratch_.capacity() > kKeptMessage) std::string().swap(scratch_);
}

void WsHeart::answer(std::string& out, uint8_t opcode, const char* data, uint64_t length) {
  uint64_t in = length;
  if (shaping_ != nullptr) {
    Decision d = decide_ws_message(*dice_, shaping_->shape);
    if (d.sized) {
      // `size`: a message of that many bytes of the shared pattern (ASCII,
      // so valid text too).
      std::string& sized = shaping_->sized;
      sized.clear();
      for (uint64_t left = d.size; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, kPatternBytes));
        sized.append(pattern_bytes(), n);
        left -= n;
      }
      data = sized.data();
      length = sized.size();
    }
    if (d.delay_us > 0 || !shaping_->due.empty()) {
      // Delayed, or behind one that is: framed now, sent when due. The
      // heart reads on while echoes wait, so what waits is bounded.
      if (shaping_->waiting.size() + length > WsShaping::kMaxWaiting) {
        fail(out, kWsPolicy, "too many echoes waiting");
        return;
      }
      echo(shaping_->waiting, opcode, data, length);
      uint64_t due = std::max(clock_() + d.delay_us, shaping_->last_due_us);
      shaping_->last_due_us = due;
      shaping_->due.emplace_back(due, shaping_->waiting.size());
      sink_.ws_echoed(in, length);
      bytes_out_ += length;
      return;
    }
  }
  echo(out, opcode, data, length);
  sink_.ws_echoed(in, length);
  bytes_out_ += length;
}

void WsHeart::echo(std::string& out, uint8_t opcode, const char* data, uint64_t length) {
  if (deflate_ != nullptr && !ws_is_control(opcode)) {
    // Every message of a connection that agreed permessage-deflate goes out
    // compressed, as aiohttp, uvicorn and Tomcat send them.
    scratch_.clear();
    deflate_->deflate({data, static_cast<size_t>(length)}, scratch_);
    append_ws_header(out, opcode, scratch_.size(), true);
    out.append(scratch_);
    return;
  }
  append_ws_header(out, opcode, length);
  out.append(data, static_cast<size_t>(length));
}

void WsHeart::send_close(std::string& out, uint16_t code, std::string_view reason) {
  if (code == 0) {
    append_ws_header(out, kClose, 0);
  } else {
    reason = reason.substr(0, kWsMaxControl - 2);
    append_ws_header(out, kClose, 2 + reason.size());
    out.push_back(static_cast<char>(code >> 8));
    out.push_back(static_cast<char>(code & 0xff));
    out.append(reason);
  }
  close_code_ = code;
  sink_.ws_close_sent(code);
}

bool WsHeart::fail(std::string& out, uint16_t code, std::string_view reason) {
  if (state_ == State::open) send_close(out, code, reason);
  state_ = State::closed;
  return false;
}

}  // namespace hello
