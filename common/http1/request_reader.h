// The HTTP/1 request reader: llhttp's callbacks over one connection's bytes.
// It enforces the request limits, checks what llhttp lets through (the
// target's form, Host, Transfer-Encoding, obs-fold, empty names, Expect),
// keeps what shaping and the log need, and routes each request once its
// head is complete. What a complete request is answered with, and when, is
// the session's (session.h): it supplies the callbacks for the first byte
// of a request and for its end. Bytes in, a request read; no libuv.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "http/host_syntax.h"
#include "http/limits.h"
#include "http/route_path.h"
#include "persona/response_table.h"
#include "websocket/ws_handshake.h"

// A parser callback inlined into its trampoline: one call from llhttp
// instead of two. Only for callbacks defined in the file of their trampoline.
#define HELLO_CALLBACK [[gnu::always_inline]] inline

namespace hello {

// What one feed hands llhttp's callbacks: where answers go and the bytes
// being parsed. It lives on the stack of the feed (Session::feed()), and
// the parser's data pointer points at it only while llhttp runs, so nothing of
// one feed outlives it in the reader or the session. The reader itself
// needs no pointer here: the parser is its base, so a callback finds it
// from the parser llhttp hands back (a static_cast, as h2o's
// H2O_STRUCT_FROM_MEMBER finds a connection from its embedded request).
struct FeedContext {
  std::string* out;
  const char* begin;
  const char* end;
};

// What the reader knows of the request in progress. It starts whole at
// the request's first byte (request_ = {}), so nothing of one request
// carries into the next. The bytes it counts live beside it (path_,
// field_, value_): their lengths are here.
struct Request {
  // The header whose value is being read: host until a first piece of it
  // has been checked, host_continued after.
  enum class Header : uint8_t {
    other,
    host,
    host_continued,
    expect,
    transfer_encoding,
    shape,
    upgrade,
    // A WebSocket handshake's fields (at a persona with a WebSocket path).
    ws_key,
    ws_version,
    ws_extensions,
  };
  // The form of the request target (RFC 9112 section 3.2), as far as read.
  // The last two are read_target_prefix() still at work.
  enum class TargetForm : uint8_t {
    origin,     // "/path" (or not yet known)
    absolute,   // "http://host/path": the path was reached
    other,      // matches no route: "*", an authority, another scheme
    scheme,     // perhaps "http://" or "https://", being read
    authority,  // the authority after "http://", being read
  };
  // The shaping text of the request (its query and X-Hello-Shape values).
  struct ShapeInput {
    uint16_t length = 0;    // bytes of shape_text_ used
    bool overflow = false;  // over kMaxShapeText
    bool in_query = false;  // the target's query is being read
    uint8_t name = 0;       // bytes of "x-hello-shape" the header name matched; 0xff: none
  };

  size_t head_bytes = 0;    // the request line, field lines and chunk extensions so far
  size_t body_bytes = 0;    // the chunk sizes declared so far
  size_t field_length = 0;  // of the field name being read
  size_t value_length = 0;  // of the Expect value (at most kExpectValue bytes are kept)
  int route = -1;           // chosen when the head is complete
  int path_route = -1;      // a route with this path, whose 405 lists its methods
  uint16_t path_length = 0;
  uint16_t target_length = 0;  // bytes of the target kept for the log
  uint16_t headers = 0;        // field lines so far, trailers included
  uint16_t error_status = 0;   // set by a callback that rejects the request
  ShapeInput shape;
  Header header = Header::other;
  TargetForm form = TargetForm::origin;
  uint8_t scheme_matched = 0;  // bytes of "https://" matched ("http://" skips the 's')
  uint8_t hosts = 0;
  // 0 before any Transfer-Encoding line. From its name on, one more than
  // the bytes of "chunked" the value has matched (all 7, then only blanks,
  // is the one value accepted), or kOtherTransferCoding.
  uint8_t transfer_coding = 0;
  bool path_done = false;  // a "?" or "#" ended the path, or there is none to route
  bool path_too_long = false;
  bool path_known = false;   // some route has this path (405 rather than 404)
  bool in_trailers = false;  // the head is complete: fields now are trailers
  bool echo = false;         // the route echoes the body, which is kept in body_
  bool h2c = false;          // Upgrade names h2c (with --h2 in clear): see upgrade_at_
  bool ws = false;           // a GET at a WebSocket path: the handshake is judged
  // The WebSocket fields kept so far (RequestReader::ws_value_), and how
  // many of each header came.
  uint8_t ws_name = 0;  // bytes of a long header name kept in ws_name_
  uint8_t ws_keys = 0;
  uint8_t ws_versions = 0;
  bool ws_upgrade_seen = false;
  uint16_t ws_length[4] = {};  // per WsField: bytes kept (kept + 1: too long)
  bool expect_continue = false;
  bool expect_unknown = false;
};

// llhttp's trampolines to the reader's callbacks. Each is defined in the
// file of its callback (request_reader.cc, request_target.cc), which is
// inlined into it there.
struct ReaderCallbacks {
  static int url(llhttp_t* p, const char* at, size_t n);
  static int header_field(llhttp_t* p, const char* at, size_t n);
  static int header_field_complete(llhttp_t* p);
  static int header_value(llhttp_t* p, const char* at, size_t n);
  static int headers_complete(llhttp_t* p);
  static int body(llhttp_t* p, const char* at, size_t n);
  static int chunk_header(llhttp_t* p);
  static int chunk_extension(llhttp_t* p, const char* at, size_t n);
  static int chunk_extension_name_complete(llhttp_t* p);
  // With --shape: also watch header names for X-Hello-Shape.
  static int shape_header_field(llhttp_t* p, const char* at, size_t n);
  static int shape_header_field_complete(llhttp_t* p);
};

class RequestReader : private llhttp_t {
 public:
  // The shaping parameters of one request may be this long (http/limits.h).
  static constexpr size_t kMaxShapeText = hello::kMaxShapeText;

  // The parser's callbacks: the reader's, with `on_message_begin` and
  // `on_message_complete` (the session's) at a request's first byte and at
  // its end. With `watch_shape`, header names are also matched against
  // X-Hello-Shape.
  static llhttp_settings_t make_settings(llhttp_cb on_message_begin, llhttp_cb on_message_complete,
                                         bool watch_shape);

 protected:
  // `keep_target`: keep the request target for the log.
  RequestReader(const ResponseTable& table, const Limits& limits, bool keep_target);
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;
  ~RequestReader() = default;

  // The reader whose parser llhttp hands a callback.
  static RequestReader& of(llhttp_t* p) { return *static_cast<RequestReader*>(p); }

  // Starts over for a new connection, with callbacks from make_settings().
  void start(const llhttp_settings_t& settings);
  // Runs llhttp over the bytes of `feed`; the callbacks append answers to
  // its `out`.
  llhttp_errno_t parse(FeedContext& feed);
  // A request begins.
  void begin_request() { request_ = {}; }

  llhttp_t& parser() { return *this; }
  const llhttp_t& parser() const { return *this; }
  // The feed in progress; valid only inside a callback.
  FeedContext& context() { return *static_cast<FeedContext*>(parser().data); }
  // True while logging: the request target is kept for the log.
  bool keeps_target() const { return target_ != nullptr; }
  // The request target as far as kept for the log.
  std::string_view logged_target() const { return {target_.get(), request_.target_length}; }
  // The request's shaping text.
  char* shape_text() { return shape_text_.get(); }
  // With h2c: an Upgrade value naming h2c is noted (Request::h2c).
  void watch_h2c(bool on) { h2c_upgrade_ = on; }
  // The request's head (from its request line or the first byte of this
  // read, to its blank line), found around its Upgrade value if that came
  // in this read; empty otherwise.
  std::string_view upgrade_head() const;
  std::string_view path() const { return {path_, request_.path_length}; }
  // The WebSocket handshake's fields of the request (Request::ws).
  WsHandshakeFields ws_fields() const;

  const ResponseTable& table_;
  const bool shape_requests_;  // read queries and X-Hello-Shape headers
  Request request_;
  std::string body_;  // the body of an echo request

 private:
  friend struct ReaderCallbacks;

  // The CR LF and ": " around each header line, and the spaces and CR LF of
  // the request line, which llhttp's spans leave out.
  static constexpr size_t kLineOverhead = 4;
  // Long enough for every header name the reader looks at ("Expect").
  static constexpr size_t kFieldPrefix = 6;
  // An echo body buffer larger than this is freed when the session is reused.
  static constexpr size_t kPooledBody = 64 * 1024;
  // Long enough for "100-continue" and a little more.
  static constexpr size_t kExpectValue = 16;
  static constexpr uint8_t kOtherTransferCoding = 0xff;

  int on_url(const char* at, size_t len);
  int read_target_prefix(const char* at, size_t len);
  size_t copy_path(const char* at, size_t len);
  int on_header_field(const char* at, size_t len);
  int on_header_field_complete();
  int on_header_value(const char* at, size_t len);
  int read_host_value(const char* at, size_t len);
  int read_transfer_coding(const char* at, size_t len);
  void finish_expect();
  int on_headers_complete();
  void route_request();
  int on_chunk_header();
  int on_chunk_extension(size_t len);
  int on_body(const char* at, size_t len);
  // The target after its path: the rest of the span where the path
  // ended, then each later span.
  int end_path(const char* at, size_t len);
  int after_path(const char* at, size_t len);
  // The pieces of a shaping text: of the query, of an X-Hello-Shape value.
  void keep_shape_text(const char* at, size_t len);
  int match_shape_name(const char* at, size_t len);
  int begin_shape_value();
  // The value of an Expect or X-Hello-Shape header is complete.
  void finish_value();
  void note_upgrade(const char* at, size_t len);
  // The WebSocket handshake's headers (upgrade.cc): a long name's bytes,
  // which of the fields it names, a piece of its value.
  void keep_ws_name(const char* at, size_t len);
  Request::Header ws_header_named();
  int keep_ws_value(int field, const char* at, size_t len);
  void keep_target(const char* at, size_t len);
  // Ends the request with `status` (answered by the session, which closes).
  int reject(int status);
  // True if only blanks stand between `at` and the end of the previous line.
  bool after_line_end(const char* at);
  // Whether the bytes of a feed end in a line end and blanks.
  void note_tail(const char* begin, const char* end);

  Limits limits_;
  // The raw target, kept only for the log: allocated once with the session
  // (sessions are pooled with their connections), and only when logging.
  std::unique_ptr<char[]> target_;
  // The request's shaping text, read as it comes: one allocation with the
  // session, and only with --shape.
  std::unique_ptr<char[]> shape_text_;
  char path_[kMaxPath];
  char field_[8];  // the first kFieldPrefix bytes of a name, and room for one load
  char value_[kExpectValue];
  HostSyntax host_;                   // of the Host value, or of an absolute target's authority
  bool tail_after_line_end_ = false;  // the last read ended in LF and blanks
  bool h2c_upgrade_ = false;          // --h2 in clear: Upgrade: h2c is watched for
  bool watch_ws_ = false;             // the table has a WebSocket path
  // The WebSocket fields of the request, as Request::ws_length counts
  // them: Upgrade, Sec-WebSocket-Key, -Version and -Extensions, each in its
  // slot of ws_value_ (longer values are noted as too long, not kept).
  enum WsField : uint8_t { kWsUpgrade, kWsKey, kWsVersion, kWsExtensions };
  static constexpr uint16_t kWsSlot[4] = {0, 64, 96, 112};
  static constexpr uint16_t kWsRoom[4] = {64, 32, 16, 256};
  static constexpr size_t kWsName = 24;  // "sec-websocket-extensions"
  char ws_name_[kWsName];
  char ws_value_[368];
  // The Upgrade value naming h2c, if it came in the read being parsed, and
  // that read's bytes: only a head read whole is upgraded.
  const char* upgrade_at_ = nullptr;
  const char* upgrade_feed_begin_ = nullptr;
  const char* upgrade_feed_end_ = nullptr;
};

// llhttp_init() clears sizeof(llhttp_t) bytes of the reader's base. A base
// that is a C struct keeps its tail padding to itself (the Itanium C++ ABI
// reuses only that of a class that is not POD for layout), so no member of
// the reader lives in what it clears.
static_assert(std::is_standard_layout_v<llhttp_t> && std::is_trivial_v<llhttp_t>);

inline llhttp_errno_t RequestReader::parse(FeedContext& feed) {
  parser().data = &feed;
  llhttp_errno_t err = llhttp_execute(this, feed.begin, static_cast<size_t>(feed.end - feed.begin));
  parser().data = nullptr;
  upgrade_at_ = nullptr;  // the read's bytes are not ours after it
  note_tail(feed.begin, feed.end);
  return err;
}

inline void RequestReader::note_tail(const char* begin, const char* end) {
  // For a span that starts the next read (see after_line_end()).
  const char* p = end;
  while (p > begin && (p[-1] == ' ' || p[-1] == '\t')) --p;
  if (p > begin) tail_after_line_end_ = p[-1] == '\n';
}

}  // namespace hello
