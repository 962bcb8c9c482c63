// The socket-free heart of a connection: request bytes in, response bytes
// out, and a decision about what happens next. It knows nothing of libuv;
// the connection carries out what it decides, so unit tests and the fuzzer
// drive it directly. Four hearts exist: Session (HTTP/1 through llhttp),
// FloorSession (hello-floor's CRLF CRLF counter), H2Heart (HTTP/2, whose
// streams are answered each on its own) and WsHeart (a WebSocket after an
// HTTP/1 upgrade, docs/websocket.md).
//
// The connection never asks which heart it drives: whatever differs
// between protocols is in this contract (docs/architecture.md, "The heart
// contract"): whether the heart stays between requests (Heart::kept()),
// who keeps the deadlines of a request in progress (Heart::keeps_time(),
// Fed::wake_us), whether a request is live (Heart::live()), how the heart
// says goodbye (time_out(), goodbye()) and how it is released (release()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hello {

struct Shape;

// Body bytes sent by reference after a feed()'s or resume()'s output,
// never copied: byte i is base[i % period]. Valid until the heart is next
// fed, resumed or reset.
struct BodySource {
  const char* base = nullptr;
  size_t period = 0;
  uint64_t length = 0;
};

// An HTTP/1.1 request that switches its connection to HTTP/2 (Upgrade:
// h2c, RFC 7540 section 3.2; docs/http2.md), what the HTTP/2 heart needs
// to answer it as stream 1, or to a WebSocket (RFC 6455; docs/websocket.md),
// what the WebSocket heart needs for its 101. Valid until the heart that
// made it is reset.
struct Upgrade {
  // What the request switches to: HTTP/2 (Upgrade: h2c) or a WebSocket
  // (RFC 6455, docs/websocket.md).
  enum class To : uint8_t { h2c, websocket };
  To to = To::h2c;
  std::string_view settings;  // HTTP2-Settings, decoded: a SETTINGS payload
  int method = 0;             // llhttp's number
  std::string_view path;      // without the query
  std::string_view shape;     // the request's shaping text (--shape), or empty
  // A WebSocket (method, path and shape above are HTTP/2's): its
  // Sec-WebSocket-Key (checked), whether permessage-deflate was agreed,
  // and the request target for the log.
  std::string_view ws_key;
  bool ws_deflate = false;
  // With --shape, the upgrade's own shaping parameters (delay and size
  // apply to every message), parsed; null: none.
  const Shape* ws_shape = nullptr;
  std::string_view target;
};

// What one feed() or resume() decided.
struct Fed {
  enum class Next : uint8_t {
    // Keep reading: every complete request was answered.
    read,
    // The request that ends at `consumed` is answered after `delay_us`:
    // call resume() then. The input after `consumed` is not parsed yet and
    // must be fed again, in order, once resume() has answered.
    later,
    // The connection closes once `out` is sent; further input is ignored.
    close,
  };
  Next next = Next::read;
  // read: a request has begun and is not complete yet.
  bool partial = false;
  // close: the closing request ended exactly where the input ended, so no
  // input was left unanswered.
  bool clean_end = false;
  uint32_t answered = 0;  // responses appended to `out`
  // Input bytes parsed: all of them, unless `later`, or `read` with a body
  // (the rest is fed again once the body is sent).
  size_t consumed = 0;
  uint64_t delay_us = 0;  // later: how long the answer waits
  // read or close: the last answer's body, sent after `out`, spread over
  // `drip_us` if that is not 0 (docs/shaping.md).
  BodySource body;
  uint64_t drip_us = 0;
  // close: the last request is answered by a TCP reset, not a response.
  bool reset = false;
  // close: why, when a deadline ended the connection (HTTP/2, whose
  // session keeps its own: docs/http2.md).
  enum class Timeout : uint8_t { none, header, send };
  Timeout timeout = Timeout::none;
  // read: call resume() after this long while reading goes on (HTTP/2: a
  // stream's delayed answer, a drip's next piece, the rest of the output,
  // a deadline; 0: as soon as the output is written). kNever: nothing waits.
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t wake_us = kNever;
  // The request that ends at `consumed` switches the connection to HTTP/2
  // (upgrade()); nothing was appended for it. The input after it is HTTP/2.
  bool upgrade = false;

  bool streams() const { return body.length > 0; }
};

// How a connection lives with a kind of heart: fixed when the heart is
// made, read on every request without a virtual call.
struct HeartTraits {
  // The connection keeps the heart from its first read to its close
  // (HTTP/2: the session's streams and HPACK tables live in it). Otherwise
  // (HTTP/1) the heart is lent per request: given back to its pool as soon
  // as no request is live, so an idle connection holds none.
  bool kept = false;
  // The heart keeps the deadlines of what is live itself (HTTP/2: per
  // stream) and says when to wake it (Fed::wake_us): the connection's timer
  // is then its wake-up, and so is the end of a queued write. Otherwise the
  // connection runs the header deadline of a request in progress and calls
  // time_out() when it passes.
  bool keeps_time = false;
};

class Heart {
 public:
  virtual ~Heart() = default;

  // Whether the connection keeps this heart between requests.
  bool kept() const { return traits_.kept; }
  // Whether this heart keeps its own deadlines and asks to be woken.
  bool keeps_time() const { return traits_.keeps_time; }

  // Starts over for a new connection.
  virtual void reset() = 0;
  // Given back to its pool (at the end of a request, or of the connection
  // for a kept heart): lets go of what only its connection needed.
  virtual void release() {}
  // A request (HTTP/2: a stream) has begun and is not over: its request
  // incomplete, its answer waiting or not all sent. False between requests,
  // when the keep-alive deadline runs and a draining worker may close.
  virtual bool live() const = 0;
  // Parses `len` bytes and appends every response they complete to `out`,
  // in order, until a request must be answered later.
  virtual Fed feed(const char* data, size_t len, std::string& out) = 0;
  // Appends the answer that feed() deferred, or (HTTP/2) what came due
  // by the time Fed::wake_us asked for. Its result says whether the
  // connection goes on (`read`) or closes; it consumes no input.
  virtual Fed resume(std::string& out) = 0;
  // The request in progress passed the header deadline the connection
  // keeps for it (a heart that keeps_time() keeps its own): appends what
  // says so (HTTP/1: 408); the connection closes.
  virtual void time_out(std::string& out) = 0;
  // The connection is about to end without a request in progress (the
  // keep-alive deadline, a worker's graceful stop), or the worker begins
  // to stop: appends what tells the client to start nothing new (HTTP/2:
  // GOAWAY with the last stream it will answer; a WebSocket: a close
  // frame). HTTP/1 says nothing: its FIN says it.
  virtual void goodbye(std::string& out) { (void)out; }
  // After Fed::upgrade: the request that switches, for the new heart.
  virtual const Upgrade* upgrade() const { return nullptr; }
  // A new heart takes over the request `u` of the one it replaces: appends
  // what switching sends (101, its SETTINGS, the answer on stream 1).
  virtual Fed upgraded(const Upgrade& u, std::string& out) {
    (void)u;
    (void)out;
    Fed fed;
    fed.next = Fed::Next::close;
    return fed;
  }
  // The client spoke another protocol than the port's (plain HTTP to a
  // TLS port): appends the answer to malformed input, sent in clear; the
  // connection closes.
  virtual void refuse(std::string& out) = 0;

 protected:
  explicit Heart(HeartTraits traits = {}) : traits_(traits) {}

 private:
  HeartTraits traits_;
};

}  // namespace hello
