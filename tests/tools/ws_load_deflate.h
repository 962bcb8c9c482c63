// permessage-deflate for ws_load (RFC 7692), socket-free: what the server
// answered to the offer, and the raw DEFLATE streams of one connection,
// zlib's, one each way.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ws_load.h"

namespace ws_load {

// What the server answered permessage-deflate with (RFC 7692 section 7.1).
struct DeflateParams {
  bool client_no_context_takeover = false;
  bool server_no_context_takeover = false;
  int client_max_window_bits = 15;
  int server_max_window_bits = 15;
};

// Reads the server's Sec-WebSocket-Extensions value into `params`; nullptr
// if it accepts permessage-deflate as offered, else why it does not.
const char* parse_deflate_answer(std::string_view value, DeflateParams& params);

// The client's compressor: one message at a time, each ending in a sync
// flush whose 00 00 ff ff is not sent (RFC 7692 section 7.2.1).
class Deflater {
 public:
  Deflater() = default;
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  ~Deflater();

  // Makes the stream for what the server allowed; nullptr or why not.
  const char* init(const DeflateParams& params);
  // The message made of `a` then `b`, compressed, in `out` (cleared
  // first); nullptr or why it could not be.
  const char* compress(const uint8_t* a, size_t an, const uint8_t* b, size_t bn, Buffer& out);

 private:
  const char* run(const uint8_t* p, size_t n, int flush, Buffer& out);

  z_stream zs_{};
  bool ready_ = false;
  bool reset_each_ = false;  // client_no_context_takeover
};

// The client's decompressor. Its window is always 15 bits: a larger window
// inflates whatever a smaller one made, and keeping the context does no
// harm when the server resets its own (server_no_context_takeover).
class Inflater {
 public:
  Inflater() = default;
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater();

  // Makes the stream; nullptr or why not.
  const char* init();

  // Inflates the `n` bytes at `p`, handing each piece of output to
  // `sink(bytes, count)` through `scratch` (`capacity` bytes); stops when
  // the sink returns false. nullptr, or zlib's reason for failing.
  template <class Sink>
  const char* feed(const uint8_t* p, size_t n, uint8_t* scratch, size_t capacity, Sink&& sink);

  // The end of a message: the 00 00 ff ff its sender left out.
  template <class Sink>
  const char* end_message(uint8_t* scratch, size_t capacity, Sink&& sink) {
    static constexpr uint8_t kTail[4] = {0x00, 0x00, 0xff, 0xff};
    return feed(kTail, sizeof kTail, scratch, capacity, sink);
  }

 private:
  z_stream zs_{};
  bool ready_ = false;
};

template <class Sink>
const char* Inflater::feed(const uint8_t* p, size_t n, uint8_t* scratch, size_t capacity,
                           Sink&& sink) {
  // Each pass consumes input or fills the scratch buffer, and the sink
  // refuses more than one message; this bound only stops a pass that did
  // neither.
  const size_t max_passes = kMaxSize / capacity + 64;
  zs_.next_in = const_cast<Bytef*>(p);
  zs_.avail_in = static_cast<uInt>(n);
  for (size_t pass = 0; pass < max_passes; ++pass) {
    zs_.next_out = scratch;
    zs_.avail_out = static_cast<uInt>(capacity);
    int rc = inflate(&zs_, Z_SYNC_FLUSH);
    size_t got = capacity - zs_.avail_out;
    if (got > 0 && !sink(scratch, got)) return nullptr;
    if (rc == Z_STREAM_END) {
      // A sender may end a message with a final block (RFC 7692 section
      // 7.2.3.3); what follows starts a new stream.
      if (inflateReset(&zs_) != Z_OK) return "inflateReset failed";
      if (zs_.avail_in == 0) return nullptr;
      continue;
    }
    if (rc == Z_BUF_ERROR && zs_.avail_in == 0) return nullptr;  // wants the next bytes
    if (rc != Z_OK) return zs_.msg != nullptr ? zs_.msg : "inflate failed";
    if (zs_.avail_in == 0 && zs_.avail_out > 0) return nullptr;
  }
  return "inflate made no progress";
}

}  // namespace ws_load
