// The HTTP/1 heart: request bytes in, response bytes out. Its RequestReader
// reads each request (llhttp, the limits, the checks); the session decides
// what becomes of it once complete: answered at once from prebuilt bytes,
// answered later (a route's delay), shaped, and whether the connection
// stays open. It knows nothing of libuv, so unit tests and the fuzzer drive
// it directly. session.cc holds its life (feed, resume, time out, the
// deferral and its states), answers.cc what a complete request is answered
// with.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "http/heart.h"
#include "http1/request_reader.h"
#include "observe/accounting.h"
#include "persona/answer.h"
#include "persona/response_table.h"
#include "shaping/shape.h"

namespace hello {

class Session final : public Heart, private RequestReader {
 public:
  using RequestReader::kMaxShapeText;

  // Reports each answer to `sink`. `dice` decides shaped answers: required
  // if the table shapes any.
  Session(const ResponseTable& table, Accounting& sink, const Limits& limits = {},
          Dice* dice = nullptr);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Lent per request: between requests the connection holds no session,
  // and it keeps the header deadline of the request in progress.
  static constexpr HeartTraits kTraits = {.kept = false, .keeps_time = false};

  void reset() override;
  // A request has begun and is not answered yet (in_request), or its answer
  // waits (deferred).
  bool live() const override { return state_ == State::in_request || state_ == State::deferred; }
  // Parses until the input ends, the connection must close, or a request
  // must be answered later (its route has a delay). Once closed, further
  // bytes are ignored.
  Fed feed(const char* data, size_t len, std::string& out) override;
  Fed resume(std::string& out) override;
  void time_out(std::string& out) override;
  void refuse(std::string& out) override;
  const Upgrade* upgrade() const override { return upgrading_ ? &upgrade_ : nullptr; }
  // With `on` (--h2 in clear), a request with Upgrade: h2c and one
  // HTTP2-Settings switches the connection to HTTP/2 (Fed::upgrade).
  void allow_h2c(bool on) { watch_h2c(on); }

  // Between requests, in one, waiting to answer one, or answering no more.
  enum class State : uint8_t { idle, in_request, deferred, closed };
  State state() const { return state_; }

 private:
  friend struct SessionCallbacks;

  // The parser's callbacks for a session with or without --shape.
  static const llhttp_settings_t& settings(bool shape);
  // The session whose parser llhttp hands a callback.
  static Session& of(llhttp_t* p) { return static_cast<Session&>(RequestReader::of(p)); }

  // A request begins; a request is complete (the value for llhttp).
  void on_message_begin();
  int on_message_complete(std::string& out);
  // A complete request to a route of a table whose answers may wait or be
  // shaped: the answer step (persona/answer.h) decides, and the answer is
  // written now or deferred. Returns what on_message_complete() returns,
  // or kAnswerAsUsual for a request that neither waits nor is shaped
  // (on_message_complete() answers it).
  static constexpr int kAnswerAsUsual = -1;
  int complete_routed(std::string& out, Variant v, bool head, bool keep_alive);
  // Parsing stops here: the answer waits `delay_us`.
  int defer(uint64_t delay_us, Variant v, bool head, bool keep_alive, bool shaped);
  // Whether the connection stays open after the complete request: the
  // client's wish by its version and Connection header, the persona's
  // policy, and never after CONNECT (the client would speak a tunnel
  // protocol). llhttp_should_keep_alive() for a request, without its calls.
  bool keeps_alive() const {
    const llhttp_t& p = parser();
    const ConnectionPolicy& policy = table_.policy();
    bool http11 = p.http_minor == 1;
    bool client_keeps =
        http11 ? !(p.flags & F_CONNECTION_CLOSE) : (p.flags & F_CONNECTION_KEEP_ALIVE) != 0;
    return client_keeps && !policy.always_close && (http11 || policy.keep_alive_http10) &&
           p.method != HTTP_CONNECT;
  }
  // Enters idle or closed after an answer; the value for llhttp.
  int after_answer(bool keep_alive);
  // Moves what the last answer left to the connection into `fed`.
  void take_stream(Fed& fed);

  // The answer that waited. True if it ends the connection.
  bool answer_deferred(std::string& out);
  // The answer to the complete request, now or deferred: its route's (or
  // the 404, 405 or 417 the request earned) in variant `v`. True if that
  // answer ends the connection (a body framed by the close).
  bool answer_request(std::string& out, Variant v, bool head);
  // The shaped answer (answer_): appended, or left for the connection to
  // send (stream_). True if it ends the connection.
  bool answer_shaped(std::string& out, Variant v, bool head);
  // A JSON echo route: the body parsed, and sent back minified (or 400).
  void answer_echo(std::string& out, Variant v);
  // Appends `r` (only its head with `head_only`); `kind`: what it answers.
  void answer(std::string& out, const PreparedResponse& r, bool head_only, Answered::Kind kind);
  // Appends the template `r` with `body` after its head (only the head with `head_only`).
  void answer_with(std::string& out, const PreparedResponse& r, std::string_view body,
                   bool head_only = false, Answered::Shaping shaping = Answered::Shaping::none);
  // Answers `status` and closes; `malformed` counts it as a parse error.
  void fail(std::string& out, int status, bool malformed = true);
  // Reports an answer of `status` whose body is `body_bytes` long to the sink.
  void note_status(int status, size_t body_bytes, Answered::Kind kind,
                   Answered::Shaping shaping = Answered::Shaping::none);
  // The same while logging: with the request line.
  void note_logged(Answered& a);

  // Every state change goes through here and is checked.
  void enter(State to);
  // Upgrade: h2c: true if the request switches (its HTTP2-Settings read).
  bool begin_upgrade();
  // A GET at a WebSocket path: switches, or is refused; the value for
  // llhttp, or kAnswerAsUsual for the persona's own 404.
  int answer_websocket(std::string& out);

  Accounting& sink_;
  State state_ = State::idle;
  // The request whose answer waits (state deferred): what resume() sends.
  struct Deferred {
    uint64_t delay_us = 0;  // how long it waits
    Variant variant = Variant::keep_alive_11;
    bool head = false;
    bool keep_alive = true;
    bool shaped = false;     // answered by answer_shaped()
    bool clean_end = false;  // the request ended where its input did
  } deferred_;
  uint32_t answered_ = 0;  // responses appended by this feed() or resume()
  // The request that switches to HTTP/2 (Fed::upgrade), and its settings.
  bool upgrading_ = false;
  Upgrade upgrade_;
  std::string upgrade_settings_;

  // Shaping (docs/shaping.md). Off unless the table shapes answers.
  Dice* dice_;
  Shape shape_;                 // parsed from the request's shaping text
  Answer answer_;               // what the answer step decided for the last such request
  DecisionText decision_text_;  // the shaped answer's decision header value, for the log
  // What the connection must do for the last answer of this feed() or
  // resume(): a body to send by reference, a reset.
  struct Stream {
    BodySource body;
    uint64_t drip_us = 0;
    bool reset = false;
  } stream_;
};

namespace session_detail {

// The states each state may be entered from, four bits a state (bit i of
// its nibble: State i). With the target state known where enter() is
// inlined, the check is one bit test of a constant.
constexpr uint16_t from(Session::State s) {
  return static_cast<uint16_t>(1u << static_cast<int>(s));
}
constexpr uint16_t kEnteredFrom =
    // idle: a request answered, or the answer that waited.
    static_cast<uint16_t>((from(Session::State::in_request) | from(Session::State::deferred))
                          << 0) |
    // in_request: a request begins between requests.
    static_cast<uint16_t>(from(Session::State::idle) << 4) |
    // deferred: a complete request whose answer waits.
    static_cast<uint16_t>(from(Session::State::in_request) << 8) |
    // closed: bytes that begin no request, a closing answer, or one that waited.
    static_cast<uint16_t>((from(Session::State::idle) | from(Session::State::in_request) |
                           from(Session::State::deferred))
                          << 12);

}  // namespace session_detail

[[gnu::always_inline]] inline void Session::enter(State to) {
  HELLO_CHECK(
      (session_detail::kEnteredFrom >> (4 * static_cast<int>(to) + static_cast<int>(state_))) & 1);
  state_ = to;
}

}  // namespace hello
