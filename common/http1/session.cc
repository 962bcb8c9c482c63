#include "http1/session.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/check.h"
#include "persona/json_echo.h"

// The parser's callbacks are used only here, through the trampolines below:
// one call from llhttp instead of two.
#define HELLO_CALLBACK [[gnu::always_inline]] inline

namespace hello {

// Static trampolines: llhttp hands back the parser, whose data is the session.
struct SessionCallbacks {
  static Session* of(llhttp_t* p) { return static_cast<Session*>(p->data); }
  static int message_begin(llhttp_t* p) { return of(p)->on_message_begin(); }
  static int url(llhttp_t* p, const char* at, size_t n) { return of(p)->on_url(at, n); }
  static int header_field(llhttp_t* p, const char* at, size_t n) {
    return of(p)->on_header_field(at, n);
  }
  static int header_field_complete(llhttp_t* p) { return of(p)->on_header_field_complete(); }
  static int header_value(llhttp_t* p, const char* at, size_t n) {
    return of(p)->on_header_value(at, n);
  }
  static int headers_complete(llhttp_t* p) { return of(p)->on_headers_complete(); }
  static int body(llhttp_t* p, const char* at, size_t n) { return of(p)->on_body(at, n); }
  static int chunk_header(llhttp_t* p) { return of(p)->on_chunk_header(); }
  static int message_complete(llhttp_t* p) { return of(p)->on_message_complete(); }

  // With --shape, header names are also watched for X-Hello-Shape: other
  // trampolines, so that a session without it pays nothing for them.
  static int shape_header_field(llhttp_t* p, const char* at, size_t n) {
    Session* s = of(p);
    int rc = s->on_header_field(at, n);
    if (rc != 0) return rc;
    // Only a name of X-Hello-Shape's length is compared with it: one whole
    // in this span, or one that goes on in the next.
    if (n == kShapeHeaderLength || s->field_length_ != n || at + n == s->feed_end_)
      s->match_shape_name(at, n);
    return 0;
  }
  static int shape_header_field_complete(llhttp_t* p) {
    Session* s = of(p);
    bool shape = s->shape_input_.name == kShapeHeaderLength &&
                 s->field_length_ == kShapeHeaderLength && !s->in_trailers_;
    int rc = s->on_header_field_complete();
    if (rc == 0 && shape) s->begin_shape_value();
    return rc;
  }

  static llhttp_settings_t make() {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = message_begin;
    s.on_url = url;
    s.on_header_field = header_field;
    s.on_header_field_complete = header_field_complete;
    s.on_header_value = header_value;
    s.on_headers_complete = headers_complete;
    s.on_body = body;
    // Called only for chunked bodies: nothing on the path of a GET.
    s.on_chunk_header = chunk_header;
    s.on_message_complete = message_complete;
    return s;
  }
  static llhttp_settings_t make_shaping() {
    llhttp_settings_t s = make();
    s.on_header_field = shape_header_field;
    s.on_header_field_complete = shape_header_field_complete;
    return s;
  }

  static constexpr size_t kShapeHeaderLength = 13;  // "X-Hello-Shape"
};

namespace {

const llhttp_settings_t kSettings = SessionCallbacks::make();
const llhttp_settings_t kShapeSettings = SessionCallbacks::make_shaping();

// The interim answer to "Expect: 100-continue" (RFC 9110 section 10.1.1).
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// The CR LF and ": " around each header line, and the spaces and CR LF of
// the request line, which llhttp's spans leave out.
constexpr size_t kLineOverhead = 4;

// `b` is lower-case ASCII letters, digits and '-'. OR-ing 0x20 folds the
// case of a letter and leaves digits and '-' alone; the only other bytes it
// maps onto them are control characters, which llhttp's strict mode has
// already rejected in names and values.
bool equals_nocase(const char* a, size_t n, std::string_view b) {
  if (n != b.size()) return false;
  for (size_t i = 0; i < n; ++i)
    if ((a[i] | 0x20) != b[i]) return false;
  return true;
}

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

// The transfer coding whose name a Transfer-Encoding value must be.
constexpr std::string_view kChunked = "chunked";

// The header that carries shaping parameters, as matched: lower case.
constexpr std::string_view kShapeHeader = "x-hello-shape";
static_assert(kShapeHeader.size() == SessionCallbacks::kShapeHeaderLength);
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

Session::Session(const ResponseTable& table, Accounting& sink, const Limits& limits, Dice* dice)
    : table_(table),
      limits_(limits),
      sink_(sink),
      target_(sink.logs() ? new char[kMaxLoggedTarget] : nullptr),
      dice_(dice),
      shape_requests_(table.shape_requests()),
      shape_text_(shape_requests_ ? new char[kMaxShapeText] : nullptr) {
  HELLO_CHECK(dice != nullptr || !table.shaping());
  reset();
}

void Session::reset() {
  llhttp_init(&parser_, HTTP_REQUEST, shape_requests_ ? &kShapeSettings : &kSettings);
  parser_.data = this;
  state_ = State::idle;
  error_status_ = 0;
  tail_after_line_end_ = false;
  // A pooled session keeps a modest echo buffer, not the largest body ever.
  if (body_.capacity() > kPooledBody) std::string().swap(body_);
}

namespace {

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

}  // namespace

HELLO_CALLBACK void Session::enter(State to) {
  HELLO_CHECK((kEnteredFrom >> (4 * static_cast<int>(to) + static_cast<int>(state_))) & 1);
  state_ = to;
}

Fed Session::feed(const char* data, size_t len, std::string& out) {
  Fed fed;
  fed.consumed = len;
  // Closed or deferred, both rare: one test for the two.
  if (state_ >= State::deferred) [[unlikely]] {
    HELLO_CHECK(state_ == State::closed);  // a deferred answer is resume()d first
    fed.next = Fed::Next::close;
    return fed;
  }
  out_ = &out;
  answered_ = 0;
  feed_begin_ = data;
  feed_end_ = data + len;
  llhttp_errno_t err = llhttp_execute(&parser_, data, len);
  // Whether these bytes end in a line end and blanks, for a span that starts
  // the next read (see after_line_end()).
  const char* p = feed_end_;
  while (p > feed_begin_ && (p[-1] == ' ' || p[-1] == '\t')) --p;
  if (p > feed_begin_) tail_after_line_end_ = p[-1] == '\n';
  if (err != HPE_OK) {
    if (err == HPE_PAUSED) {
      // on_message_complete() paused: after a closing response, or before
      // an answer that waits. Parsing stopped where that request ended.
      // Or after an answer whose body the connection sends (stream_):
      // parsing goes on once it is sent.
      const char* at = llhttp_get_error_pos(&parser_);
      take_stream(fed);
      if (state_ == State::deferred) {
        fed.next = Fed::Next::later;
        fed.consumed = static_cast<size_t>(at - data);
        fed.delay_us = deferred_.delay_us;
        deferred_.clean_end = at == feed_end_;
      } else if (state_ == State::idle) {
        fed.consumed = static_cast<size_t>(at - data);
        llhttp_resume(&parser_);
      } else {
        fed.clean_end = at == feed_end_;
      }
    } else if (err == HPE_PAUSED_UPGRADE) {
      // CONNECT was answered; what follows would be a tunnel.
      if (state_ != State::closed) enter(State::closed);
    } else {
      int status = error_status_;
      if (status == 0) {
        // llhttp also says "invalid version" when a valid HTTP/1.x is not
        // followed by CRLF; only a version we do not speak earns 505.
        bool http1x = parser_.http_major == 1 && parser_.http_minor <= 1;
        status = err == HPE_INVALID_VERSION && !http1x  ? 505
                 : err == HPE_INVALID_TRANSFER_ENCODING ? 501
                                                        : 400;
      }
      fail(status);
    }
  }
  out_ = nullptr;
  fed.answered = answered_;
  if (state_ == State::closed)
    fed.next = Fed::Next::close;
  else if (state_ == State::in_request)
    fed.partial = true;
  return fed;
}

// A shaped answer pauses the parser whenever it leaves the connection
// something to do, so only a paused feed() (or a resume()) looks here.
void Session::take_stream(Fed& fed) {
  fed.body = stream_.body;
  fed.drip_us = stream_.drip_us;
  fed.reset = stream_.reset;
  stream_ = {};
}

Fed Session::resume(std::string& out) {
  HELLO_CHECK(state_ == State::deferred);
  out_ = &out;
  answered_ = 0;
  bool closes = deferred_.shaped ? answer_shaped(deferred_.variant, deferred_.head)
                                 : answer_request(deferred_.variant, deferred_.head);
  out_ = nullptr;
  Fed fed;
  fed.answered = answered_;
  fed.consumed = 0;
  take_stream(fed);
  if (deferred_.keep_alive && !closes) {
    enter(State::idle);
    llhttp_resume(&parser_);
  } else {
    enter(State::closed);
    fed.next = Fed::Next::close;
    fed.clean_end = deferred_.clean_end;
  }
  return fed;
}

void Session::time_out(std::string& out) {
  if (state_ == State::closed) return;
  out_ = &out;
  fail(408, false);
  out_ = nullptr;
}

int Session::reject(int status) {
  error_status_ = status;
  return HPE_USER;
}

HELLO_CALLBACK int Session::on_message_begin() {
  enter(State::in_request);
  path_length_ = 0;
  target_length_ = 0;
  path_done_ = false;
  path_too_long_ = false;
  head_bytes_ = 0;
  headers_ = 0;
  body_bytes_ = 0;
  field_length_ = 0;
  hosts_ = 0;
  header_ = Header::other;
  form_ = TargetForm::origin;
  transfer_coding_ = kNoTransferCoding;
  in_trailers_ = false;
  echo_ = false;
  expect_continue_ = false;
  expect_unknown_ = false;
  shape_input_ = {};
  return 0;
}

HELLO_CALLBACK int Session::on_url(const char* at, size_t len) {
  // No header has been counted yet: so far the head is the target.
  head_bytes_ += len;
  if (head_bytes_ + kLineOverhead > limits_.max_header_bytes) return reject(414);
  if (target_ != nullptr) keep_target(at, len);
  if (path_done_) [[unlikely]]
    return after_path(at, len);
  // An origin-form target starts with '/' (RFC 9112 section 3.2.1); any
  // other form is read by read_target_prefix(). (The first span of a target is
  // never empty: llhttp starts a span at a byte.)
  if (path_length_ == 0 && at[0] != '/') return read_target_prefix(at, len);
  copy_path(at, len);
  // A '?' ended the path: the query may shape the answer.
  if (path_done_ && shape_requests_) [[unlikely]]
    return begin_query(at, len);
  return 0;
}

// A span of the target after its path: more of an absolute-form prefix,
// or of the query.
[[gnu::noinline]] int Session::after_path(const char* at, size_t len) {
  if (form_ >= TargetForm::scheme) return read_target_prefix(at, len);
  if (shape_input_.in_query) keep_query(at, len);
  return 0;
}

// The span in which copy_path() ended the path: the query after its '?'.
[[gnu::noinline]] int Session::begin_query(const char* at, size_t len) {
  const char* end = at + len;
  const char* p = at;
  while (p < end && *p != '?' && *p != '#') ++p;
  if (p < end && *p == '?') {
    shape_input_.in_query = true;
    keep_query(p + 1, static_cast<size_t>(end - p - 1));
  }
  return 0;
}

// A target that is not origin-form. The path of an absolute-form target
// whose scheme is http or https (in any case) is routed as an origin-form
// one is (RFC 9112 section 3.2.2), and its authority must be a host (RFC
// 9110 section 4.2.1) and an optional port: no userinfo (section 4.2.4).
// Any other target (asterisk-form "*", CONNECT's authority-form, another
// scheme) matches no route. The prefix may come in any number of spans.
[[gnu::noinline]] int Session::read_target_prefix(const char* at, size_t len) {
  static constexpr std::string_view kScheme = "https://";
  const char* p = at;
  const char* end = at + len;
  if (form_ == TargetForm::origin) {
    // The first span: no route unless the scheme matches.
    form_ = TargetForm::scheme;
    scheme_matched_ = 0;
    path_done_ = true;
  }
  if (form_ == TargetForm::scheme) {
    for (; p < end && scheme_matched_ < kScheme.size(); ++p) {
      if (scheme_matched_ == 4 && *p == ':') scheme_matched_ = 5;  // "http://"
      // OR-ing 0x20 folds letters and leaves ':' and '/' alone.
      if ((*p | 0x20) != kScheme[scheme_matched_]) {
        form_ = TargetForm::other;
        return 0;
      }
      ++scheme_matched_;
    }
    if (scheme_matched_ < kScheme.size()) return 0;
    form_ = TargetForm::authority;
    host_.reset();
  }
  // The authority runs to the path, the query or the end of the target.
  const char* q = p;
  while (q < end && *q != '/' && *q != '?' && *q != '#') ++q;
  host_.feed(p, static_cast<size_t>(q - p));
  // A span that stops short of the bytes fed is the end of the target: llhttp
  // calls back there when it meets the space after it.
  if (q == end && end == feed_end_) return 0;
  if (!host_.valid() || host_.empty_host()) return reject(400);
  form_ = TargetForm::absolute;
  // The path of "http://x" and of "http://x?q" is "/".
  path_[0] = '/';
  path_length_ = 1;
  if (q != end && *q == '?' && shape_requests_) {
    shape_input_.in_query = true;
    keep_query(q + 1, static_cast<size_t>(end - q - 1));
  }
  if (q == end || *q != '/') return 0;
  path_length_ = 0;
  path_done_ = false;
  copy_path(q, static_cast<size_t>(end - q));
  if (path_done_ && shape_requests_) return begin_query(q, static_cast<size_t>(end - q));
  return 0;
}

HELLO_CALLBACK void Session::copy_path(const char* at, size_t len) {
  // Copy the path up to '?' or '#'; a path longer than any route is only
  // scanned as far as that.
  size_t room = kMaxPath - path_length_;
  size_t n = 0;
  for (; n < len && n <= room; ++n) {
    char c = at[n];
    if (c == '?' || c == '#') {
      path_done_ = true;
      break;
    }
    if (n < room) path_[path_length_ + n] = c;
  }
  if (n > room) {
    path_too_long_ = true;
    path_done_ = true;
    return;
  }
  path_length_ = static_cast<uint16_t>(path_length_ + n);
}

HELLO_CALLBACK int Session::on_header_field(const char* at, size_t len) {
  head_bytes_ += len;
  if (head_bytes_ > limits_.max_header_bytes) return reject(431);

  // Only "Host" and "Expect" matter, so only names that short are kept.
  size_t end = field_length_ + len;
  if (end <= kFieldPrefix) {
    if (field_length_ == 0 && feed_end_ - at >= 8)
      memcpy(field_, at, 8);  // one load; the bytes past the name are masked off
    else
      for (size_t i = 0; i < len; ++i) field_[field_length_ + i] = at[i];
  }
  field_length_ = end;
  return 0;
}

HELLO_CALLBACK int Session::on_header_field_complete() {
  // The previous header's value is complete once the next name is.
  if (header_ >= Header::expect) [[unlikely]]
    finish_value();
  if (++headers_ > Limits::kMaxHeaders) return reject(431);
  head_bytes_ += kLineOverhead;
  // Trailers (after a chunked body) are counted, but Host, Expect and
  // Transfer-Encoding mean nothing there.
  if (field_length_ <= kFieldPrefix && !in_trailers_) {
    // The name's first bytes as one word, case folded: OR-ing 0x20 folds
    // the letters of "host" and "expect" (see equals_nocase()).
    uint64_t word;
    memcpy(&word, field_, 8);
    word = (word | kCaseBits) & kPrefixMask[field_length_];
    if (word == kHost) {
      if (++hosts_ > 1) return reject(400);
      header_ = Header::host;
    } else if (word == kExpect) {
      header_ = Header::expect;
      value_length_ = 0;
    } else if (field_length_ == 0) {
      // RFC 9110 section 5.1: a field name is a token, one byte or more.
      return reject(400);
    }
  } else if (field_length_ == 0) {
    return reject(400);  // in a trailer
  } else if (parser_.header_state == kHeaderStateTransferEncoding && !in_trailers_) {
    // RFC 9112 section 6.1: chunked is the one transfer coding a server
    // must know, and the only one we do. A second line, even one more
    // "chunked", is a coding on top of another: 501 as well.
    if (transfer_coding_ != kNoTransferCoding) return reject(501);
    header_ = Header::transfer_encoding;
    transfer_coding_ = 0;
  }
  field_length_ = 0;
  return 0;
}

[[gnu::noinline]] int Session::begin_shape_value() {
  header_ = Header::shape;
  // One text with the query's and the other X-Hello-Shape lines' parameters.
  if (shape_input_.length > 0) keep_shape_text("&", 1);
  return 0;
}

// Part of a header name: how much of "X-Hello-Shape" it matched so far
// (from nothing at its first span). A name that never comes here is not
// 13 bytes long, and on_header_field_complete() checks the length too.
[[gnu::noinline]] int Session::match_shape_name(const char* at, size_t len) {
  uint8_t& matched = shape_input_.name;
  if (field_length_ == len) matched = 0;
  for (size_t i = 0; i < len && matched != kNoShapeName; ++i) {
    if (matched < kShapeHeader.size() && (at[i] | 0x20) == kShapeHeader[matched])
      ++matched;
    else
      matched = kNoShapeName;
  }
  return 0;
}

// Keeps a piece of the target's query, which ends at '#' or with the target.
[[gnu::noinline]] void Session::keep_query(const char* at, size_t len) {
  const char* hash = static_cast<const char*>(memchr(at, '#', len));
  if (hash != nullptr) {
    shape_input_.in_query = false;
    len = static_cast<size_t>(hash - at);
  }
  keep_shape_text(at, len);
}

[[gnu::noinline]] void Session::keep_shape_text(const char* at, size_t len) {
  size_t room = kMaxShapeText - shape_input_.length;
  if (len > room) {
    shape_input_.overflow = true;
    len = room;
  }
  memcpy(shape_text_.get() + shape_input_.length, at, len);
  shape_input_.length = static_cast<uint16_t>(shape_input_.length + len);
}

[[gnu::noinline]] void Session::finish_value() {
  if (header_ == Header::expect)
    finish_expect();
  else if (header_ == Header::shape)
    header_ = Header::other;
}

bool Session::after_line_end(const char* at) const {
  const char* p = at;
  while (p > feed_begin_ && (p[-1] == ' ' || p[-1] == '\t')) --p;
  return p > feed_begin_ ? p[-1] == '\n' : tail_after_line_end_;
}

HELLO_CALLBACK int Session::on_header_value(const char* at, size_t len) {
  head_bytes_ += len;
  if (head_bytes_ > limits_.max_header_bytes) return reject(431);
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
  bool after_colon = at - feed_begin_ >= 2 && at[-1] == ' ' && at[-2] == ':';
  if (!after_colon && len != 0 && after_line_end(at)) return reject(400);
  if (header_ == Header::other) return 0;
  // The whole value in one span (see read_host_value()), as long as the last
  // one found valid (8 to 16 bytes): the same bytes?
  if (header_ == Header::host && len == host_memo.length && at + len != feed_end_) {
    uint64_t head;
    uint64_t tail;
    memcpy(&head, at, 8);
    memcpy(&tail, at + len - 8, 8);
    if (head == host_memo.head && tail == host_memo.tail) {
      header_ = Header::other;
      return 0;
    }
  }
  if (header_ == Header::shape) {
    keep_shape_text(at, len);
    return 0;
  }
  if (header_ == Header::expect) {
    size_t room = kExpectValue - std::min(value_length_, kExpectValue);
    memcpy(value_ + std::min(value_length_, kExpectValue), at, std::min(len, room));
    value_length_ += len;
    return 0;
  }
  return header_ == Header::transfer_encoding ? read_transfer_coding(at, len)
                                              : read_host_value(at, len);
}

// A piece of the Host value, other than one the memo knows. llhttp calls
// back where the value ends (at its CR), or at the end of the bytes fed if
// it goes on in the next read: a span that stops short of them is the last,
// and the value is judged there.
[[gnu::noinline]] int Session::read_host_value(const char* at, size_t len) {
  bool whole = header_ == Header::host;
  if (whole) {
    host_.reset();
    header_ = Header::host_continued;
  }
  host_.feed(at, len);
  if (at + len == feed_end_) return 0;
  header_ = Header::other;
  // RFC 9112 section 3.2. An empty host would make an "http" URI without
  // one (RFC 9110 section 4.2.1), so it is refused too, unless the target
  // is absolute-form: then the Host value is not used at all.
  if (!host_.valid() || (host_.empty_host() && form_ != TargetForm::absolute)) return reject(400);
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
[[gnu::noinline]] int Session::read_transfer_coding(const char* at, size_t len) {
  for (size_t i = 0; i < len && transfer_coding_ != kOtherTransferCoding; ++i) {
    char c = at[i];
    if (transfer_coding_ < kChunked.size() && (c | 0x20) == kChunked[transfer_coding_])
      ++transfer_coding_;
    else if (transfer_coding_ != kChunked.size() || (c != ' ' && c != '\t'))
      transfer_coding_ = kOtherTransferCoding;
  }
  if (at + len == feed_end_) return 0;
  header_ = Header::other;
  return transfer_coding_ == kChunked.size() ? 0 : reject(501);
}

// Called once the Expect value is complete: when the next header name is,
// or the head. (No value-complete callback: one call less per header.)
void Session::finish_expect() {
  // Trailing blanks are not part of a field value (RFC 9110 section 5.5).
  while (value_length_ > 0 && value_length_ <= kExpectValue &&
         (value_[value_length_ - 1] == ' ' || value_[value_length_ - 1] == '\t'))
    --value_length_;
  if (equals_nocase(value_, value_length_, "100-continue"))
    expect_continue_ = true;
  else
    expect_unknown_ = true;
  header_ = Header::other;
}

HELLO_CALLBACK int Session::on_headers_complete() {
  if (header_ >= Header::expect) [[unlikely]]
    finish_value();
  in_trailers_ = true;
  if (parser_.http_major != 1) return reject(505);
  // RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host.
  if (parser_.http_minor == 1 && hosts_ == 0) return reject(400);
  if ((parser_.flags & F_CONTENT_LENGTH) && parser_.content_length > limits_.max_body_bytes)
    return reject(413);
  // RFC 9110 section 10.1.1: expectations of HTTP/1.0 requests are ignored.
  if (parser_.http_minor == 0) expect_continue_ = expect_unknown_ = false;
  bool has_body = (parser_.flags & F_CHUNKED) ||
                  ((parser_.flags & F_CONTENT_LENGTH) && parser_.content_length > 0);
  // The client may wait for this before it sends the body.
  if (expect_continue_ && !expect_unknown_ && has_body) out_->append(kContinue);
  // The route is known now, so an echo route can keep the body.
  RouteMatch m = path_too_long_ ? RouteMatch{-1, false, -1}
                                : table_.match({path_, path_length_}, parser_.method);
  route_ = m.route;
  path_known_ = m.path_known;
  path_route_ = m.path_route;
  echo_ = route_ >= 0 && table_.echo(route_);
  if (echo_) {
    body_.clear();
    // Room for the body and the padding simdjson may read past its end, but
    // no more than a pooled session keeps: a header alone must not make the
    // server set aside --max-body-bytes. Once warm this allocates nothing.
    if (parser_.flags & F_CONTENT_LENGTH)
      body_.reserve(std::min(static_cast<size_t>(parser_.content_length), kPooledBody) +
                    kJsonPadding);
  }
  // We never switch protocols: an Upgrade header (curl --http2 sends
  // "Upgrade: h2c") is ignored and the connection goes on as HTTP/1.1.
  // llhttp reads this flag after the callback returns.
  if (parser_.method != HTTP_CONNECT) parser_.upgrade = 0;
  return 0;
}

// A chunk's size line is complete; llhttp holds the size in content_length.
HELLO_CALLBACK int Session::on_chunk_header() {
  // Chunked bodies are counted by their declared sizes, so a chunk that
  // would take the body over the limit is refused before its data comes, as
  // a Content-Length over it is. body_bytes_ never passes the limit: the
  // subtraction cannot wrap.
  if (parser_.content_length > limits_.max_body_bytes - body_bytes_) return reject(413);
  body_bytes_ += parser_.content_length;
  return 0;
}

HELLO_CALLBACK int Session::on_body(const char* at, size_t len) {
  // Content-Length was checked up front, chunks by on_chunk_header().
  if (echo_) body_.append(at, len);
  return 0;
}

HELLO_CALLBACK int Session::on_message_complete() {
  const ConnectionPolicy& policy = table_.policy();
  bool http11 = parser_.http_minor == 1;
  int method = parser_.method;
  // After CONNECT the client would speak a tunnel protocol: answer and close.
  // llhttp_should_keep_alive() for a request, without its two calls.
  bool client_keeps = http11 ? !(parser_.flags & F_CONNECTION_CLOSE)
                             : (parser_.flags & F_CONNECTION_KEEP_ALIVE) != 0;
  bool keep_alive = client_keeps && !policy.always_close && (http11 || policy.keep_alive_http10) &&
                    method != HTTP_CONNECT;
  Variant v = variant_of(http11, keep_alive);
  bool head = method == HTTP_HEAD;
  // Answers that wait or are shaped: one test when the table has neither.
  if (table_.waits_or_shapes() && route_ >= 0 && !expect_unknown_) [[unlikely]] {
    int rc = complete_routed(v, head, keep_alive);
    if (rc != kAnswerAsUsual) return rc;
  }
  if (answer_request(v, head)) keep_alive = false;  // a body ended by the close
  if (keep_alive) {
    enter(State::idle);
    return 0;
  }
  enter(State::closed);
  // Stop here: nothing after a closing response is answered.
  return HPE_PAUSED;
}

// A request to a route of a table whose answers may wait or be shaped:
// kAnswerAsUsual if this one neither waits nor is shaped.
[[gnu::noinline]] int Session::complete_routed(Variant v, bool head, bool keep_alive) {
  if (table_.shaping()) return complete_shaped(v, head, keep_alive);
  return complete_waiting(v, head, keep_alive);
}

// A route with a delay is answered later: parsing pauses here, and
// resume() sends the answer.
int Session::complete_waiting(Variant v, bool head, bool keep_alive) {
  uint64_t delay = table_.delay_us(route_);
  if (delay == 0) return kAnswerAsUsual;
  deferred_ = {delay, v, head, keep_alive};
  enter(State::deferred);
  return HPE_PAUSED;
}

int Session::after_answer(bool keep_alive) {
  if (keep_alive) {
    enter(State::idle);
    // Stop here while the connection sends a body by reference.
    return stream_.body.length > 0 ? HPE_PAUSED : 0;
  }
  enter(State::closed);
  // Stop here: nothing after a closing response is answered.
  return HPE_PAUSED;
}

// The request's own parameters if it has any, else the route's shape or
// the default; a request none of them shapes is answered as usual.
int Session::complete_shaped(Variant v, bool head, bool keep_alive) {
  if (shape_input_.length > 0 || shape_input_.overflow) [[unlikely]]
    return complete_with_parameters(v, head, keep_alive);
  current_shape_ = table_.shape_of(route_);
  if (current_shape_ == nullptr) return complete_waiting(v, head, keep_alive);
  return complete_by_shape(v, head, keep_alive);
}

// The request carries shaping text: its parameters, or 400.
[[gnu::noinline]] int Session::complete_with_parameters(Variant v, bool head, bool keep_alive) {
  shape_.clear();
  ShapeError error;
  bool ok;
  if (shape_input_.overflow) {
    static_assert(kMaxShapeText == 4096);
    constexpr std::string_view kTooLong = "shaping parameters: over 4096 bytes";
    memcpy(error.text, kTooLong.data(), kTooLong.size());
    error.length = kTooLong.size();
    ok = false;
  } else {
    ok = parse_shape(shape_text_.get(), shape_input_.length, table_.shape_limits(), shape_, error);
  }
  if (!ok) {
    // The request asked for something wrong: 400, and the connection goes on.
    char line[sizeof error.text + 1];
    memcpy(line, error.text, error.length);
    line[error.length] = '\n';
    answer_with(table_.bad_request(v), {line, error.length + 1}, head,
                Answered::Shaping::bad_parameters);
    return after_answer(keep_alive);
  }
  // Only unknown parameters: as if it carried none.
  current_shape_ = shape_.any() ? &shape_ : table_.shape_of(route_);
  if (current_shape_ == nullptr) return complete_waiting(v, head, keep_alive);
  return complete_by_shape(v, head, keep_alive);
}

// Decides what current_shape_ does to this answer; answers now, or defers.
[[gnu::noinline]] int Session::complete_by_shape(Variant v, bool head, bool keep_alive) {
  decision_ = dice_->decide(*current_shape_);
  // The rest of a delay mix, like the rest of any mix, is the route's own.
  if (!decision_.delayed) decision_.delay_us = table_.delay_us(route_);
  uint64_t delay = decision_.delay_us;
  if (delay > 0) {
    deferred_ = {delay, v, head, keep_alive};
    deferred_.shaped = true;
    enter(State::deferred);
    return HPE_PAUSED;
  }
  if (answer_shaped(v, head)) keep_alive = false;
  return after_answer(keep_alive);
}

bool Session::answer_shaped(Variant v, bool head) {
  const Decision& d = decision_;
  const Shape& shape = *current_shape_;
  if (d.reset) {
    // No answer at all: the connection resets.
    Answered a;
    a.shaping = Answered::Shaping::reset;
    sink_.answered(a);
    stream_.reset = true;
    return true;
  }
  bool http11 = v == Variant::keep_alive_11 || v == Variant::close_11;
  if (d.close) v = variant_of(http11, false);
  uint16_t status = d.status != 0 ? d.status : table_.status(route_);
  std::string_view text;
  if (echo_ && !d.sized) {
    EchoResult echo = echo_json(body_);
    if (!echo.ok) {
      // The echo's 400 for a body that is not JSON is not shaped.
      answer_with(table_.bad_request(v), echo.text, head);
      return d.close;
    }
    text = echo.text;
  } else if (!d.sized) {
    text = table_.content(route_);
  }
  bool bodyless = status == 204 || status == 304;
  uint64_t length = bodyless ? 0 : d.sized ? d.size : text.size();
  char decision[kDecisionText];
  size_t n = format_decision(shape, d, status, length, decision);
  table_.append_shaped_head(*out_, route_, v, status, length, shape, {decision, n});
  if (!head && length > 0) {
    if (d.sized) {
      stream_.body = {pattern_bytes(), kPatternBytes, length};
    } else if (d.drip_us > 0) {
      // Sent piece by piece later: the echo's text must outlive the next
      // request's, so the session keeps a copy.
      if (echo_) {
        body_.assign(text);
        text = body_;
      }
      stream_.body = {text.data(), text.size(), text.size()};
    } else {
      out_->append(text);
    }
    stream_.drip_us = d.drip_us;
  }
  note_status(status, head ? 0 : length, Answered::Kind::request, Answered::Shaping::shaped);
  return d.close;
}

HELLO_CALLBACK bool Session::answer_request(Variant v, bool head) {
  // The common case first: a route's own answer.
  if (route_ >= 0 && !expect_unknown_) {
    if (echo_) {
      answer_echo(v);
      return false;
    }
    const PreparedResponse& r = table_.route(route_, v, head);
    answer(r, head, Answered::Kind::request);
    // A body without a length is ended by closing; its bytes say close.
    return r.closes;
  }
  constexpr Answered::Kind kRequest = Answered::Kind::request;
  if (expect_unknown_)
    answer(table_.error(417, v), head, kRequest);
  else if (!path_known_)
    answer(table_.error(404, v), head, kRequest);
  else
    answer(table_.not_allowed(path_route_, v), head, kRequest);
  return false;
}

void Session::answer_echo(Variant v) {
  EchoResult echo = echo_json(body_);
  answer_with(echo.ok ? table_.route(route_, v) : table_.bad_request(v), echo.text);
}

HELLO_CALLBACK void Session::answer_with(const PreparedResponse& r, std::string_view body,
                                         bool head_only, Answered::Shaping shaping) {
  char digits[20];
  char* end = std::to_chars(digits, digits + sizeof digits, body.size()).ptr;
  out_->append(r.bytes.data(), static_cast<size_t>(r.length_offset));
  out_->append(digits, static_cast<size_t>(end - digits));
  out_->append(r.bytes.data() + r.length_offset,
               r.head_length - static_cast<size_t>(r.length_offset));
  if (!head_only) out_->append(body);
  note_status(r.status, head_only ? 0 : body.size(), Answered::Kind::request, shaping);
}

// Out of line, so that the callback without a log saves no registers for it.
[[gnu::noinline]] void Session::keep_target(const char* at, size_t len) {
  size_t n = std::min(len, kMaxLoggedTarget - target_length_);
  memcpy(target_.get() + target_length_, at, n);
  target_length_ = static_cast<uint16_t>(target_length_ + n);
}

HELLO_CALLBACK void Session::answer(const PreparedResponse& r, bool head_only,
                                    Answered::Kind kind) {
  size_t length = head_only ? r.head_length : r.bytes.size();
  out_->append(r.bytes.data(), length);
  note_status(r.status, length - r.head_length, kind);
}

HELLO_CALLBACK void Session::note_status(int status, size_t body_bytes, Answered::Kind kind,
                                         Answered::Shaping shaping) {
  ++answered_;
  Answered a;
  a.status = static_cast<uint16_t>(status);
  a.kind = kind;
  a.shaping = shaping;
  a.body_bytes = body_bytes;
  if (target_ != nullptr) [[unlikely]] {
    note_logged(a);
    return;
  }
  sink_.answered(a);
}

// Out of line, so that a session without a log saves no registers for it.
[[gnu::noinline]] void Session::note_logged(Answered& a) {
  if (a.kind == Answered::Kind::request)
    a.method = llhttp_method_name(static_cast<llhttp_method_t>(parser_.method));
  a.target = {target_.get(), target_length_};
  a.http_minor = static_cast<uint8_t>(parser_.http_minor);
  sink_.answered(a);
}

void Session::fail(int status, bool malformed) {
  bool http10 = parser_.http_major == 1 && parser_.http_minor == 0;
  answer(table_.error(status, variant_of(!http10, false)), false,
         malformed ? Answered::Kind::malformed : Answered::Kind::timed_out);
  enter(State::closed);
}

}  // namespace hello
