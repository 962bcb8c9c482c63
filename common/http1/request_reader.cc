#include "http1/request_reader.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "http/field_syntax.h"
#include "persona/json_echo.h"

namespace hello {

int ReaderCallbacks::header_field(llhttp_t* p, const char* at, size_t n) {
  return RequestReader::of(p).on_header_field(at, n);
}
int ReaderCallbacks::header_field_complete(llhttp_t* p) {
  return RequestReader::of(p).on_header_field_complete();
}
int ReaderCallbacks::header_value(llhttp_t* p, const char* at, size_t n) {
  return RequestReader::of(p).on_header_value(at, n);
}
int ReaderCallbacks::headers_complete(llhttp_t* p) {
  return RequestReader::of(p).on_headers_complete();
}
int ReaderCallbacks::body(llhttp_t* p, const char* at, size_t n) {
  return RequestReader::of(p).on_body(at, n);
}
int ReaderCallbacks::chunk_header(llhttp_t* p) {
  return RequestReader::of(p).on_chunk_header();
}
int ReaderCallbacks::chunk_extension(llhttp_t* p, const char*, size_t n) {
  return RequestReader::of(p).on_chunk_extension(n);
}
int ReaderCallbacks::chunk_extension_name_complete(llhttp_t* p) {
  // The ';' before the name and the '=' that may follow it.
  return RequestReader::of(p).on_chunk_extension(2);
}

namespace {

constexpr size_t kShapeHeaderLength = 13;  // "X-Hello-Shape"

}  // namespace

// With --shape, header names are also watched for X-Hello-Shape: other
// trampolines, so that a session without it pays nothing for them.
int ReaderCallbacks::shape_header_field(llhttp_t* p, const char* at, size_t n) {
  RequestReader& r = RequestReader::of(p);
  int rc = r.on_header_field(at, n);
  if (rc != 0) return rc;
  // Only a name of X-Hello-Shape's length is compared with it: one whole
  // in this span, or one that goes on in the next.
  if (n == kShapeHeaderLength || r.request_.field_length != n || at + n == r.context().end)
    r.match_shape_name(at, n);
  return 0;
}

int ReaderCallbacks::shape_header_field_complete(llhttp_t* p) {
  RequestReader& r = RequestReader::of(p);
  bool shape = r.request_.shape.name == kShapeHeaderLength &&
               r.request_.field_length == kShapeHeaderLength && !r.request_.in_trailers;
  int rc = r.on_header_field_complete();
  if (rc == 0 && shape) r.begin_shape_value();
  return rc;
}

llhttp_settings_t RequestReader::make_settings(llhttp_cb on_message_begin,
                                               llhttp_cb on_message_complete, bool watch_shape) {
  llhttp_settings_t s;
  llhttp_settings_init(&s);
  s.on_message_begin = on_message_begin;
  s.on_url = ReaderCallbacks::url;
  s.on_header_field =
      watch_shape ? ReaderCallbacks::shape_header_field : ReaderCallbacks::header_field;
  s.on_header_field_complete = watch_shape ? ReaderCallbacks::shape_header_field_complete
                                           : ReaderCallbacks::header_field_complete;
  s.on_header_value = ReaderCallbacks::header_value;
  s.on_headers_complete = ReaderCallbacks::headers_complete;
  s.on_body = ReaderCallbacks::body;
  // Called only for chunked bodies: nothing on the path of a GET.
  s.on_chunk_header = ReaderCallbacks::chunk_header;
  s.on_chunk_extension_name = ReaderCallbacks::chunk_extension;
  s.on_chunk_extension_value = ReaderCallbacks::chunk_extension;
  s.on_chunk_extension_name_complete = ReaderCallbacks::chunk_extension_name_complete;
  s.on_message_complete = on_message_complete;
  return s;
}

namespace {

// The interim answer to "Expect: 100-continue" (RFC 9110 section 10.1.1).
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// Eight bytes as one word, in memory order whatever the machine's byte order.
constexpr uint64_t word_of(std::array<uint8_t, 8> bytes) {
  return std::bit_cast<uint64_t>(bytes);
}

constexpr uint64_t kCaseBits = word_of({0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20});
// kPrefixMask[n] keeps the first n bytes of a word.
constexpr uint64_t kPrefixMask[] = {
    word_of({0, 0, 0, 0, 0, 0, 0, 0}),
    word_of({0xff, 0, 0, 0, 0, 0, 0, 0}),
    word_of({0xff, 0xff, 0, 0, 0, 0, 0, 0}),
    word_of({0xff, 0xff, 0xff, 0, 0, 0, 0, 0}),
    word_of({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}),
    word_of({0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}),
    word_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0}),
};
// The names as on_header_field_complete() sees them, masked to their length.
constexpr uint64_t kHost = word_of({'h', 'o', 's', 't', 0, 0, 0, 0});
constexpr uint64_t kExpect = word_of({'e', 'x', 'p', 'e', 'c', 't', 0, 0});

// What llhttp's header_state holds once a Transfer-Encoding name (any case)
// is complete: HEADER_STATE.TRANSFER_ENCODING in llhttp's
// src/llhttp/constants.ts, which its public header does not export. (The
// unit tests of Transfer-Encoding fail if a new llhttp numbers it otherwise.)
constexpr uint8_t kHeaderStateTransferEncoding = 3;
// HEADER_STATE.UPGRADE, likewise (the Upgrade tests fail if it moves).
constexpr uint8_t kHeaderStateUpgrade = 4;

// The transfer coding whose name a Transfer-Encoding value must be.
constexpr std::string_view kChunked = "chunked";

// The header that carries shaping parameters, as matched: lower case.
constexpr std::string_view kShapeHeader = "x-hello-shape";
static_assert(kShapeHeader.size() == kShapeHeaderLength);
constexpr uint8_t kNoShapeName = 0xff;

// The last Host value of 8 to 16 bytes a worker found valid, with a host:
// by its first and last eight bytes (which overlap below 16) and its
// length. Clients send the same Host on every request, and a value equal to
// it needs no second look: a Host costs a dozen instructions, not a few per
// byte. (One per worker thread, as the JSON echo's scratch space is.)
struct HostMemo {
  uint64_t head = 0;
  uint64_t tail = 0;
  size_t length = SIZE_MAX;  // none yet: no span is this long
};
thread_local HostMemo host_memo;

}  // namespace

RequestReader::RequestReader(const ResponseTable& table, const Limits& limits, bool keep_target)
    : table_(table),
      shape_requests_(table.shape_requests()),
      limits_(limits),
      target_(keep_target ? new char[kMaxLoggedTarget] : nullptr),
      shape_text_(shape_requests_ ? new char[kMaxShapeText] : nullptr),
      watch_ws_(table.websocket() != nullptr) {}

void RequestReader::start(const llhttp_settings_t& settings) {
  llhttp_init(this, HTTP_REQUEST, &settings);
  // In strict mode llhttp 8.1 refuses HTTP/1.2 to 1.9 as it refuses 3.0,
  // and takes only 0.9, 1.0, 1.1 and 2.0. It lets every version through with
  // LENIENT_VERSION (which its 8.1 API has no setter for), and the reader
  // checks the version itself when the head is complete.
  parser().lenient_flags |= LENIENT_VERSION;
  request_ = {};
  tail_after_line_end_ = false;
  // A pooled session keeps a modest echo buffer, not the largest body ever.
  if (body_.capacity() > kPooledBody) std::string().swap(body_);
}

int RequestReader::reject(int status) {
  request_.error_status = static_cast<uint16_t>(status);
  return HPE_USER;
}

HELLO_CALLBACK int RequestReader::on_header_field(const char* at, size_t len) {
  Request& r = request_;
  r.head_bytes += len;
  if (r.head_bytes > limits_.max_header_bytes) return reject(431);

  // Only "Host" and "Expect" matter, so only names that short are kept.
  size_t end = r.field_length + len;
  if (end <= kFieldPrefix) {
    if (r.field_length == 0 && context().end - at >= 8)
      memcpy(field_, at, 8);  // one load; the bytes past the name are masked off
    else
      for (size_t i = 0; i < len; ++i) field_[r.field_length + i] = at[i];
  } else if (watch_ws_ && (r.field_length == 0              ? (at[0] | 0x20) == 's'
                           : r.field_length <= kFieldPrefix ? (field_[0] | 0x20) == 's'
                                                            : r.ws_name != 0)) [[unlikely]] {
    // A long name beginning with 's' (its first byte in this span, or in
    // field_ from a short first span, or kept already): perhaps
    // Sec-WebSocket-Key and its kin. Any other name costs this test alone.
    keep_ws_name(at, len);
  }
  r.field_length = end;
  return 0;
}

HELLO_CALLBACK int RequestReader::on_header_field_complete() {
  Request& r = request_;
  // The previous header's value is complete once the next name is.
  if (r.header >= Request::Header::expect) [[unlikely]]
    finish_value();
  if (++r.headers > Limits::kMaxHeaders) return reject(431);
  r.head_bytes += kLineOverhead;
  // Trailers (after a chunked body) are counted, but Host, Expect and
  // Transfer-Encoding mean nothing there.
  if (r.field_length <= kFieldPrefix && !r.in_trailers) {
    // The name's first bytes as one word, case folded: to_lower_ascii()
    // eight bytes at once for names of letters alone, such as "host" and
    // "expect". OR-ing 0x20 into a byte gives a lower-case letter only
    // from that letter, in either case.
    uint64_t word;
    memcpy(&word, field_, 8);
    word = (word | kCaseBits) & kPrefixMask[r.field_length];
    if (word == kHost) {
      if (++r.hosts > 1) return reject(400);
      r.header = Request::Header::host;
    } else if (word == kExpect) {
      r.header = Request::Header::expect;
      r.value_length = 0;
    } else if (r.field_length == 0) {
      // RFC 9110 section 5.1: a field name is a token, one byte or more.
      return reject(400);
    }
  } else if (r.field_length == 0) {
    return reject(400);  // in a trailer
  } else if (parser().header_state == kHeaderStateTransferEncoding && !r.in_trailers) {
    // RFC 9112 section 6.1: chunked is the one transfer coding a server
    // must know, and the only one we do. A second line, even one more
    // "chunked", is a coding on top of another: 501 as well.
    if (r.transfer_coding != 0) return reject(501);
    r.header = Request::Header::transfer_encoding;
    r.transfer_coding = 1;
  } else if (parser().header_state == kHeaderStateUpgrade && (h2c_upgrade_ || watch_ws_) &&
             !r.in_trailers) {
    r.header = Request::Header::upgrade;
    r.ws_upgrade_seen = true;
    // A second Upgrade line adds to the first (RFC 9110 section 5.3).
    if (watch_ws_ && r.ws_length[kWsUpgrade] > 0) keep_ws_value(kWsUpgrade, ",", 1);
  } else if (watch_ws_ && r.ws_name != 0) [[unlikely]] {
    r.header = r.in_trailers ? Request::Header::other : ws_header_named();
    r.ws_name = 0;  // the next name starts again
  }
  r.field_length = 0;
  return 0;
}

[[gnu::noinline]] int RequestReader::begin_shape_value() {
  request_.header = Request::Header::shape;
  // One text with the query's and the other X-Hello-Shape lines' parameters.
  if (request_.shape.length > 0) keep_shape_text("&", 1);
  return 0;
}

// Part of a header name: how much of "X-Hello-Shape" it matched so far
// (from nothing at its first span). A name that never comes here is not
// 13 bytes long, and on_header_field_complete() checks the length too.
[[gnu::noinline]] int RequestReader::match_shape_name(const char* at, size_t len) {
  uint8_t& matched = request_.shape.name;
  if (request_.field_length == len) matched = 0;
  for (size_t i = 0; i < len && matched != kNoShapeName; ++i) {
    if (matched < kShapeHeader.size() && to_lower_ascii(at[i]) == kShapeHeader[matched])
      ++matched;
    else
      matched = kNoShapeName;
  }
  return 0;
}

[[gnu::noinline]] void RequestReader::keep_shape_text(const char* at, size_t len) {
  Request::ShapeInput& s = request_.shape;
  size_t room = kMaxShapeText - s.length;
  if (len > room) {
    s.overflow = true;
    len = room;
  }
  memcpy(shape_text_.get() + s.length, at, len);
  s.length = static_cast<uint16_t>(s.length + len);
}

[[gnu::noinline]] void RequestReader::finish_value() {
  if (request_.header == Request::Header::expect)
    finish_expect();
  else if (request_.header >= Request::Header::shape)
    request_.header = Request::Header::other;
}

bool RequestReader::after_line_end(const char* at) {
  const char* begin = context().begin;
  const char* p = at;
  while (p > begin && (p[-1] == ' ' || p[-1] == '\t')) --p;
  return p > begin ? p[-1] == '\n' : tail_after_line_end_;
}

HELLO_CALLBACK int RequestReader::on_header_value(const char* at, size_t len) {
  using Header = Request::Header;
  Request& r = request_;
  r.head_bytes += len;
  if (r.head_bytes > limits_.max_header_bytes) return reject(431);
  // llhttp accepts obs-fold (a line starting with SP or HTAB continues the
  // previous value) and reports the continuation as a span of the value.
  // An ordinary value span follows "name:" and blanks on its own line; only
  // a fold's span follows a line end and blanks. RFC 9112 section 5.2 lets
  // a server reject folds with 400, and we do. An empty span is no fold:
  // llhttp reports an empty value (RFC 9110 section 5.5 allows one) at the
  // start of the next line, and the end of a value split after its last
  // byte at the start of the next read. (So a continuation line of blanks
  // alone after an empty value, which adds nothing to it, passes: section
  // 5.2 also lets a server read a fold as blanks.)
  const FeedContext& feed = context();
  bool after_colon = at - feed.begin >= 2 && at[-1] == ' ' && at[-2] == ':';
  if (!after_colon && len != 0 && after_line_end(at)) return reject(400);
  if (r.header == Header::other) return 0;
  // The whole value in one span (see read_host_value()), as long as the last
  // one found valid (8 to 16 bytes): the same bytes?
  if (r.header == Header::host && len == host_memo.length && at + len != feed.end) {
    uint64_t head;
    uint64_t tail;
    memcpy(&head, at, 8);
    memcpy(&tail, at + len - 8, 8);
    if (head == host_memo.head && tail == host_memo.tail) {
      r.header = Header::other;
      return 0;
    }
  }
  if (r.header == Header::shape) {
    keep_shape_text(at, len);
    return 0;
  }
  if (r.header == Header::upgrade) [[unlikely]] {
    if (h2c_upgrade_) note_upgrade(at, len);
    return watch_ws_ ? keep_ws_value(kWsUpgrade, at, len) : 0;
  }
  if (r.header >= Header::ws_key) [[unlikely]]
    return keep_ws_value(static_cast<int>(r.header) - static_cast<int>(Header::ws_key) + kWsKey, at,
                         len);
  if (r.header == Header::expect) {
    size_t kept = std::min(r.value_length, kExpectValue);
    memcpy(value_ + kept, at, std::min(len, kExpectValue - kept));
    r.value_length += len;
    return 0;
  }
  return r.header == Header::transfer_encoding ? read_transfer_coding(at, len)
                                               : read_host_value(at, len);
}

// A piece of the Host value, other than one the memo knows. llhttp calls
// back where the value ends (at its CR), or at the end of the bytes fed if
// it goes on in the next read: a span that stops short of them is the last,
// and the value is judged there.
[[gnu::noinline]] int RequestReader::read_host_value(const char* at, size_t len) {
  Request& r = request_;
  bool whole = r.header == Request::Header::host;
  if (whole) {
    host_.reset();
    r.header = Request::Header::host_continued;
  }
  host_.feed(at, len);
  if (at + len == context().end) return 0;
  r.header = Request::Header::other;
  // RFC 9112 section 3.2. An empty host would make an "http" URI without
  // one (RFC 9110 section 4.2.1), so it is refused too, unless the target
  // is absolute-form: then the Host value is not used at all.
  if (!host_.valid() || (host_.empty_host() && r.form != Request::TargetForm::absolute))
    return reject(400);
  if (whole && len - 8 <= 8 && !host_.empty_host()) {
    memcpy(&host_memo.head, at, 8);
    memcpy(&host_memo.tail, at + len - 8, 8);
    host_memo.length = len;
  }
  return 0;
}

// A piece of a Transfer-Encoding value: "chunked" in any case, then blanks
// (the blanks before it are not part of the span), or 501 where it ends
// (as for Host, a span that stops short of the bytes fed).
[[gnu::noinline]] int RequestReader::read_transfer_coding(const char* at, size_t len) {
  uint8_t& coding = request_.transfer_coding;  // 1 + the bytes of "chunked" matched
  for (size_t i = 0; i < len && coding != kOtherTransferCoding; ++i) {
    char c = at[i];
    size_t matched = coding - 1u;
    if (matched < kChunked.size() && to_lower_ascii(c) == kChunked[matched])
      ++coding;
    else if (matched != kChunked.size() || (c != ' ' && c != '\t'))
      coding = kOtherTransferCoding;
  }
  if (at + len == context().end) return 0;
  request_.header = Request::Header::other;
  return coding == 1 + kChunked.size() ? 0 : reject(501);
}

// Called once the Expect value is complete: when the next header name is,
// or the head. (No value-complete callback: one call less per header.)
void RequestReader::finish_expect() {
  Request& r = request_;
  // Trailing blanks are not part of a field value (RFC 9110 section 5.5).
  while (r.value_length > 0 && r.value_length <= kExpectValue &&
         (value_[r.value_length - 1] == ' ' || value_[r.value_length - 1] == '\t'))
    --r.value_length;
  if (r.value_length <= kExpectValue && equals_nocase({value_, r.value_length}, "100-continue"))
    r.expect_continue = true;
  else
    r.expect_unknown = true;
  r.header = Request::Header::other;
}

HELLO_CALLBACK int RequestReader::on_headers_complete() {
  Request& r = request_;
  const llhttp_t& p = parser();
  if (r.header >= Request::Header::expect) [[unlikely]]
    finish_value();
  r.in_trailers = true;
  if (p.http_major != 1) return reject(505);
  // RFC 9110 section 2.5: a higher minor version is processed as the
  // highest one implemented, as nginx does: HTTP/1.2 to 1.9 are read and
  // answered (status line, keep-alive, Host) as HTTP/1.1, and llhttp's own
  // keep-alive verdict after the request reads the version from here.
  if (p.http_minor > 1) [[unlikely]]
    parser().http_minor = 1;
  // RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host.
  if (p.http_minor == 1 && r.hosts == 0) return reject(400);
  if ((p.flags & F_CONTENT_LENGTH) && p.content_length > limits_.max_body_bytes) return reject(413);
  // RFC 9110 section 10.1.1: expectations of HTTP/1.0 requests are ignored.
  if (p.http_minor == 0) r.expect_continue = r.expect_unknown = false;
  bool has_body = (p.flags & F_CHUNKED) || ((p.flags & F_CONTENT_LENGTH) && p.content_length > 0);
  // The client may wait for this before it sends the body.
  if (r.expect_continue && !r.expect_unknown && has_body) context().out->append(kContinue);
  route_request();
  // llhttp never switches protocols for us: the session does, for Upgrade:
  // h2c with --h2 in clear (docs/http2.md), a request without a body in
  // HTTP/1.1; any other Upgrade header is ignored and the connection goes
  // on as HTTP/1.1. llhttp reads this flag after the callback returns.
  if (r.h2c && (has_body || p.http_minor != 1 || p.method == HTTP_CONNECT)) [[unlikely]]
    r.h2c = false;
  if (p.method != HTTP_CONNECT) parser().upgrade = 0;
  return 0;
}

// The route is known once the head is, so an echo route can keep the body.
HELLO_CALLBACK void RequestReader::route_request() {
  Request& r = request_;
  const llhttp_t& p = parser();
  RouteMatch m =
      r.path_too_long ? RouteMatch{-1, false, -1} : table_.match({path_, r.path_length}, p.method);
  r.route = m.route;
  r.path_known = m.path_known;
  r.path_route = m.path_route;
  r.echo = r.route >= 0 && table_.echo(r.route);
  // A GET at a WebSocket path: its handshake is judged when it ends.
  if (watch_ws_ && r.route < 0 && p.method == HTTP_GET) [[unlikely]]
    r.ws = table_.websocket()->has_path({path_, r.path_length});
  if (r.echo) {
    body_.clear();
    // Room for the body and the padding simdjson may read past its end, but
    // no more than a pooled session keeps: a header alone must not make the
    // server set aside --max-body-bytes. Once warm this allocates nothing.
    if (p.flags & F_CONTENT_LENGTH)
      body_.reserve(std::min(static_cast<size_t>(p.content_length), kPooledBody) + kJsonPadding);
  }
}

// A chunk's size line is complete; llhttp holds the size in content_length.
HELLO_CALLBACK int RequestReader::on_chunk_header() {
  // Chunked bodies are counted by their declared sizes, so a chunk that
  // would take the body over the limit is refused before its data comes, as
  // a Content-Length over it is. body_bytes never passes the limit: the
  // subtraction cannot wrap.
  uint64_t size = parser().content_length;
  if (size > limits_.max_body_bytes - request_.body_bytes) return reject(413);
  request_.body_bytes += size;
  return 0;
}

// A piece of a chunk extension's name or value (RFC 9112 section 7.1.1), or
// the 2 bytes of its ';' and '=' once its name is complete. llhttp 8.1 has
// no limit on them (a client could send gigabytes on one size line), and
// the reader discards them: it counts them with the head and the trailers
// against --max-header-bytes, one budget for all that a request says about
// itself besides its content. Past it 413, as Node (llhttp's own user)
// answers past 16 KiB of them.
HELLO_CALLBACK int RequestReader::on_chunk_extension(size_t len) {
  request_.head_bytes += len;
  return request_.head_bytes > limits_.max_header_bytes ? reject(413) : 0;
}

HELLO_CALLBACK int RequestReader::on_body(const char* at, size_t len) {
  // Content-Length was checked up front, chunks by on_chunk_header().
  if (request_.echo) body_.append(at, len);
  return 0;
}

}  // namespace hello
