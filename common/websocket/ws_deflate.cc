#include "websocket/ws_deflate.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace hello {

namespace {

constexpr int kWindowBits = 15;  // negative below: raw DEFLATE, no zlib header
constexpr int kMemLevel = 8;     // zlib's default, as Python's zlib and java.util.zip use
constexpr unsigned char kTail[4] = {0x00, 0x00, 0xff, 0xff};
constexpr size_t kStep = 16 * 1024;

}  // namespace

WsDeflate::WsDeflate() {
  bool in = inflateInit2(&inflater_, -kWindowBits) == Z_OK;
  bool out = deflateInit2(&deflater_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -kWindowBits, kMemLevel,
                          Z_DEFAULT_STRATEGY) == Z_OK;
  ready_ = in && out;
  if (!in) inflater_ = {};
  if (!out) deflater_ = {};
}

WsDeflate::~WsDeflate() {
  if (inflater_.state != nullptr) inflateEnd(&inflater_);
  if (deflater_.state != nullptr) deflateEnd(&deflater_);
}

WsDeflate::Inflated WsDeflate::inflate(std::string_view in, size_t limit, std::string& out) {
  out.clear();
  for (int part = 0; part < 2; ++part) {
    // The payload, then the tail its sender took off.
    inflater_.next_in = part == 0 ? reinterpret_cast<Bytef*>(const_cast<char*>(in.data()))
                                  : const_cast<Bytef*>(kTail);
    inflater_.avail_in = static_cast<uInt>(part == 0 ? in.size() : sizeof kTail);
    for (;;) {
      // Room in what `out` holds already (no allocation once warm), grown
      // by doubling when it runs out; a few times the input at a time, so
      // a small message zero-fills little.
      size_t at = out.size();
      size_t want = std::max<size_t>(256, 4 * size_t{inflater_.avail_in});
      if (out.capacity() == at) out.reserve(std::max(2 * out.capacity(), at + want));
      size_t room = std::min({out.capacity() - at, limit + 1 - at, want, kStep});
      out.resize(at + room);
      inflater_.next_out = reinterpret_cast<Bytef*>(out.data() + at);
      inflater_.avail_out = static_cast<uInt>(room);
      uInt before = inflater_.avail_in;
      int rc = ::inflate(&inflater_, Z_SYNC_FLUSH);
      out.resize(at + room - inflater_.avail_out);
      if (out.size() > limit) return Inflated::too_big;
      if (rc == Z_STREAM_END) {
        // The sender ended the stream (BFINAL, section 7.2.3.1): the next
        // message starts a new one.
        inflateReset(&inflater_);
        return inflater_.avail_in == 0 || part == 1 ? Inflated::ok : Inflated::corrupt;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) return Inflated::corrupt;
      if (inflater_.avail_in == 0 && inflater_.avail_out != 0) break;
      if (inflater_.avail_in == before && inflater_.avail_out == room)
        return Inflated::corrupt;  // no progress: nothing read, nothing made
    }
  }
  return Inflated::ok;
}

void WsDeflate::deflate(std::string_view in, std::string& out) {
  size_t start = out.size();
  deflater_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  deflater_.avail_in = static_cast<uInt>(in.size());
  // The input first, then Z_SYNC_FLUSH, as Python's zlib (aiohttp, uvicorn)
  // does: the flush then always ends the output with an empty stored block
  // on a byte boundary, whose LEN and NLEN (00 00 FF FF) section 7.2.1
  // takes off. (Two flushes in a row would give nothing the second time,
  // and an empty message must still carry its block's first byte.) The
  // room is the bound of the whole message and its flush, so zlib never
  // runs out of it: output cut by a full buffer during the flush would
  // differ from Python's (extra empty blocks).
  size_t room = deflateBound(&deflater_, in.size()) + 64;
  out.resize(start + room);
  deflater_.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  deflater_.avail_out = static_cast<uInt>(room);
  for (int flush : {Z_NO_FLUSH, Z_SYNC_FLUSH}) {
    int rc = ::deflate(&deflater_, flush);
    HELLO_CHECK(rc == Z_OK || rc == Z_BUF_ERROR);
  }
  HELLO_CHECK(deflater_.avail_in == 0 && deflater_.avail_out > 0);
  out.resize(out.size() - deflater_.avail_out);
  HELLO_CHECK(out.size() >= start + sizeof kTail &&
              memcmp(out.data() + out.size() - sizeof kTail, kTail, sizeof kTail) == 0);
  out.resize(out.size() - sizeof kTail);
}

}  // namespace hello
