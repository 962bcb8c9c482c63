// Raw HTTP/2 frames for the tests that send what no well-behaved client
// (nghttp2's included) would: frames built byte by byte, header blocks in
// HPACK's plainest forms (static-table indices and literals without
// indexing), and the server's answer split back into frames.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hello::test::h2raw {

inline constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum : uint8_t {
  kData = 0,
  kHeaders = 1,
  kPriority = 2,
  kRstStream = 3,
  kSettings = 4,
  kPushPromise = 5,
  kPing = 6,
  kGoaway = 7,
  kWindowUpdate = 8,
  kContinuation = 9,
};
enum : uint8_t { kEndStream = 0x1, kAck = 0x1, kEndHeaders = 0x4, kPadded = 0x8 };
// RFC 9113 section 7's error codes.
enum : uint32_t {
  kNoError = 0,
  kProtocolError = 1,
  kInternalError = 2,
  kFlowControlError = 3,
  kStreamClosed = 5,
  kFrameSizeError = 6,
  kRefusedStream = 7,
  kCancel = 8,
  kCompressionError = 9,
  kEnhanceYourCalm = 11,
};

inline std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// One frame: the 9-byte header (length, type, flags, stream) and `payload`.
inline std::string frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
  size_t n = payload.size();
  std::string f = {static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n),
                   static_cast<char>(type), static_cast<char>(flags)};
  f += be32(stream);
  f += payload;
  return f;
}

inline std::string settings(const std::vector<std::pair<uint16_t, uint32_t>>& entries = {}) {
  std::string p;
  for (auto [id, value] : entries) {
    p += static_cast<char>(id >> 8);
    p += static_cast<char>(id);
    p += be32(value);
  }
  return frame(kSettings, 0, 0, p);
}
inline std::string settings_ack() {
  return frame(kSettings, kAck, 0, "");
}
inline std::string ping(uint8_t flags = 0) {
  return frame(kPing, flags, 0, std::string(8, 'p'));
}
inline std::string window_update(uint32_t stream, uint32_t increment) {
  return frame(kWindowUpdate, 0, stream, be32(increment));
}
inline std::string rst_stream(uint32_t stream, uint32_t code) {
  return frame(kRstStream, 0, stream, be32(code));
}
inline std::string priority(uint32_t stream, uint32_t depends_on) {
  return frame(kPriority, 0, stream, be32(depends_on) + std::string(1, '\x0f'));
}
inline std::string data(uint32_t stream, std::string_view bytes, uint8_t flags = 0) {
  return frame(kData, flags, stream, bytes);
}

// HPACK's integer with an N-bit prefix (RFC 7541 section 5.1), the
// prefix's other bits `high`.
inline std::string hpack_int(uint8_t high, int prefix_bits, size_t v) {
  size_t max = (1u << prefix_bits) - 1;
  if (v < max) return std::string(1, static_cast<char>(high | v));
  std::string b(1, static_cast<char>(high | max));
  for (v -= max; v >= 128; v /= 128) b += static_cast<char>(0x80 | (v % 128));
  b += static_cast<char>(v);
  return b;
}

// A field as a literal without indexing: a new name (`name` as given, any
// case), or a static-table name index.
inline std::string literal(std::string_view name, std::string_view value) {
  std::string b(1, '\0');
  b += hpack_int(0, 7, name.size());
  b += name;
  b += hpack_int(0, 7, value.size());
  b += value;
  return b;
}
inline std::string literal(uint8_t name_index, std::string_view value) {
  std::string b = hpack_int(0, 4, name_index);  // 0000 and the index
  b += hpack_int(0, 7, value.size());
  b += value;
  return b;
}

// :method (static 2 GET, 3 POST, 4... as literals), :scheme http (6),
// :authority, :path: a request's block, then `extra` fields.
inline std::string request_block(std::string_view method = "GET", std::string_view path = "/",
                                 std::string_view extra = {}) {
  std::string b = method == "GET" ? std::string("\x82") : literal(2, method);
  b += "\x86";
  b += literal(1, "127.0.0.1");
  b += path == "/" ? std::string("\x84") : literal(4, path);
  b += extra;
  return b;
}

inline std::string headers(uint32_t stream, std::string_view block,
                           uint8_t flags = kEndHeaders | kEndStream) {
  return frame(kHeaders, flags, stream, block);
}
inline std::string get(uint32_t stream, std::string_view path = "/") {
  return headers(stream, request_block("GET", path));
}
// A POST's HEADERS that leaves the stream open for DATA.
inline std::string open_post(uint32_t stream, std::string_view extra = {}) {
  return headers(stream, request_block("POST", "/", extra), kEndHeaders);
}

struct Frame {
  uint8_t type;
  uint8_t flags;
  uint32_t stream;
  std::string payload;
};

inline uint32_t read32(std::string_view p) {
  return static_cast<uint32_t>(static_cast<uint8_t>(p[0])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(p[3]));
}

// The server's bytes as frames (a trailing partial frame is left out).
inline std::vector<Frame> frames(std::string_view bytes) {
  std::vector<Frame> out;
  while (bytes.size() >= 9) {
    size_t n = static_cast<size_t>(static_cast<uint8_t>(bytes[0])) << 16 |
               static_cast<size_t>(static_cast<uint8_t>(bytes[1])) << 8 |
               static_cast<uint8_t>(bytes[2]);
    if (bytes.size() < 9 + n) break;
    out.push_back({static_cast<uint8_t>(bytes[3]), static_cast<uint8_t>(bytes[4]),
                   read32(bytes.substr(5)) & 0x7fffffff, std::string(bytes.substr(9, n))});
    bytes.remove_prefix(9 + n);
  }
  return out;
}

// The error code of the first GOAWAY among `fs`, if one came.
inline std::optional<uint32_t> goaway_code(const std::vector<Frame>& fs) {
  for (const Frame& f : fs)
    if (f.type == kGoaway && f.payload.size() >= 8)
      return read32(std::string_view(f.payload).substr(4));
  return std::nullopt;
}
// The error code of the first RST_STREAM on `stream` among `fs`, if one came.
inline std::optional<uint32_t> rst_code(const std::vector<Frame>& fs, uint32_t stream) {
  for (const Frame& f : fs)
    if (f.type == kRstStream && f.stream == stream && f.payload.size() == 4)
      return read32(f.payload);
  return std::nullopt;
}
// How many frames of `type` (with all of `flags`) are among `fs`.
inline int count(const std::vector<Frame>& fs, uint8_t type, uint8_t flags = 0) {
  int n = 0;
  for (const Frame& f : fs) n += f.type == type && (f.flags & flags) == flags;
  return n;
}
// Whether a HEADERS frame (an answer) came on `stream`.
inline bool answered(const std::vector<Frame>& fs, uint32_t stream) {
  for (const Frame& f : fs)
    if (f.type == kHeaders && f.stream == stream) return true;
  return false;
}

}  // namespace hello::test::h2raw
