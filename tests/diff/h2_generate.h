// The differential test's client (tests/diff/README.md): frame sequences
// made from a seed, as a client might send them and as no client should:
// the preface (now and then broken), SETTINGS good and bad, requests good
// and malformed with their header blocks split over CONTINUATIONs, padded
// and prioritised, DATA on open, closed and idle streams, PING, PRIORITY,
// RST_STREAM, WINDOW_UPDATE, GOAWAY, PUSH_PROMISE, unknown and misshapen
// frames; and the points at which the bytes are cut into reads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "h2_raw.h"

namespace hello::test::diff {

using namespace h2raw;

// The limits both servers are set up with for one sequence.
struct Limits {
  uint32_t max_streams = 100;
  size_t max_header_list = 16384;
  size_t max_body = 1 << 20;
};

struct Sequence {
  Limits limits;
  std::vector<std::string> reads;  // the bytes, cut into reads
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Sequence next() {
    Sequence s;
    last_ = 0;
    // Half the sequences are a client's that means well: no frame that
    // ends the connection on purpose, so that what follows is compared too.
    benign_ = chance(0.5);
    if (chance(0.15)) s.limits.max_streams = 2;
    if (chance(0.15)) s.limits.max_header_list = 200;
    if (chance(0.15)) s.limits.max_body = 20;
    std::string bytes = preface();
    int frames = pick(1, 10);
    for (int i = 0; i < frames; ++i) bytes += any_frame();
    s.reads = cut(bytes);
    return s;
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  template <typename T>
  T one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }

  std::string preface() {
    std::string p(kPreface);
    if (!benign_ && chance(0.03))
      p[static_cast<size_t>(pick(0, static_cast<int>(p.size()) - 1))] ^= 0x20;
    if (benign_ || chance(0.9)) p += client_settings();
    if (chance(0.7)) p += settings_ack();
    return p;
  }

  std::string client_settings() {
    std::vector<std::pair<uint16_t, uint32_t>> entries;
    if (benign_) {
      if (chance(0.3))
        entries.push_back({0x4, static_cast<uint32_t>(one_of<int>({1, 100, 65535, 1 << 20}))});
      if (chance(0.3)) entries.push_back({0x1, static_cast<uint32_t>(one_of<int>({0, 4096}))});
      return settings(entries);
    }
    int n = chance(0.02) ? 17 : pick(0, 3);
    for (int i = 0; i < n; ++i) {
      switch (pick(0, 7)) {
        case 0:
          entries.push_back({0x1, static_cast<uint32_t>(one_of<int>({0, 256, 4096, 65536}))});
          break;
        case 1:
          entries.push_back({0x2, static_cast<uint32_t>(pick(0, chance(0.1) ? 2 : 1))});
          break;
        case 2:
          entries.push_back({0x3, static_cast<uint32_t>(pick(0, 200))});
          break;
        case 3:
          entries.push_back(
              {0x4, one_of<uint32_t>({0, 1, 10, 100, 65535, 1 << 20, 0x7fffffff, 0x80000000u})});
          break;
        case 4:
          entries.push_back({0x5, one_of<uint32_t>({16384, 16383, 1 << 20, 1 << 24})});
          break;
        case 5:
          entries.push_back({0x6, static_cast<uint32_t>(pick(0, 100000))});
          break;
        default:
          entries.push_back({static_cast<uint16_t>(pick(7, 0xff)), 7});
          break;
      }
    }
    return settings(entries);
  }

  uint32_t next_id() const { return last_ == 0 ? 1 : last_ + 2; }

  // The stream a frame names: mostly the newest, else an older, an idle,
  // an even one or 0.
  uint32_t some_stream() {
    if (benign_) return last_ > 0 && chance(0.8) ? last_ : next_id();
    int r = pick(0, 19);
    if (r < 10 && last_ > 0) return last_;
    if (r < 13 && last_ > 2)
      return last_ - 2 * static_cast<uint32_t>(pick(1, static_cast<int>(last_ / 2)));
    if (r < 16) return next_id();
    if (r < 18) return static_cast<uint32_t>(pick(1, 4) * 2);
    return 0;
  }

  std::string field_block(bool trailers) {
    if (trailers) return chance(0.8) ? literal("x-trailer", "v") : literal(":path", "/");
    static const std::vector<std::string> kMethods = {"GET", "GET", "POST", "HEAD", "PUT"};
    static const std::vector<std::string> kPaths = {"/", "/", "/json", "/nope", "/?a=b", "*"};
    std::string extra;
    switch (pick(0, 14)) {
      case 0:
        extra = literal("x-a", "b");
        break;
      case 1:
        extra = "\x40" + hpack_int(0, 7, 3) + "x-i" + hpack_int(0, 7, 2) + "vv";
        break;
      case 2:
        extra = "\xbe";
        break;  // the newest dynamic-table entry, if any
      case 3:
        extra = literal(28, one_of<std::string>({"0", "3", "25", "x"}));
        break;
      case 4:
        extra = literal("X-Upper", "v");
        break;
      case 5:
        extra = literal(":foo", "v");
        break;
      case 6:
        extra = literal("connection", "close");
        break;
      case 7:
        extra = literal("te", chance(0.5) ? "trailers" : "gzip");
        break;
      case 8:
        extra = literal("x-big", std::string(static_cast<size_t>(pick(100, 400)), 'b'));
        break;
      case 9:
        extra = literal("x-a", " padded ");
        break;
      default:
        break;
    }
    if (chance(0.05)) return "\x82\x86" + literal(1, "a") + extra;  // no :path
    if (chance(0.03)) return literal("x-a", "b") + "\x82";          // a pseudo-header last
    return request_block(one_of(kMethods), one_of(kPaths), extra);
  }

  // A HEADERS (a request, or trailers on an open stream), its block
  // perhaps padded, prioritised and split over CONTINUATIONs.
  std::string headers_frames() {
    bool fresh = chance(0.75);
    uint32_t id = fresh ? next_id() : some_stream();
    if (fresh) last_ = id;
    std::string block = field_block(!fresh && chance(0.5));
    uint8_t flags = chance(0.6) ? kEndStream : 0;
    std::string prefix, padding;
    if (chance(0.1)) {
      flags |= kPadded;
      size_t pad = static_cast<size_t>(pick(0, 8));
      prefix += static_cast<char>(chance(0.1) ? 250 : pad);
      padding.assign(pad, '\0');
    }
    if (chance(0.1)) {
      flags |= 0x20;
      uint32_t dep = one_of<uint32_t>({0, id, id + 2, 1});
      prefix += be32(dep) + std::string(1, '\x10');
    }
    size_t pieces = chance(0.2) ? static_cast<size_t>(pick(2, 3)) : 1;
    size_t step = block.size() / pieces + 1;
    std::string out;
    for (size_t i = 0, at = 0; i < pieces; ++i, at += step) {
      std::string piece = at < block.size() ? block.substr(at, step) : "";
      bool last = i + 1 == pieces;
      if (i == 0)
        out += frame(kHeaders, flags | (last ? kEndHeaders : 0), id, prefix + piece + padding);
      else
        out += frame(kContinuation, last ? kEndHeaders : 0, id, piece);
      if (!last && !benign_ && chance(0.05)) out += ping();  // a frame inside the block
    }
    return out;
  }

  std::string data_frame() {
    uint32_t id = benign_ ? last_ : some_stream();
    if (id == 0) return ping();
    std::string body(static_cast<size_t>(pick(0, 30)), 'd');
    uint8_t flags = chance(0.5) ? kEndStream : 0;
    if (chance(0.1)) {
      size_t pad = static_cast<size_t>(pick(0, 5));
      return frame(kData, flags | kPadded, id,
                   std::string(1, static_cast<char>(chance(0.1) ? 200 : pad)) + body +
                       std::string(pad, '\0'));
    }
    return frame(kData, flags, id, body);
  }

  std::string any_frame() {
    if (benign_) {
      switch (pick(0, 9)) {
        case 0:
        case 1:
        case 2:
        case 3:
          return headers_frames();
        case 4:
        case 5:
          return data_frame();
        case 6:
          return ping();
        case 7:
          return priority(some_stream(), 0);
        case 8:
          return window_update(chance(0.5) ? 0 : last_, static_cast<uint32_t>(pick(1, 100000)));
        default:
          return last_ > 0 ? rst_stream(last_, kCancel) : ping();
      }
    }
    switch (pick(0, 19)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5:
        return headers_frames();
      case 6:
      case 7:
      case 8:
        return data_frame();
      case 9:
        return ping(chance(0.2) ? kAck : 0);
      case 10:
        return priority(some_stream(), chance(0.2) ? last_ : 0);
      case 11:
        return rst_stream(some_stream(), static_cast<uint32_t>(pick(0, 13)));
      case 12: {
        uint32_t inc = one_of<uint32_t>({0, 1, 100, 65535, 0x7fffffff});
        return window_update(chance(0.5) ? 0 : some_stream(), inc);
      }
      case 13:
        return frame(kGoaway, 0, 0, be32(last_) + be32(0));
      case 14:
        return chance(0.5) ? client_settings() : settings_ack();
      case 15:
        return frame(static_cast<uint8_t>(pick(10, 0xff)), 0xff, some_stream(), "xyz");
      case 16:
        return frame(kPushPromise, kEndHeaders, some_stream(), be32(2) + "\x82");
      case 17: {
        static const std::vector<std::pair<uint8_t, size_t>> kBad = {
            {kPing, 7}, {kRstStream, 3}, {kWindowUpdate, 5}, {kSettings, 5}, {kPriority, 4}};
        auto [type, n] = one_of(kBad);
        return frame(type, 0, type == kPing || type == kSettings ? 0 : some_stream(),
                     std::string(n, '\0'));
      }
      default:
        return headers_frames();
    }
  }

  // Whole, cut in a few places, or one byte a read.
  std::vector<std::string> cut(const std::string& bytes) {
    std::vector<std::string> reads;
    int mode = pick(0, 9);
    if (mode < 4) return {bytes};
    if (mode < 8) {
      std::vector<size_t> at;
      for (int i = pick(1, 4); i > 0; --i)
        at.push_back(static_cast<size_t>(pick(1, static_cast<int>(bytes.size()) - 1)));
      std::sort(at.begin(), at.end());
      size_t from = 0;
      for (size_t a : at) {
        if (a > from) reads.push_back(bytes.substr(from, a - from));
        from = std::max(from, a);
      }
      reads.push_back(bytes.substr(from));
      return reads;
    }
    for (char c : bytes) reads.emplace_back(1, c);
    return reads;
  }

  std::mt19937_64 rng_;
  uint32_t last_ = 0;    // the newest stream id the sequence opened
  bool benign_ = false;  // a client that means well
};

}  // namespace hello::test::diff
