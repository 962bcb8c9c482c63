// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_stream.h), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
// One HTTP/2 stream's request and answer (docs/http2.md), and what every
// session of a worker shares (H2Setup). A stream lives from its HEADERS to
// its close, in a pool the worker's sessions share, so nothing is
// allocated per request once warm: its strings keep their capacity.
//
// A stream is answered on its own: at once when its request ends, or once
// its route's delay or its shape's has passed, its body dripped over time
// or sized, while the session's other streams go on. The HTTP/1 heart
// answers in request order instead; this is the difference a delayed
// answer shows between the two (docs/http2.md).
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/pool.h"
#include "http/heart.h"
#include "http/limits.h"
#include "http2/h2_answer_fields.h"
#include "persona/answer.h"
#include "shaping/drip.h"
#include "shaping/shape.h"

namespace hello::reference {

struct H2Stream {
  enum class State : uint8_t {
    receiving,  // its request has not ended; the header timeout runs
    waiting,    // its answer is due at due_ns
    sending,    // its answer is submitted; DATA goes out as the window allows
    done,       // answered (or reset); nghttp2 closes it
  };
  // The fields of an answer made per request: ":status", the persona's,
  // a shape's and its decision.
  static constexpr size_t kMaxFields = 48;
  // The query's and X-Hello-Shape's shaping text, as HTTP/1 keeps it
  // (http/limits.h).
  static constexpr size_t kMaxShapeText = hello::kMaxShapeText;

  State state = State::receiving;
  int32_t id = 0;
  int method = -1;  // llhttp's number (kGet, kHead, ...); -1: none or unknown
  RouteMatch match{-1, false, -1};
  bool echo = false;            // its route echoes the request's JSON body
  bool shape_overflow = false;  // its shaping text passed kMaxShapeText
  bool closes = false;          // a shape's `close`: GOAWAY after the answer
  bool refused = false;         // its body was over the limit: 413, then RST_STREAM
  std::string path;             // ":path", query included
  std::string shape_text;       // the query, then each X-Hello-Shape value, '&' between
  std::string body;             // the request's body, kept for an echo
  uint64_t body_bytes = 0;      // body bytes received
  uint64_t begun_ns = 0;        // receiving: when its HEADERS came
  uint64_t due_ns = 0;          // waiting: its answer; sending a drip: its next piece
  Shape shape;                  // parsed from shape_text
  Answer answer;                // what the answer step decided (persona/answer.h)

  // The answer: a prebuilt one's fields, or `own`, made from a template
  // (make_fields()), which point into `field_bytes`.
  const nghttp2_nv* fields = nullptr;
  size_t field_count = 0;
  std::string field_bytes;  // a per-request answer's status, length, shape fields, decision
  std::string text;         // its body when made per request (an echo's, a 400's)
  nghttp2_nv own[kMaxFields];
  uint16_t status = 0;
  // The body: byte i is source.base[i % source.period]; `due` of its
  // `length` bytes may be sent so far (all but a drip's later pieces).
  BodySource source;
  uint64_t sent = 0;
  uint64_t due = 0;
  Drip drip;  // a dripped body's timing (shaping/drip.h)

  // The session's streams, live (receiving to done) in one list.
  H2Stream* prev = nullptr;
  H2Stream* next = nullptr;

  // Starts over for a new stream `id` that began at `now_ns`.
  void begin(int32_t stream_id, uint64_t now_ns);
  bool dripping() const { return drip.active(); }
};

// Monotonic nanoseconds (CLOCK_MONOTONIC, as uv_hrtime()).
uint64_t monotonic_ns();

// What every HTTP/2 session of a worker shares.
struct H2Setup {
  const H2Answers* answers = nullptr;
  // Decides shaped answers: required if the table shapes any.
  Dice* dice = nullptr;
  // The streams the worker's sessions lend each other; null: a session's own.
  Pool<H2Stream>* streams = nullptr;
  // A stream's request from its HEADERS to its end; past it, GOAWAY and close.
  uint64_t header_timeout_ns = 10'000'000'000;
  // A stream whose DATA the peer's window holds back this long without
  // progress: GOAWAY and close (the HTTP/1 send timeout's counterpart).
  uint64_t send_timeout_ns = 30'000'000'000;
  size_t max_body_bytes = 1 << 20;        // a longer request body gets 413
  uint32_t max_concurrent_streams = 100;  // --h2-max-streams
  // A request's (or its trailers') field block, counted as RFC 9113
  // section 6.5.2 does (--max-header-bytes): past it, RST_STREAM.
  size_t max_header_list_bytes = 16384;
  // Upgrade: h2c is taken (--h2 in clear).
  bool h2c_upgrade = false;
  // Tomcat's ways (the spring persona, tests/fixtures/personas/spring/h2):
  // a body's DATA without END_STREAM, then an empty DATA that ends the
  // stream; a PING after the ACK of the client's first SETTINGS; Tomcat's
  // 101 head; an upgraded request answered once the client's preface came,
  // a HEAD one with the GET's body.
  bool tomcat = false;
  uint64_t (*clock)() = monotonic_ns;
  // nghttp2's allocator; null: h2_memory(). A test's may fail.
  nghttp2_mem* memory = nullptr;
};

}  // namespace hello::reference
