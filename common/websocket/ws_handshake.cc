#include "websocket/ws_handshake.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>

#include "http/field_syntax.h"

namespace hello {

namespace {

bool base64_digit(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// Section 4.1: "a base64-encoded value that, when decoded, is 16 bytes in
// length": 22 digits, the last of them holding 4 bits only, and "==".
bool key_valid(std::string_view key) {
  if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
  for (size_t i = 0; i < 22; ++i)
    if (!base64_digit(key[i])) return false;
  static constexpr std::string_view kLowBitsFree = "AQgw";  // digits whose low 4 bits are 0
  return kLowBitsFree.find(key[21]) != std::string_view::npos;
}

uint8_t version_bit(std::string_view v) {
  if (v == "13") return kWsVersion13;
  if (v == "8") return kWsVersion8;
  if (v == "7") return kWsVersion7;
  return 0;
}

// Section 9.1's offer: the first permessage-deflate in the list, which the
// persona accepts with its own answer when its parameters are ones every
// framework here takes (none, or client_max_window_bits without a value).
bool deflate_offered(std::string_view extensions) {
  while (!extensions.empty()) {
    size_t comma = extensions.find(',');
    std::string_view offer = trim_ows(extensions.substr(0, comma));
    size_t semi = offer.find(';');
    if (equals_nocase(trim_ows(offer.substr(0, semi)), "permessage-deflate")) {
      if (semi == std::string_view::npos) return true;
      std::string_view params = trim_ows(offer.substr(semi + 1));
      return equals_nocase(params, "client_max_window_bits");
    }
    if (comma == std::string_view::npos) break;
    extensions.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

WsVerdict judge_ws_handshake(const WebSocketPersona& ws, const WsHandshakeFields& f) {
  WsVerdict v;
  if (!f.upgrade_seen || !f.http11) return v;  // plain
  if (!list_has_token(f.upgrade, "websocket")) {
    v.refusal = WsRefusalKind::not_websocket;
    return v;
  }
  if (!f.connection_upgrade) {
    v.refusal = WsRefusalKind::no_connection;
    return v;
  }
  if (f.versions != 1 || (version_bit(trim_ows(f.version)) & ws.versions) == 0) {
    v.refusal = WsRefusalKind::bad_version;
    return v;
  }
  if (f.keys != 1 || !key_valid(trim_ows(f.key))) {
    v.refusal = WsRefusalKind::bad_key;
    return v;
  }
  v.upgrade = true;
  v.deflate = ws.deflate && deflate_offered(f.extensions);
  return v;
}

void ws_accept(std::string_view key, char out[28]) {
  static constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char joined[24 + 36];
  key = key.substr(0, 24);
  memcpy(joined, key.data(), key.size());
  memcpy(joined + key.size(), kGuid.data(), kGuid.size());
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(joined, key.size() + kGuid.size(), digest);
  unsigned char encoded[29];  // 28 digits and EVP_EncodeBlock's NUL
  EVP_EncodeBlock(encoded, digest, SHA_DIGEST_LENGTH);
  memcpy(out, encoded, 28);
}

}  // namespace hello
