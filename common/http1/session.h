// The HTTP/1 heart: request bytes in, response bytes out. It owns the
// llhttp parser of one connection, enforces the request limits, routes each
// complete request to a prebuilt response, and decides whether the
// connection stays open and whether an answer waits (a route's delay). It
// knows nothing of libuv, so unit tests and the fuzzer drive it directly.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "http/heart.h"
#include "http/host_syntax.h"
#include "http/route_path.h"
#include "observe/accounting.h"
#include "persona/response_table.h"
#include "shaping/shape.h"

namespace hello {

// What a request may weigh (docs/hardening.md).
struct Limits {
  // Request line plus headers; beyond it 431, or 414 if the request line
  // alone is too long.
  size_t max_header_bytes = 16384;
  // A body beyond it (by Content-Length or by counting chunks) gets 413.
  size_t max_body_bytes = 1048576;
  // More header lines than this get 431; nginx and Node allow about as many
  // as fit in their byte limits, and no benchmark client sends more than 10.
  static constexpr size_t kMaxHeaders = 100;
};

class Session final : public Heart {
 public:
  // The shaping parameters of one request (its query and X-Hello-Shape
  // values, joined by '&') may be this long; beyond it 400.
  static constexpr size_t kMaxShapeText = 4096;

  // Reports each answer to `sink`. `dice` decides shaped answers: required
  // if the table shapes any.
  Session(const ResponseTable& table, Accounting& sink, const Limits& limits = {},
          Dice* dice = nullptr);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void reset() override;
  // Parses until the input ends, the connection must close, or a request
  // must be answered later (its route has a delay). Once closed, further
  // bytes are ignored.
  Fed feed(const char* data, size_t len, std::string& out) override;
  Fed resume(std::string& out) override;
  void time_out(std::string& out) override;

  // Between requests, in one, waiting to answer one, or answering no more.
  enum class State : uint8_t { idle, in_request, deferred, closed };
  State state() const { return state_; }

 private:
  friend struct SessionCallbacks;

  // The log shows at most this much of a request target.
  static constexpr size_t kMaxLoggedTarget = 256;
  // Long enough for every header name the session looks at ("Expect").
  static constexpr size_t kFieldPrefix = 6;
  // An echo body buffer larger than this is freed when the session is reused.
  static constexpr size_t kPooledBody = 64 * 1024;
  // Long enough for "100-continue" and a little more.
  static constexpr size_t kExpectValue = 16;

  // The header whose value is being read: host until a first piece of it
  // has been checked, host_continued after.
  enum class Header : uint8_t { other, host, host_continued, expect, transfer_encoding, shape };
  // The form of the request target (RFC 9112 section 3.2), as far as read.
  // The last two are read_target_prefix() still at work.
  enum class TargetForm : uint8_t {
    origin,     // "/path" (or not yet known)
    absolute,   // "http://host/path": the path was reached
    other,      // matches no route: "*", an authority, another scheme
    scheme,     // perhaps "http://" or "https://", being read
    authority,  // the authority after "http://", being read
  };
  // transfer_coding_ before any Transfer-Encoding line. From its name on it
  // counts the bytes of "chunked" the value has matched (all 7, then only
  // blanks, is the one value accepted), or is kOtherTransferCoding.
  static constexpr uint8_t kNoTransferCoding = 0xfe;
  static constexpr uint8_t kOtherTransferCoding = 0xff;

  int on_message_begin();
  int on_url(const char* at, size_t len);
  int read_target_prefix(const char* at, size_t len);
  void copy_path(const char* at, size_t len);
  int on_header_field(const char* at, size_t len);
  int on_header_field_complete();
  int on_header_value(const char* at, size_t len);
  int read_host_value(const char* at, size_t len);
  int read_transfer_coding(const char* at, size_t len);
  void finish_expect();
  int on_headers_complete();
  int on_chunk_header();
  int on_body(const char* at, size_t len);
  int on_message_complete();
  // A complete request to a route of a table whose answers may wait or be
  // shaped: answered now or deferred. Each returns what
  // on_message_complete() returns, or kAnswerAsUsual for a request that
  // neither waits nor is shaped (on_message_complete() answers it).
  static constexpr int kAnswerAsUsual = -1;
  int complete_routed(Variant v, bool head, bool keep_alive);
  int complete_waiting(Variant v, bool head, bool keep_alive);
  int complete_shaped(Variant v, bool head, bool keep_alive);
  int complete_with_parameters(Variant v, bool head, bool keep_alive);
  int complete_by_shape(Variant v, bool head, bool keep_alive);
  // Moves what the last answer left to the connection into `fed`.
  void take_stream(Fed& fed);
  // The shaped answer (decision_ by current_shape_): appended, or left
  // for the connection to send (stream_). True if it ends the connection.
  bool answer_shaped(Variant v, bool head);
  // Enters idle or closed after an answer; the value for llhttp.
  int after_answer(bool keep_alive);
  // The pieces of a shaping text: of the query, of an X-Hello-Shape value.
  int after_path(const char* at, size_t len);
  int begin_query(const char* at, size_t len);
  void keep_query(const char* at, size_t len);
  void keep_shape_text(const char* at, size_t len);
  int match_shape_name(const char* at, size_t len);
  int begin_shape_value();
  // The value of an Expect or X-Hello-Shape header is complete.
  void finish_value();
  int reject(int status);
  // True if only blanks stand between `at` and the end of the previous line.
  bool after_line_end(const char* at) const;
  // The answer to the complete request, now or deferred: `route_` (or
  // the 404, 405 or 417 the request earned) in variant `v`. True if that
  // answer ends the connection (a body framed by the close).
  bool answer_request(Variant v, bool head);
  // `kind`: what the answer is to (a request's line goes into the log).
  void answer(const PreparedResponse& r, bool head_only, Answered::Kind kind);
  // A JSON echo route: the body parsed, and sent back minified (or 400).
  void answer_echo(Variant v);
  // Every state change goes through here and is checked.
  void enter(State to);
  // Appends the template `r` with `body` after its head (only the head with `head_only`).
  void answer_with(const PreparedResponse& r, std::string_view body, bool head_only = false,
                   Answered::Shaping shaping = Answered::Shaping::none);
  // Reports an answer of `status` whose body is `body_bytes` long to the sink.
  void note_status(int status, size_t body_bytes, Answered::Kind kind,
                   Answered::Shaping shaping = Answered::Shaping::none);
  // The same while logging: with the request line.
  void note_logged(Answered& a);
  void keep_target(const char* at, size_t len);
  // Answers `status` and closes; `malformed` counts it as a parse error.
  void fail(int status, bool malformed = true);

  const ResponseTable& table_;
  Limits limits_;
  llhttp_t parser_;
  std::string* out_ = nullptr;  // valid during feed()
  const char* feed_begin_ = nullptr;
  const char* feed_end_ = nullptr;
  Accounting& sink_;

  char path_[kMaxPath];
  uint16_t path_length_ = 0;
  bool path_done_ = false;  // a '?' or '#' ended the path, or there is none to route
  bool path_too_long_ = false;
  TargetForm form_ = TargetForm::origin;
  uint8_t scheme_matched_ = 0;  // bytes of "https://" matched ("http://" skips the 's')
  // The raw target, kept only for the log: allocated once with the session
  // (sessions are pooled with their connections), and only when logging.
  std::unique_ptr<char[]> target_;
  uint16_t target_length_ = 0;
  size_t head_bytes_ = 0;
  size_t headers_ = 0;
  size_t body_bytes_ = 0;
  char field_[8];  // the first kFieldPrefix bytes of a name, and room for one load
  size_t field_length_ = 0;
  Header header_ = Header::other;
  char value_[kExpectValue];
  size_t value_length_ = 0;
  HostSyntax host_;                   // of the Host value, or of an absolute target's authority
  bool in_trailers_ = false;          // the head is complete: fields now are trailers
  bool tail_after_line_end_ = false;  // the last read ended in LF and blanks
  uint8_t hosts_ = 0;
  uint8_t transfer_coding_ = kNoTransferCoding;
  int route_ = -1;           // chosen when the head is complete
  bool path_known_ = false;  // some route has this path (405 rather than 404)
  int path_route_ = -1;      // a route with this path, whose 405 lists its methods
  bool echo_ = false;        // the route echoes the body, which is kept in body_
  std::string body_;         // the body of an echo request
  bool expect_continue_ = false;
  bool expect_unknown_ = false;
  int error_status_ = 0;  // set by a callback that rejects the request
  State state_ = State::idle;
  // The request whose answer waits (state deferred): what resume() sends.
  struct Deferred {
    uint64_t delay_us = 0;  // how long it waits
    Variant variant = Variant::keep_alive_11;
    bool head = false;
    bool keep_alive = true;
    bool clean_end = false;  // the request ended where its input did
    bool shaped = false;     // answered by answer_shaped()
  } deferred_;
  uint32_t answered_ = 0;  // responses appended by this feed() or resume()

  // Shaping (docs/shaping.md). Off unless the table shapes answers.
  Dice* dice_;
  const bool shape_requests_;  // read queries and X-Hello-Shape headers
  // The request's shaping text, read as it comes: one allocation with the
  // session, and only with --shape.
  std::unique_ptr<char[]> shape_text_;
  struct ShapeInput {
    uint16_t length = 0;    // bytes of shape_text_ used
    bool overflow = false;  // over kMaxShapeText
    bool in_query = false;  // the target's query is being read
    uint8_t name = 0;       // bytes of "x-hello-shape" the header name matched; 0xff: none
  } shape_input_;
  Shape shape_;                           // parsed from shape_text_
  const Shape* current_shape_ = nullptr;  // what shapes the answer: shape_, a route's, the default
  Decision decision_;
  // What the connection must do for the last answer of this feed() or
  // resume(): a body to send by reference, a reset.
  struct Stream {
    BodySource body;
    uint64_t drip_us = 0;
    bool reset = false;
  } stream_;
};

}  // namespace hello
