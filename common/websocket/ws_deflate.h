// permessage-deflate (RFC 7692) for one WebSocket connection: zlib's raw
// DEFLATE both ways with a 32 KiB window and context takeover, as every
// framework here agrees it by default (docs/websocket.md). With takeover
// the window must outlive each message, so the two streams are made when
// the extension is agreed and kept to the connection's end.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace hello {

class WsDeflate {
 public:
  WsDeflate();
  ~WsDeflate();
  WsDeflate(const WsDeflate&) = delete;
  WsDeflate& operator=(const WsDeflate&) = delete;

  // Both streams were made (zlib had the memory).
  bool ready() const { return ready_; }

  enum class Inflated : uint8_t { ok, corrupt, too_big };
  // Inflates a message's payload (section 7.2.2: the 00 00 FF FF tail
  // added back) into `out`, replacing it; too_big as soon as `out` would
  // pass `limit` bytes.
  Inflated inflate(std::string_view in, size_t limit, std::string& out);
  // Appends `in` compressed (section 7.2.1: flushed, the tail taken off).
  void deflate(std::string_view in, std::string& out);

 private:
  z_stream inflater_{};
  z_stream deflater_{};
  bool ready_ = false;
};

}  // namespace hello
