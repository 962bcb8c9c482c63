// The opening handshake of ws_load: see ws_load_handshake.h.
#include "ws_load_handshake.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <strings.h>

#include <string>

namespace ws_load {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

std::string base64(const unsigned char* bytes, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, static_cast<int>(n));
  expect(written == static_cast<int>(out.size()), "EVP_EncodeBlock wrote an unexpected length");
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Whether the comma-separated `list` holds `token`, in any case.
bool has_token(std::string_view list, std::string_view token) {
  // Each pass takes one element off the list.
  while (true) {
    size_t comma = list.find(',');
    if (same(trim(list.substr(0, comma)), token)) return true;
    if (comma == list.npos) return false;
    list.remove_prefix(comma + 1);
  }
}

// The headers of the 101 that matter here, as found.
struct Fields {
  bool upgrade = false, connection = false, accept = false, extensions = false;
  std::string_view accept_value, extensions_value;
  std::string error;
};

void read_field(std::string_view name, std::string_view value, Fields& f) {
  if (same(name, "upgrade")) {
    f.upgrade = same(value, "websocket");
  } else if (same(name, "connection")) {
    f.connection = f.connection || has_token(value, "upgrade");
  } else if (same(name, "sec-websocket-accept")) {
    if (f.accept) f.error = "two Sec-WebSocket-Accept";
    f.accept = true, f.accept_value = value;
  } else if (same(name, "sec-websocket-extensions")) {
    if (f.extensions) f.error = "two Sec-WebSocket-Extensions";
    f.extensions = true, f.extensions_value = value;
  } else if (same(name, "sec-websocket-protocol")) {
    f.error = "a Sec-WebSocket-Protocol we did not offer";
  }
}

}  // namespace

HandshakeKey make_key() {
  unsigned char nonce[16];
  expect(RAND_bytes(nonce, sizeof nonce) == 1, "RAND_bytes failed");
  HandshakeKey k;
  k.key = base64(nonce, sizeof nonce);
  std::string joined = k.key + std::string(kGuid);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  expect(EVP_Digest(joined.data(), joined.size(), digest, &length, EVP_sha1(), nullptr) == 1,
         "EVP_Digest(SHA-1) failed");
  k.accept = base64(digest, length);
  return k;
}

void put_request(Buffer& out, const Options& opt, const HandshakeKey& key) {
  std::string request = fmt::format(
      "GET {} HTTP/1.1\r\n"
      "Host: {}\r\n"
      "Upgrade: websocket\r\n"
      "Connection: Upgrade\r\n"
      "Sec-WebSocket-Key: {}\r\n"
      "Sec-WebSocket-Version: 13\r\n"
      "{}"
      "\r\n",
      opt.path, opt.host_header, key.key,
      opt.deflate ? "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
                  : "");
  out.append(request.data(), request.size());
}

std::string check_answer(std::string_view head, const HandshakeKey& key, bool offered_deflate,
                         Upgrade& upgrade) {
  // "HTTP/1.1 101", then a reason phrase or nothing (uvicorn and Tomcat
  // send "HTTP/1.1 101 " and no phrase).
  size_t eol = head.find("\r\n");
  std::string_view status = head.substr(0, eol);
  if (status.size() < 12 || status.substr(0, 9) != "HTTP/1.1 " ||
      (status.size() > 12 && status[12] != ' '))
    return "handshake: not an HTTP/1.1 status line";
  if (status.substr(9, 3) != "101")
    return fmt::format("handshake: status {} instead of 101", status.substr(9, 3));
  Fields f;
  // Each pass takes one header line; the head ends with "\r\n\r\n".
  for (size_t at = eol; at != head.npos && f.error.empty();) {
    size_t next = head.find("\r\n", at + 2);
    std::string_view line = head.substr(at + 2, next == head.npos ? head.npos : next - at - 2);
    at = next;
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == line.npos) return "handshake: a header line without a colon";
    read_field(line.substr(0, colon), trim(line.substr(colon + 1)), f);
  }
  if (!f.error.empty()) return "handshake: " + f.error;
  if (!f.upgrade) return "handshake: no Upgrade: websocket";
  if (!f.connection) return "handshake: no Connection: Upgrade";
  if (!f.accept) return "handshake: no Sec-WebSocket-Accept";
  if (f.accept_value != key.accept) return "handshake: a wrong Sec-WebSocket-Accept";
  upgrade = {};
  if (f.extensions) {
    if (!offered_deflate) return "handshake: an extension we did not offer";
    if (const char* why = parse_deflate_answer(f.extensions_value, upgrade.params))
      return fmt::format("handshake: {}", why);
    upgrade.deflate = true;
  }
  return {};
}

}  // namespace ws_load
