// libFuzzer target over the WebSocket heart (websocket/ws_heart.h): a
// connection that upgraded with RFC 6455's example key, then arbitrary
// bytes as the client's frames, fed in pieces whose sizes the input
// chooses, so that headers, masks, payloads and UTF-8 characters are split
// between reads; goodbye() comes after a piece the input chooses, or at the
// end. The persona's largest message is 4096 bytes, so 1009 is in reach.
// Built and run by scripts/fuzz --target ws with AddressSanitizer and
// UndefinedBehaviorSanitizer.
//
// Input: byte 0's bits 0-2 are k, the number of bytes after it that are
// piece sizes, used in turn (a size of 0: the rest at once; k = 0: all at
// once); bit 3 says goodbye() after piece number bits 4-7, else after the
// last. The rest is what the client sends.
//
// What is checked besides memory and undefined behaviour: every output is
// whole, unmasked, minimally sized server frames (FIN set, RSV 0, opcodes
// 1, 2, 8 and 10: this persona never pings), control payloads of at most
// 125 bytes, text valid UTF-8, at most one close frame and nothing after
// it. A model of RFC 6455 read from the same bytes (below, sharing no code
// with the heart) says which echoes and pongs come, from which read, and
// where and with which code the connection fails or the client's close is
// echoed; while the heart is open it must have answered exactly what the
// model completed, and asked to be woken exactly when a frame or message
// is unfinished. After Fed::Next::close every feed() and resume() answers
// close and appends nothing; goodbye() appends one close frame with 1001
// when the heart is open and nothing otherwise, and nothing is sent after it.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "observe/accounting.h"
#include "persona/websocket.h"
#include "persona/ws_table.h"
#include "websocket/ws_heart.h"

namespace {

using namespace hello;

constexpr uint64_t kMaxMessage = 4096;
constexpr uint16_t kGoingAway = 1001;

constexpr WebSocketPersona kWs{
    .path = "/ws",
    .switching =
        "HTTP/1.1 101 Switching Protocols\r\nDate: {date}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extensions}\r\n",
    .max_message = kMaxMessage,
    .too_big_reason = "message too big",
    .going_away = kGoingAway,
};

struct World {
  WsTable table{kWs};
  WorkerStats stats;
  Accounting sink{stats};
};

// RFC 3629's UTF-8, a byte at a time: false at the first byte after which
// no continuation could make the text valid.
struct Utf8 {
  int need = 0;
  uint8_t lo = 0x80, hi = 0xbf;
  bool byte(uint8_t c) {
    if (need > 0) {
      if (c < lo || c > hi) return false;
      lo = 0x80;
      hi = 0xbf;
      --need;
      return true;
    }
    if (c < 0x80) return true;
    // Unicode's table 3-7: the second byte's range after each lead byte.
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c == 0xe0) {
      need = 2, lo = 0xa0;
    } else if (c == 0xed) {
      need = 2, hi = 0x9f;
    } else if (c >= 0xe1 && c <= 0xef) {
      need = 2;
    } else if (c == 0xf0) {
      need = 3, lo = 0x90;
    } else if (c == 0xf4) {
      need = 3, hi = 0x8f;
    } else if (c >= 0xf1 && c <= 0xf3) {
      need = 3;
    } else {
      return false;
    }
    return true;
  }
};

bool valid_utf8(std::string_view s) {
  Utf8 u;
  for (char c : s)
    if (!u.byte(static_cast<uint8_t>(c))) return false;
  return u.need == 0;
}

// What the heart must answer to `in`, by RFC 6455 alone.
struct Model {
  struct Answer {
    uint8_t opcode;  // 1 or 2: an echo; 10: a pong
    std::string payload;
    size_t end;  // the offset just after the frame that completes it
  };
  std::vector<Answer> answers;
  // Offsets at which no frame and no message is unfinished.
  std::vector<bool> idle;
  // Where the connection ends: the offset of the byte that decides it, and
  // the close frame's code (0: an empty close echoed).
  bool ends = false;
  size_t at = 0;
  uint16_t code = 0;
  bool client_close = false;  // the client's close, echoed

  void end(size_t where, uint16_t with) {
    ends = true;
    at = where;
    code = with;
  }
  explicit Model(std::string_view in) : idle(in.size() + 1, false) { read(in); }

 private:
  void read(std::string_view in);
};

void Model::read(std::string_view in) {
  const auto* b = reinterpret_cast<const uint8_t*>(in.data());
  size_t pos = 0;
  bool in_message = false;
  uint8_t message_opcode = 0;
  std::string message;
  Utf8 utf8;
  idle[0] = true;
  for (;;) {
    size_t start = pos, avail = in.size() - pos;
    if (avail < 2) return;
    bool fin = (b[pos] & 0x80) != 0;
    uint8_t rsv = (b[pos] >> 4) & 7, opcode = b[pos] & 0xf;
    bool masked = (b[pos + 1] & 0x80) != 0;
    uint64_t length = b[pos + 1] & 0x7f;
    size_t head = 2;
    if (length == 126) {
      if (avail < 4) return;
      length = uint64_t{b[pos + 2]} << 8 | b[pos + 3];
      head = 4;
      if (length < 126) return end(start + 3, kWsProtocolError);
    } else if (length == 127) {
      if (avail < 10) return;
      length = 0;
      for (int i = 0; i < 8; ++i) length = length << 8 | b[pos + 2 + i];
      head = 10;
      if (length >> 63 || length < 0x10000) return end(start + 9, kWsProtocolError);
    }
    uint8_t mask[4] = {};
    if (masked) {
      if (avail < head + 4) return;
      memcpy(mask, b + pos + head, 4);
      head += 4;
    }
    pos += head;
    size_t decided = pos - 1;
    bool control = (opcode & 8) != 0;
    if (!masked || rsv != 0) return end(decided, kWsProtocolError);
    if (control) {
      if (opcode > 10 || length > 125 || !fin) return end(decided, kWsProtocolError);
    } else {
      if (opcode > 2) return end(decided, kWsProtocolError);
      if ((opcode == 0) != in_message) return end(decided, kWsProtocolError);
      if (length > kMaxMessage - (in_message ? message.size() : 0)) return end(decided, kWsTooBig);
    }
    avail = in.size() - pos;
    size_t have = static_cast<size_t>(std::min<uint64_t>(avail, length));
    std::string payload(have, '\0');
    for (size_t i = 0; i < have; ++i) payload[i] = static_cast<char>(b[pos + i] ^ mask[i % 4]);
    if (control) {
      if (have < length) return;
      pos += have;
      if (opcode == 9) answers.push_back({10, payload, pos});
      if (opcode == 8) {
        if (have == 1) return end(pos - 1, kWsProtocolError);
        uint16_t code = 0;
        if (have >= 2) {
          code = static_cast<uint16_t>(uint8_t(payload[0]) << 8 | uint8_t(payload[1]));
          bool known = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
                       (code >= 3000 && code <= 4999);
          if (!known) return end(pos - 1, kWsProtocolError);
          if (!valid_utf8(std::string_view(payload).substr(2))) return end(pos - 1, kWsInvalidData);
        }
        client_close = true;
        return end(pos - 1, code);
      }
      idle[pos] = !in_message;
      continue;
    }
    if (!in_message) {
      in_message = true;
      message_opcode = opcode;
      message.clear();
      utf8 = Utf8{};
    }
    for (size_t i = 0; i < have; ++i) {
      if (message_opcode == 1 && !utf8.byte(static_cast<uint8_t>(payload[i])))
        return end(pos + i, kWsInvalidData);
    }
    message += payload;
    if (have < length) return;
    pos += have;
    if (!fin) continue;
    if (message_opcode == 1 && utf8.need != 0) return end(pos - 1, kWsInvalidData);
    answers.push_back({message_opcode, message, pos});
    in_message = false;
    idle[pos] = true;
  }
}

struct ServerFrame {
  uint8_t opcode;
  std::string_view payload;
};

// The server frames `out` is made of, each checked on its own.
std::vector<ServerFrame> server_frames(std::string_view out) {
  std::vector<ServerFrame> frames;
  const auto* b = reinterpret_cast<const uint8_t*>(out.data());
  size_t pos = 0;
  while (pos < out.size()) {
    HELLO_CHECK(out.size() - pos >= 2);
    HELLO_CHECK((b[pos] & 0x80) != 0);  // FIN
    HELLO_CHECK((b[pos] & 0x70) == 0);  // RSV1-3
    uint8_t opcode = b[pos] & 0xf;
    HELLO_CHECK(opcode == 1 || opcode == 2 || opcode == 8 || opcode == 10);
    HELLO_CHECK((b[pos + 1] & 0x80) == 0);  // a server never masks
    uint64_t length = b[pos + 1] & 0x7f;
    size_t head = 2;
    if (length == 126) {
      HELLO_CHECK(out.size() - pos >= 4);
      length = uint64_t{b[pos + 2]} << 8 | b[pos + 3];
      head = 4;
      HELLO_CHECK(length >= 126);
    } else if (length == 127) {
      HELLO_CHECK(out.size() - pos >= 10);
      length = 0;
      for (int i = 0; i < 8; ++i) length = length << 8 | b[pos + 2 + i];
      head = 10;
      HELLO_CHECK(length >= 0x10000 && (length >> 63) == 0);
    }
    pos += head;
    HELLO_CHECK(length <= out.size() - pos);
    std::string_view payload = out.substr(pos, static_cast<size_t>(length));
    pos += payload.size();
    if (opcode >= 8) HELLO_CHECK(payload.size() <= kWsMaxControl);
    if (opcode == 1) HELLO_CHECK(valid_utf8(payload));
    if (opcode == 8) {
      HELLO_CHECK(payload.size() != 1);
      HELLO_CHECK(pos == out.size());  // the close frame is the last
      if (payload.size() >= 2) HELLO_CHECK(valid_utf8(payload.substr(2)));
    }
    frames.push_back({opcode, payload});
  }
  return frames;
}

uint16_t close_code(const ServerFrame& f) {
  if (f.payload.size() < 2) return 0;
  return static_cast<uint16_t>(uint8_t(f.payload[0]) << 8 | uint8_t(f.payload[1]));
}

// One input's run: the heart, the model, and what has happened so far.
struct Run {
  WsHeart& heart;
  const Model& model;
  std::string out;
  bool closed = false;        // feed() answered close
  bool said_goodbye = false;  // goodbye() was called while the heart was open
  bool sent_close = false;    // a close frame went out
  size_t answered = 0;        // model.answers echoed so far

  void goodbye() {
    out.clear();
    bool open = heart.live();
    HELLO_CHECK(open == (!closed && !said_goodbye));
    heart.goodbye(out);
    if (!open) {
      HELLO_CHECK(out.empty());
      return;
    }
    std::vector<ServerFrame> frames = server_frames(out);
    HELLO_CHECK(frames.size() == 1 && frames[0].opcode == 8);
    HELLO_CHECK(frames[0].payload.size() == 2 && close_code(frames[0]) == kGoingAway);
    HELLO_CHECK(!sent_close);
    sent_close = true;
    said_goodbye = true;
    HELLO_CHECK(!heart.live());
  }

  // The connection ends in this read, as the model says it must.
  void check_end(const Fed& fed, const std::vector<ServerFrame>& frames, size_t at) {
    HELLO_CHECK(fed.next == Fed::Next::close);
    HELLO_CHECK(!frames.empty() && frames.back().opcode == 8);
    const ServerFrame& close = frames.back();
    if (model.code == 0) {
      HELLO_CHECK(close.payload.empty());
    } else {
      HELLO_CHECK(close_code(close) == model.code);
      // A close the client began is echoed with its code alone.
      if (model.client_close) HELLO_CHECK(close.payload.size() == 2);
    }
    if (model.client_close) HELLO_CHECK(fed.clean_end == (model.at + 1 == at));
    HELLO_CHECK(answered == model.answers.size());
    sent_close = true;
    closed = true;
    HELLO_CHECK(!heart.live());
  }

  // What one feed() of the bytes [begin, at) sent, while the heart is open.
  void check_open_read(const Fed& fed, size_t begin, size_t at) {
    std::vector<ServerFrame> frames = server_frames(out);
    for (const ServerFrame& f : frames) {
      if (f.opcode == 8) continue;
      // An echo or a pong, the model's next, of a frame this read ended.
      HELLO_CHECK(answered < model.answers.size());
      const Model::Answer& want = model.answers[answered++];
      HELLO_CHECK(f.opcode == want.opcode && f.payload == want.payload);
      HELLO_CHECK(want.end > begin && want.end <= at);
    }
    HELLO_CHECK(!(model.ends && model.at < begin));  // it would have ended before
    if (model.ends && model.at >= begin && model.at < at) {
      check_end(fed, frames, at);
      return;
    }
    HELLO_CHECK(fed.next == Fed::Next::read);
    for (const ServerFrame& f : frames) HELLO_CHECK(f.opcode != 8);
    // Everything the model finished by here, and nothing else.
    HELLO_CHECK(answered == model.answers.size() || model.answers[answered].end > at);
    HELLO_CHECK(heart.live());
    HELLO_CHECK((fed.wake_us == Fed::kNever) == model.idle[at]);
    if (fed.wake_us != Fed::kNever) HELLO_CHECK(fed.wake_us == WsHeart::kStallUs);
  }

  // One feed() of `n` bytes at `begin`.
  void feed(std::string_view in, size_t begin, size_t n) {
    out.clear();
    Fed fed = heart.feed(in.data() + begin, n, out);
    HELLO_CHECK(fed.next != Fed::Next::later);
    HELLO_CHECK(fed.consumed == n);
    HELLO_CHECK(!fed.upgrade && !fed.streams());
    if (closed || said_goodbye) {
      // Nothing is sent after our close or the end; the end stays the end.
      HELLO_CHECK(out.empty());
      if (closed) HELLO_CHECK(fed.next == Fed::Next::close);
      closed = closed || fed.next == Fed::Next::close;
      HELLO_CHECK(!heart.live());
    } else {
      check_open_read(fed, begin, begin + n);
    }
    // No time passes that could stall a message: resume() sends nothing.
    out.clear();
    Fed again = heart.resume(out);
    HELLO_CHECK(out.empty());
    HELLO_CHECK((again.next == Fed::Next::close) == closed);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World;
  if (size == 0) return 0;
  uint8_t control = data[0];
  size_t k = std::min<size_t>(control & 7, size - 1);
  const uint8_t* pieces = data + 1;
  bool goodbye_early = (control & 8) != 0;
  size_t goodbye_after = control >> 4;
  std::string_view in(reinterpret_cast<const char*>(data + 1 + k), size - 1 - k);
  Model model(in);

  WsHeart heart(world->table, world->sink);
  Run run{heart, model, {}};
  Upgrade u;
  u.to = Upgrade::To::websocket;
  u.ws_key = "dGhlIHNhbXBsZSBub25jZQ==";
  Fed up = heart.upgraded(u, run.out);
  HELLO_CHECK(up.next == Fed::Next::read);
  HELLO_CHECK(run.out.starts_with("HTTP/1.1 101 ") && run.out.ends_with("\r\n\r\n"));
  HELLO_CHECK(run.out.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") !=
              std::string::npos);
  HELLO_CHECK(heart.live());

  size_t at = 0;
  for (size_t piece = 0; at < in.size(); ++piece) {
    size_t n = k == 0 ? 0 : pieces[piece % k];
    if (n == 0 || n > in.size() - at) n = in.size() - at;
    run.feed(in, at, n);
    at += n;
    if (goodbye_early && piece == goodbye_after) run.goodbye();
  }
  if (!run.said_goodbye) run.goodbye();
  // A second goodbye, and input after everything: nothing more goes out.
  run.out.clear();
  heart.goodbye(run.out);
  HELLO_CHECK(run.out.empty());
  Fed late = heart.feed("\x81", 1, run.out);
  HELLO_CHECK(run.out.empty());
  if (run.closed) HELLO_CHECK(late.next == Fed::Next::close);
  heart.release();
  return 0;
}
