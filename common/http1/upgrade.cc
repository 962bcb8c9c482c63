// Upgrade: h2c in the HTTP/1 heart (docs/http2.md, RFC 7540 section 3.2):
// the reader notes an Upgrade value naming h2c, and the session, once the
// request has ended, switches if its head holds exactly one HTTP2-Settings.
// All of it off the common path: a request without Upgrade never comes here.
#include <string>
#include <string_view>

#include "http/field_syntax.h"
#include "http1/session.h"

namespace hello {

// A whole Upgrade value in this read: does it name h2c (RFC 7540 section
// 3.2; tokens compared without case)?
[[gnu::noinline]] void RequestReader::note_upgrade(const char* at, size_t len) {
  const FeedContext& feed = context();
  if (at + len == feed.end) return;  // it may go on in the next read: no upgrade
  std::string_view v(at, len);
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view token = v.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (equals_nocase(token, "h2c")) {
      request_.h2c = true;
      upgrade_at_ = at;
      upgrade_feed_begin_ = feed.begin;
      upgrade_feed_end_ = feed.end;
      return;
    }
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
}

std::string_view RequestReader::upgrade_head() const {
  if (upgrade_at_ == nullptr) return {};
  std::string_view before(upgrade_feed_begin_,
                          static_cast<size_t>(upgrade_at_ - upgrade_feed_begin_));
  std::string_view after(upgrade_at_, static_cast<size_t>(upgrade_feed_end_ - upgrade_at_));
  size_t start = before.rfind("\r\n\r\n");
  start = start == std::string_view::npos ? 0 : start + 4;
  size_t end = after.find("\r\n\r\n");
  if (end == std::string_view::npos) return {};
  return {upgrade_feed_begin_ + start, before.size() - start + end + 4};
}

namespace {

int base64url_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// RFC 4648 section 5's base64url, padding optional (RFC 7540 section 3.2.1
// sends none); false for any other byte.
bool decode_base64url(std::string_view in, std::string& out) {
  out.clear();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    int d = base64url_digit(c);
    if (d < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(d);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return count < 6;  // a lone sixth of a byte is no encoding
}

}  // namespace

// A request with Upgrade: h2c has ended (HTTP/1.1, no body: see the
// reader). It switches if its head was read whole in this read and has
// exactly one HTTP2-Settings holding a SETTINGS payload (RFC 7540 section
// 3.2.1: "A server MUST NOT upgrade ... if this header field is not
// present or if more than one is present"); otherwise it is answered in
// HTTP/1.1 as any other.
[[gnu::noinline]] bool Session::begin_upgrade() {
  std::string_view head = upgrade_head();
  std::string_view method = llhttp_method_name(static_cast<llhttp_method_t>(parser().method));
  if (head.size() <= method.size() || head.substr(0, method.size()) != method ||
      head[method.size()] != ' ')
    return false;
  int found = 0;
  std::string_view value;
  size_t at = head.find("\r\n") + 2;
  while (at < head.size()) {
    size_t eol = head.find("\r\n", at);
    if (eol == std::string_view::npos || eol == at) break;
    std::string_view line = head.substr(at, eol - at);
    at = eol + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !equals_nocase(line.substr(0, colon), "http2-settings"))
      continue;
    ++found;
    value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  }
  if (found != 1 || !decode_base64url(value, upgrade_settings_) ||
      upgrade_settings_.size() % 6 != 0)
    return false;
  upgrade_.settings = upgrade_settings_;
  upgrade_.method = parser().method;
  upgrade_.path = path();
  upgrade_.shape =
      shape_requests_ ? std::string_view(shape_text(), request_.shape.length) : std::string_view();
  upgrading_ = true;
  enter(State::closed);
  return true;
}

}  // namespace hello
