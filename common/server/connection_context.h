// What a connection gets from the worker that owns it, and nothing more:
// the loop and its timers, the deadlines, the shared read and output
// buffers, the accounting sink, and the pools of what a connection needs
// only for a while. A connection knows its context, never the worker, so
// a test can give it one of its own. The context also knows what the
// connection must not: which transport an accepted socket gets (TCP, or
// TLS over it), which protocol a connection speaks (server/protocol.h)
// and which heart serves it.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/pool.h"
#include "base/timer_queue.h"
#include "http/heart.h"
#include "net/transport.h"
#include "observe/accounting.h"
#include "server/protocol.h"
#include "shaping/drip.h"
#include "tls/tls_transport.h"

namespace hello {

class Connection;

// A write libuv finishes later: the request and the bytes it owns.
struct PendingWrite {
  uv_write_t req;
  std::string queued;     // bytes owned by the write in flight
  std::string_view ref;   // then bytes it does not own: a piece of a streamed body
  std::string backlog;    // responses produced while that write is in flight
  uint64_t deadline = 0;  // loop time by which the write must complete
};

// Input read but not parsed: what followed a request whose answer waits.
struct HeldInput {
  std::string bytes;
  size_t offset = 0;  // bytes before it are parsed

  size_t size() const { return bytes.size() - offset; }
};

// A body sent by reference (the streaming phase), and how far it has gone.
struct BodyStream {
  BodySource source;
  uint64_t sent = 0;    // bytes handed to the kernel or to a write
  uint64_t due = 0;     // bytes that may be sent by now
  Drip drip;            // its timing; inactive: all at once
  bool closes = false;  // the connection ends after it
  bool clean_end = false;
};

// A connection's deadlines (docs/hardening.md), in milliseconds.
struct Deadlines {
  uint64_t header_ms = 10000;      // first byte of a request to its last
  uint64_t keep_alive_ms = 60000;  // idle between requests
  uint64_t send_ms = 30000;        // a queued write that makes no progress
};

// Who owns the connections: makes their hearts and takes them back.
// Plain callbacks with their `data` (see Transport::Events for why).
struct ConnectionOwner {
  void* data = nullptr;
  // A new heart of `protocol`, when the pool has none to lend.
  std::unique_ptr<Heart> (*make_heart)(void* data, Protocol protocol) = nullptr;
  // From the connection's close callback: it may be reused.
  void (*release)(void* data, Connection* c) = nullptr;
};

class ConnectionContext {
 public:
  ConnectionContext(uv_loop_t* loop, TimerQueue& timers, Accounting& accounting,
                    const Deadlines& deadlines, const ConnectionOwner& owner, uv_buf_t read_buffer);
  ConnectionContext(const ConnectionContext&) = delete;
  ConnectionContext& operator=(const ConnectionContext&) = delete;

  uv_loop_t* loop() { return loop_; }
  uint64_t now_ms() { return uv_now(loop_); }
  // Microsecond timers: waiting answers, header deadlines, drips.
  TimerQueue& timers() { return timers_; }
  Accounting& accounting() { return accounting_; }
  const Deadlines& deadlines() const { return deadlines_; }
  // Every read goes here; its bytes are consumed before the next read.
  uv_buf_t read_buffer() const { return read_buffer_; }
  // Scratch space for the responses of one read; empty between reads.
  std::string& output() { return output_; }
  // Gives a closed connection back to its owner.
  void release(Connection* c) { owner_.release(owner_.data, c); }

  // The protocol of a connection accepted as `at_accept` once its first
  // read brought `first` (protocol_at_first_read(), with this context's
  // --h2); `alpn_h2`: its TLS handshake agreed on HTTP/2.
  Protocol protocol_at_first_read(Protocol at_accept, bool alpn_h2, std::string_view first) const {
    return hello::protocol_at_first_read(at_accept, h2_, alpn_h2, first);
  }
  // The protocol a connection switches to with the request `u` (Fed::upgrade).
  Protocol protocol_after_upgrade(const Upgrade& u) const {
    return hello::protocol_after_upgrade(u);
  }

  // The transport of a socket just accepted into `tcp`: `tcp` itself, or
  // with --tls a TLS transport over it, lent until take_transport(). Null
  // if none can be made: the socket is then to be closed, never served in clear.
  Transport* make_transport(TcpTransport& tcp);
  // Takes back a transport make_transport() gave for `tcp`, once closed.
  void take_transport(Transport* t, const TcpTransport& tcp);

  // Pools of what a connection needs only while a request is in progress
  // or a write is in flight; they grow to the peak in use and are reused.
  // A heart of `p`, reset by the caller; given back released (Heart::release()).
  Heart* acquire_heart(Protocol p);
  void release_heart(Protocol p, Heart* h) {
    h->release();
    hearts_[static_cast<size_t>(p)].release(h);
  }
  PendingWrite* acquire_write();
  void release_write(PendingWrite* w);
  HeldInput* acquire_held();
  void release_held(HeldInput* h);
  BodyStream* acquire_stream();
  void release_stream(BodyStream* s) { streams_.release(s); }
  // With --tls: what the worker's TLS connections share (null without);
  // make_transport() then lends each a TLS transport from accept to close.
  void use_tls(TlsShared* shared) { tls_ = shared; }
  // With --h2: a connection may turn to HTTP/2 at its first read.
  void use_h2(bool on) { h2_ = on; }

 private:
  uv_loop_t* loop_;
  TimerQueue& timers_;
  Accounting& accounting_;
  Deadlines deadlines_;
  ConnectionOwner owner_;
  uv_buf_t read_buffer_;
  std::string output_;
  Pool<Heart> hearts_[kProtocols];
  Pool<PendingWrite> writes_;
  Pool<HeldInput> helds_;
  Pool<BodyStream> streams_;
  TlsShared* tls_ = nullptr;
  Pool<TlsTransport> tlses_;
  bool h2_ = false;
};

}  // namespace hello
