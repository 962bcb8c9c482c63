// permessage-deflate for ws_load: see ws_load_deflate.h.
#include "ws_load_deflate.h"

#include <strings.h>

#include <cstring>

namespace ws_load {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// "8" to "15", quoted or not (RFC 7692 section 7.1.2); 0 if it is neither.
int window_bits(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    value = value.substr(1, value.size() - 2);
  if (value.empty() || value.size() > 2) return 0;
  int bits = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return 0;
    bits = bits * 10 + (c - '0');
  }
  return bits >= 8 && bits <= 15 ? bits : 0;
}

// One "name[=value]" of the answer into `params`; nullptr or why not.
const char* read_param(std::string_view param, DeflateParams& params, unsigned& seen) {
  size_t eq = param.find('=');
  std::string_view name = trim(param.substr(0, eq));
  std::string_view value = eq == param.npos ? std::string_view() : trim(param.substr(eq + 1));
  unsigned bit = 0;
  if (same(name, "client_no_context_takeover") && eq == param.npos) {
    params.client_no_context_takeover = true, bit = 1;
  } else if (same(name, "server_no_context_takeover") && eq == param.npos) {
    params.server_no_context_takeover = true, bit = 2;
  } else if (same(name, "client_max_window_bits")) {
    // We offered it without a value, so the server may name one or none.
    params.client_max_window_bits = eq == param.npos ? 15 : window_bits(value), bit = 4;
    if (params.client_max_window_bits == 0) return "a bad client_max_window_bits";
  } else if (same(name, "server_max_window_bits")) {
    params.server_max_window_bits = window_bits(value), bit = 8;
    if (params.server_max_window_bits == 0) return "a bad server_max_window_bits";
  } else {
    return "an unknown permessage-deflate parameter";
  }
  if (seen & bit) return "a permessage-deflate parameter twice";
  seen |= bit;
  return nullptr;
}

}  // namespace

const char* parse_deflate_answer(std::string_view value, DeflateParams& params) {
  if (value.find(',') != value.npos) return "more than one extension accepted";
  params = {};
  unsigned seen = 0;
  bool first = true;
  // Each pass takes one ';'-separated part off the value.
  while (true) {
    size_t semi = value.find(';');
    std::string_view part = trim(value.substr(0, semi));
    if (first) {
      if (!same(part, "permessage-deflate")) return "an extension we did not offer";
      first = false;
    } else if (const char* why = read_param(part, params, seen)) {
      return why;
    }
    if (semi == value.npos) return nullptr;
    value.remove_prefix(semi + 1);
  }
}

Deflater::~Deflater() {
  if (ready_) deflateEnd(&zs_);
}

const char* Deflater::init(const DeflateParams& params) {
  // Level 1: the server's cost to inflate hardly depends on the level, and
  // this tool's cost to deflate must stay well below the server's.
  // memLevel 5, python websockets' choice too: zlib sweeps its hash table
  // (2^(memLevel + 7) entries) each time the window slides, and with the
  // default 8, 5000-byte messages took 1.4 times as long to deflate here
  // with a 15-bit window, and 2 to 4 times with a 12- or 9-bit one.
  // zlib refuses a raw stream with an 8-bit window (zlib 1.2.9 onward).
  if (deflateInit2(&zs_, Z_BEST_SPEED, Z_DEFLATED, -params.client_max_window_bits, 5,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return "zlib cannot deflate with the client_max_window_bits asked for";
  ready_ = true;
  reset_each_ = params.client_no_context_takeover;
  return nullptr;
}

const char* Deflater::compress(const uint8_t* a, size_t an, const uint8_t* b, size_t bn,
                               Buffer& out) {
  out.clear();
  if (const char* why = run(a, an, Z_NO_FLUSH, out)) return why;
  if (const char* why = run(b, bn, Z_SYNC_FLUSH, out)) return why;
  static constexpr uint8_t kTail[4] = {0x00, 0x00, 0xff, 0xff};
  if (out.size() < 4 || std::memcmp(out.data() + out.size() - 4, kTail, 4) != 0)
    return "deflate's sync flush did not end in 00 00 ff ff";
  out.truncate(out.size() - 4);
  if (reset_each_ && deflateReset(&zs_) != Z_OK) return "deflateReset failed";
  return nullptr;
}

const char* Deflater::run(const uint8_t* p, size_t n, int flush, Buffer& out) {
  zs_.next_in = const_cast<Bytef*>(p);
  zs_.avail_in = static_cast<uInt>(n);
  // Each pass has room for the whole input compressed (deflateBound) and
  // then some; a second one is for zlib's pending bits. The bound only
  // stops a pass that made no room.
  for (int pass = 0; pass < 64; ++pass) {
    size_t room = deflateBound(&zs_, zs_.avail_in) + 16;
    zs_.next_out = out.tail(room);
    zs_.avail_out = static_cast<uInt>(room);
    int rc = deflate(&zs_, flush);
    out.commit(room - zs_.avail_out);
    if (rc != Z_OK && rc != Z_BUF_ERROR) return zs_.msg != nullptr ? zs_.msg : "deflate failed";
    if (zs_.avail_in == 0 && zs_.avail_out > 0) return nullptr;
  }
  return "deflate made no progress";
}

Inflater::~Inflater() {
  if (ready_) inflateEnd(&zs_);
}

const char* Inflater::init() {
  if (inflateInit2(&zs_, -15) != Z_OK) return "inflateInit2 failed";
  ready_ = true;
  return nullptr;
}

}  // namespace ws_load
