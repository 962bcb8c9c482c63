// What every part of ws_load shares (ws_load.cc): the options, the exit
// statuses, the bounds, a byte buffer that keeps its storage and the mask
// generator. ws_load is a tool of its own: nothing here comes from common/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/core.h>

namespace ws_load {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

constexpr uint64_t kNsPerSecond = 1'000'000'000;
constexpr uint64_t kNsPerMs = 1'000'000;

// Connects and handshakes under way at once. A SYN dropped by a full accept
// queue is sent again only after 1 s, which would pass for a slow server;
// delay_probe uses the same bound for the same reason.
constexpr size_t kMaxConnecting = 256;
// libuv reads into one buffer per loop; 64 KiB holds 4 TLS records and
// thousands of small echoes, so one read takes whatever one wakeup brings.
constexpr size_t kReadBufferSize = 64 * 1024;
// One TLS record's plaintext at most (RFC 8446 section 5.1), times 4: each
// SSL_read hands over at most one record.
constexpr size_t kPlainBufferSize = 64 * 1024;
// The largest --size: what tornado accepts (10 MiB) and more.
constexpr size_t kMaxSize = 16 * 1024 * 1024;
// A 101 larger than this is not what a WebSocket server sends.
constexpr size_t kMaxHead = 8 * 1024;
// The stamp that numbers each message: up to 16 hex digits of its sequence
// number at the front of the payload, so that an echo of the wrong message
// (a stale one, one of another connection) differs from the expected one.
constexpr size_t kStampWidth = 16;
// How long the server has to answer our close at the end. Servers answer at
// once; what it bounds is a server that never does.
constexpr uint64_t kCloseWaitMs = 2000;
// Descriptors beyond the connections: stdio, the loop's epoll set and
// eventfd, --json.
constexpr uint64_t kSpareFds = 32;

// The command line (ws_load.cc reads it; tests/tools/README.md, ws_load).
struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string path = "/ws";
  size_t connections = 100;
  size_t in_flight = 1;
  size_t size = 16;
  bool binary = false;
  double seconds = 5;
  double warmup = 1;
  bool tls = false;
  bool deflate = false;
  std::string json_path;
  bool verify = true;
  double timeout = 10;
  std::string host_header;  // "host:port" as the Host header says it, from host and port
};

[[noreturn]] inline void internal_error(const char* what) {
  fmt::print(stderr, "ws_load: internal error: {}\n", what);
  std::abort();
}

// Unlike assert(), stays in every build.
inline void expect(bool ok, const char* what) {
  if (!ok) internal_error(what);
}

// Bytes that keep their storage: clear() forgets the contents, not the
// memory, so a connection's buffers stop growing once they have held the
// largest batch of the steady state, and sending allocates nothing.
class Buffer {
 public:
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

  // Room for `n` more bytes at the end; commit() says how many were written.
  uint8_t* tail(size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    return data_.get() + size_;
  }
  void commit(size_t n) {
    expect(n <= capacity_ - size_, "Buffer::commit past the end");
    size_ += n;
  }
  void append(const void* bytes, size_t n) {
    if (n == 0) return;
    std::memcpy(tail(n), bytes, n);
    size_ += n;
  }
  // Keeps the first `n` bytes only.
  void truncate(size_t n) {
    expect(n <= size_, "Buffer::truncate past the end");
    size_ = n;
  }
  // Forgets the first `n` bytes, keeping the rest at the front.
  void consume(size_t n) {
    expect(n <= size_, "Buffer::consume past the end");
    std::memmove(data_.get(), data_.get() + n, size_ - n);
    size_ -= n;
  }

 private:
  void grow(size_t need) {
    size_t capacity = capacity_ < 256 ? 256 : capacity_;
    while (capacity < need) capacity *= 2;
    // new[] without (), so the bytes are not zeroed: they are written before read.
    std::unique_ptr<uint8_t[]> bigger(new uint8_t[capacity]);
    if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Mask keys for client frames: splitmix64, seeded from OpenSSL's generator.
// RFC 6455 section 10.3 wants unpredictable masks to stop a hostile page
// from poisoning a proxy's cache; between this tool and a server on
// loopback there is no proxy and no page, and what matters is the cost of
// a key per frame, which here is a few instructions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace ws_load
