#include "session.h"

#include <strings.h>

#include <algorithm>
#include <cstring>

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
  static int headers_complete(llhttp_t* p) { return of(p)->on_headers_complete(); }
  static int message_complete(llhttp_t* p) { return of(p)->on_message_complete(); }

  static llhttp_settings_t make() {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = message_begin;
    s.on_url = url;
    s.on_header_field = header_field;
    s.on_header_field_complete = header_field_complete;
    s.on_headers_complete = headers_complete;
    s.on_message_complete = message_complete;
    return s;
  }
};

namespace {

const llhttp_settings_t kSettings = SessionCallbacks::make();

}  // namespace

Session::Session(const ResponseTable& table, WorkerStats& stats, AccessLog* log)
    : table_(table), stats_(stats), log_(log) {
  reset();
}

void Session::reset(std::string_view peer) {
  peer_ = peer;
  llhttp_init(&parser_, HTTP_REQUEST, &kSettings);
  parser_.data = this;
  closing_ = false;
  mid_request_ = false;
  error_status_ = 0;
}

bool Session::feed(const char* data, size_t len, std::string& out) {
  if (closing_) return false;
  out_ = &out;
  llhttp_errno_t err = llhttp_execute(&parser_, data, len);
  if (err != HPE_OK && err != HPE_PAUSED) {
    if (err == HPE_PAUSED_UPGRADE) {
      // The request was answered; what follows speaks another protocol.
      closing_ = true;
    } else {
      int status = error_status_;
      if (status == 0) {
        status = err == HPE_INVALID_VERSION             ? 505
                 : err == HPE_INVALID_TRANSFER_ENCODING ? 501
                                                        : 400;
      }
      fail(status);
    }
  }
  out_ = nullptr;
  return !closing_;
}

int Session::on_message_begin() {
  mid_request_ = true;
  path_length_ = 0;
  target_length_ = 0;
  path_done_ = false;
  path_too_long_ = false;
  field_length_ = 0;
  hosts_ = 0;
  return 0;
}

int Session::on_url(const char* at, size_t len) {
  if (log_ != nullptr) {
    size_t n = std::min(len, kMaxLoggedTarget - target_length_);
    memcpy(target_ + target_length_, at, n);
    target_length_ = static_cast<uint16_t>(target_length_ + n);
  }
  if (path_done_) return 0;
  const char* end = static_cast<const char*>(memchr(at, '?', len));
  if (const char* hash = static_cast<const char*>(memchr(at, '#', len));
      hash && (!end || hash < end))
    end = hash;
  size_t n = end ? static_cast<size_t>(end - at) : len;
  if (end) path_done_ = true;
  if (n > kMaxPath - path_length_) {
    path_too_long_ = true;
    path_done_ = true;
    return 0;
  }
  memcpy(path_ + path_length_, at, n);
  path_length_ = static_cast<uint16_t>(path_length_ + n);
  return 0;
}

int Session::on_header_field(const char* at, size_t len) {
  size_t room = field_length_ < sizeof field_ ? sizeof field_ - field_length_ : 0;
  memcpy(field_ + field_length_, at, len < room ? len : room);
  // Only whether the name is exactly four bytes matters, so the count
  // saturates instead of wrapping on absurdly long names.
  field_length_ = static_cast<uint16_t>(std::min<size_t>(field_length_ + len, 0xff));
  return 0;
}

int Session::on_header_field_complete() {
  if (field_length_ == 4 && strncasecmp(field_, "host", 4) == 0 && hosts_ < 2) ++hosts_;
  field_length_ = 0;
  return 0;
}

int Session::on_headers_complete() {
  if (parser_.http_major != 1) {
    error_status_ = 505;
    return -1;
  }
  // RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host; no
  // request may have two.
  if (hosts_ > 1 || (parser_.http_minor == 1 && hosts_ == 0)) {
    error_status_ = 400;
    return -1;
  }
  // We never switch protocols: an Upgrade header (curl --http2 sends
  // "Upgrade: h2c") is ignored and the connection goes on as HTTP/1.1.
  // llhttp reads this flag after the callback returns.
  if (parser_.method != HTTP_CONNECT) parser_.upgrade = 0;
  return 0;
}

int Session::on_message_complete() {
  const ConnectionPolicy& policy = table_.policy();
  bool http11 = parser_.http_minor == 1;
  int method = llhttp_get_method(&parser_);
  // After CONNECT the client would speak a tunnel protocol: answer and close.
  bool keep_alive = llhttp_should_keep_alive(&parser_) && !policy.always_close &&
                    (http11 || policy.keep_alive_http10) && method != HTTP_CONNECT;
  Variant v = variant_of(http11, keep_alive);
  bool head = method == HTTP_HEAD;
  int route = path_too_long_ ? -1 : table_.find_route({path_, path_length_});

  stats_.requests.add();
  if (route < 0)
    answer(table_.error(404, v), head, true);
  else if (method == HTTP_GET || (head && table_.policy().head_allowed))
    answer(table_.route(route, v), head, true);
  else
    answer(table_.error(405, v), head, true);

  mid_request_ = false;
  if (keep_alive) return 0;
  closing_ = true;
  // Stop here: nothing after a closing response is answered.
  return HPE_PAUSED;
}

void Session::answer(const PreparedResponse& r, bool head_only, bool parsed) {
  size_t length = head_only ? r.head_length : r.bytes.size();
  out_->append(r.bytes.data(), length);
  if (r.status < 300)
    stats_.responses_2xx.add();
  else if (r.status < 500)
    stats_.responses_4xx.add();
  else
    stats_.responses_5xx.add();
  if (log_ == nullptr) return;
  std::string_view method =
      parsed ? llhttp_method_name(static_cast<llhttp_method_t>(parser_.method)) : "";
  log_->append(peer_, method, {target_, target_length_}, parser_.http_minor, r.status,
               length - r.head_length);
}

void Session::fail(int status) {
  stats_.parse_errors.add();
  bool http10 = parser_.http_major == 1 && parser_.http_minor == 0;
  answer(table_.error(status, variant_of(!http10, false)), false, false);
  mid_request_ = false;
  closing_ = true;
}

}  // namespace hello
