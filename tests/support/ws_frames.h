// WebSocket frames for the tests, made and read by wslay (Debian's
// libwslay, by nghttp2's author), an implementation of RFC 6455's framing
// that shares nothing with the server's: client frames masked with RFC
// 6455 section 5.7's key, and the server's frames read back.
#pragma once

#include <wslay/wslay.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hello::test {

struct WsFrame {
  uint8_t opcode = 0;
  bool fin = false;
  uint8_t rsv = 0;
  bool masked = false;
  std::string payload;
  // A close frame's code (0: none).
  uint16_t code() const {
    return payload.size() >= 2 ? static_cast<uint16_t>(static_cast<uint8_t>(payload[0]) << 8 |
                                                       static_cast<uint8_t>(payload[1]))
                               : 0;
  }
  std::string reason() const { return payload.size() > 2 ? payload.substr(2) : std::string(); }
};

inline constexpr uint8_t kWsContinuation = 0x0;
inline constexpr uint8_t kWsTextFrame = 0x1;
inline constexpr uint8_t kWsBinaryFrame = 0x2;
inline constexpr uint8_t kWsCloseFrame = 0x8;
inline constexpr uint8_t kWsPingFrame = 0x9;
inline constexpr uint8_t kWsPongFrame = 0xA;

namespace ws_detail {

struct Reader {
  std::string_view in;
};

inline ssize_t recv_from(uint8_t* buf, size_t len, int, void* user) {
  auto* r = static_cast<Reader*>(user);
  size_t n = std::min(len, r->in.size());
  memcpy(buf, r->in.data(), n);
  r->in.remove_prefix(n);
  return n > 0 ? static_cast<ssize_t>(n) : -1;
}

// RFC 6455 section 5.7's masking key.
inline int rfc_mask(uint8_t* buf, size_t len, void*) {
  static constexpr uint8_t kKey[4] = {0x37, 0xfa, 0x21, 0x3d};
  for (size_t i = 0; i < len; ++i) buf[i] = kKey[i % 4];
  return 0;
}

inline ssize_t send_to(const uint8_t* data, size_t len, int, void* user) {
  static_cast<std::string*>(user)->append(reinterpret_cast<const char*>(data), len);
  return static_cast<ssize_t>(len);
}

}  // namespace ws_detail

// A client's frame: masked unless `masked` is false.
inline std::string client_frame(uint8_t opcode, std::string_view payload, bool fin = true,
                                uint8_t rsv = 0, bool masked = true) {
  std::string out;
  wslay_frame_callbacks callbacks{ws_detail::send_to, ws_detail::recv_from, ws_detail::rfc_mask};
  wslay_frame_context_ptr ctx = nullptr;
  wslay_frame_context_init(&ctx, &callbacks, &out);
  wslay_frame_iocb iocb{};
  iocb.fin = fin ? 1 : 0;
  iocb.rsv = rsv;
  iocb.opcode = opcode;
  iocb.mask = masked ? 1 : 0;
  iocb.payload_length = payload.size();
  iocb.data = reinterpret_cast<const uint8_t*>(payload.data());
  iocb.data_length = payload.size();
  // wslay refuses a control frame over 125 bytes; the tests need one, so
  // such a frame is made as a text frame and its opcode put back.
  bool long_control = (opcode & 0x8) != 0 && payload.size() > 125;
  if (long_control) iocb.opcode = 0x1;
  // send_to() takes every byte, so one call sends the whole frame.
  wslay_frame_send(ctx, &iocb);
  wslay_frame_context_free(ctx);
  if (long_control && !out.empty()) out[0] = static_cast<char>((out[0] & 0xf0) | opcode);
  return out;
}

// A close frame's payload: the code, then the reason.
inline std::string close_payload(uint16_t code, std::string_view reason = {}) {
  std::string p{static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
  return p + std::string(reason);
}

// The server's frames in `bytes`, as far as whole; `rest` gets what is left.
inline std::vector<WsFrame> server_frames(std::string_view bytes, bool* malformed = nullptr) {
  ws_detail::Reader reader{bytes};
  wslay_frame_callbacks callbacks{ws_detail::send_to, ws_detail::recv_from, ws_detail::rfc_mask};
  wslay_frame_context_ptr ctx = nullptr;
  wslay_frame_context_init(&ctx, &callbacks, &reader);
  std::vector<WsFrame> frames;
  bool in_frame = false;
  uint64_t got = 0;
  if (malformed != nullptr) *malformed = false;
  for (int i = 0; i < 1'000'000; ++i) {
    wslay_frame_iocb iocb{};
    ssize_t r = wslay_frame_recv(ctx, &iocb);
    if (r < 0) {
      if (r != WSLAY_ERR_WANT_READ && malformed != nullptr) *malformed = true;
      break;
    }
    if (!in_frame) {
      frames.push_back({iocb.opcode, iocb.fin != 0, iocb.rsv, iocb.mask != 0, {}});
      got = 0;
      in_frame = true;
    }
    frames.back().payload.append(reinterpret_cast<const char*>(iocb.data), iocb.data_length);
    got += iocb.data_length;
    if (got == iocb.payload_length) in_frame = false;
  }
  wslay_frame_context_free(ctx);
  if (in_frame) frames.pop_back();  // not whole
  return frames;
}

}  // namespace hello::test
