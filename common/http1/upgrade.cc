// The upgrades of the HTTP/1 heart, all of them off the common path: a
// request without Upgrade never comes here.
// - Upgrade: h2c (docs/http2.md, RFC 7540 section 3.2): the reader notes an
//   Upgrade value naming h2c, and the session, once the request has ended,
//   switches if its head holds exactly one HTTP2-Settings.
// - A WebSocket (docs/websocket.md, RFC 6455 section 4): at a persona with
//   a WebSocket path the reader keeps the handshake's fields as they come;
//   a GET at that path is judged when it ends, and switches (the WebSocket
//   heart sends the 101) or is refused as the persona's framework refuses it.
#include <algorithm>
#include <cstring>
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
  if (!list_has_token({at, len}, "h2c")) return;
  request_.h2c = true;
  upgrade_at_ = at;
  upgrade_feed_begin_ = feed.begin;
  upgrade_feed_end_ = feed.end;
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
    value = trim_ows(line.substr(colon + 1));
  }
  if (found != 1 || !decode_base64url(value, upgrade_settings_) ||
      upgrade_settings_.size() % 6 != 0)
    return false;
  upgrade_ = {};  // a pooled session may have switched to a WebSocket before
  upgrade_.to = Upgrade::To::h2c;
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

namespace hello {

// The WebSocket handshake's fields (RFC 6455 section 4.2.1), kept as they
// come, in any number of reads, only at a persona with a WebSocket path.

// Part of a header name longer than the reader's prefix: its first
// kWsName bytes are kept (with the prefix field_ held, for a name whose
// first spans were short).
[[gnu::noinline]] void RequestReader::keep_ws_name(const char* at, size_t len) {
  Request& r = request_;
  size_t from = r.field_length;
  if (from > 0 && from <= kFieldPrefix) {
    memcpy(ws_name_, field_, from);
    r.ws_name = static_cast<uint8_t>(from);
  } else if (from == 0) {
    r.ws_name = 0;
  }
  size_t n = std::min(len, kWsName - std::min<size_t>(r.ws_name, kWsName));
  memcpy(ws_name_ + r.ws_name, at, n);
  r.ws_name = static_cast<uint8_t>(r.ws_name + n);
}

[[gnu::noinline]] Request::Header RequestReader::ws_header_named() {
  Request& r = request_;
  if (r.field_length > kWsName || r.ws_name != r.field_length) return Request::Header::other;
  std::string_view name(ws_name_, r.ws_name);
  auto start = [&](int field, uint8_t& count) {
    // A second line of the same name: joined with a comma.
    if (r.ws_length[field] > 0) keep_ws_value(field, ",", 1);
    ++count;
  };
  if (equals_nocase(name, "sec-websocket-key")) {
    start(kWsKey, r.ws_keys);
    return Request::Header::ws_key;
  }
  if (equals_nocase(name, "sec-websocket-version")) {
    start(kWsVersion, r.ws_versions);
    return Request::Header::ws_version;
  }
  if (equals_nocase(name, "sec-websocket-extensions")) {
    uint8_t lines = 0;
    start(kWsExtensions, lines);
    return Request::Header::ws_extensions;
  }
  return Request::Header::other;
}

[[gnu::noinline]] int RequestReader::keep_ws_value(int field, const char* at, size_t len) {
  uint16_t& kept = request_.ws_length[field];
  size_t room = kWsRoom[field];
  if (kept > room) return 0;  // already too long
  if (kept + len > room) {
    kept = static_cast<uint16_t>(room + 1);
    return 0;
  }
  memcpy(ws_value_ + kWsSlot[field] + kept, at, len);
  kept = static_cast<uint16_t>(kept + len);
  return 0;
}

WsHandshakeFields RequestReader::ws_fields() const {
  const Request& r = request_;
  auto value = [&](int field) -> std::string_view {
    uint16_t n = r.ws_length[field];
    // A value too long to keep is kept as "too long" (no valid key or version).
    if (n > kWsRoom[field]) return "\x01";
    return {ws_value_ + kWsSlot[field], n};
  };
  WsHandshakeFields f;
  f.upgrade_seen = r.ws_upgrade_seen;
  f.upgrade = value(kWsUpgrade);
  f.connection_upgrade = (parser().flags & F_CONNECTION_UPGRADE) != 0;
  f.key = value(kWsKey);
  f.keys = r.ws_keys;
  f.version = value(kWsVersion);
  f.versions = r.ws_versions;
  f.extensions = r.ws_length[kWsExtensions] > kWsRoom[kWsExtensions] ? std::string_view()
                                                                     : value(kWsExtensions);
  f.http11 = parser().http_major == 1 && parser().http_minor >= 1;
  return f;
}

}  // namespace hello
