// HTTP/2's frame layout (RFC 9113 section 4): the nine-byte frame header,
// the frame types, flags, error codes and settings this server reads and
// writes. Only names and the header's bytes; what each frame means to a
// connection is in http2/h2_connection.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hello::h2 {

// The client's connection preface (RFC 9113 section 3.4).
inline constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr size_t kPrefaceLength = sizeof kPreface - 1;

inline constexpr size_t kFrameHead = 9;
// SETTINGS_MAX_FRAME_SIZE's initial value: the largest frame either side
// sends or takes (neither advertises more).
inline constexpr uint32_t kMaxFrame = 16384;
inline constexpr int64_t kMaxWindow = 0x7fffffff;
inline constexpr int32_t kInitialWindow = 65535;
inline constexpr uint32_t kDefaultTableSize = 4096;

enum Type : uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoaway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};

enum Flag : uint8_t {
  kEndStream = 0x1,
  kAck = 0x1,
  kEndHeaders = 0x4,
  kPadded = 0x8,
  kPriorityFlag = 0x20,
};

enum Error : uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kSettingsTimeout = 0x4,
  kStreamClosed = 0x5,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
  kConnectError = 0xa,
  kEnhanceYourCalm = 0xb,
  kInadequateSecurity = 0xc,
  kHttp11Required = 0xd,
};

enum Setting : uint16_t {
  kHeaderTableSize = 0x1,
  kEnablePush = 0x2,
  kMaxConcurrentStreams = 0x3,
  kInitialWindowSize = 0x4,
  kMaxFrameSize = 0x5,
  kMaxHeaderListSize = 0x6,
  kEnableConnectProtocol = 0x8,
  kNoRfc7540Priorities = 0x9,
};

inline uint32_t read24(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
}
inline uint32_t read32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | p[3];
}
inline void write32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// A frame's header appended to `out`; its payload follows from the caller.
inline void append_head(std::string& out, size_t length, uint8_t type, uint8_t flags,
                        uint32_t stream) {
  uint8_t h[kFrameHead] = {static_cast<uint8_t>(length >> 16), static_cast<uint8_t>(length >> 8),
                           static_cast<uint8_t>(length), type, flags};
  write32(h + 5, stream & 0x7fffffff);
  out.append(reinterpret_cast<const char*>(h), sizeof h);
}

// A whole frame of `length` bytes of `payload`.
inline void append_frame(std::string& out, uint8_t type, uint8_t flags, uint32_t stream,
                         const uint8_t* payload, size_t length) {
  append_head(out, length, type, flags, stream);
  out.append(reinterpret_cast<const char*>(payload), length);
}

}  // namespace hello::h2
