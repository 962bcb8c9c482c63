// The opening handshake of ws_load (RFC 6455 section 4.1), socket-free:
// the upgrade request, and the check of the server's 101.
#pragma once

#include <string>
#include <string_view>

#include "ws_load.h"
#include "ws_load_deflate.h"

namespace ws_load {

// The key a connection sends and the Sec-WebSocket-Accept its server must
// answer with: base64 of SHA-1 of the key and RFC 6455's GUID.
struct HandshakeKey {
  std::string key;
  std::string accept;
};

// A random key (16 bytes from OpenSSL's generator) and its Accept.
HandshakeKey make_key();

// Appends the upgrade request for --path and --host, offering
// permessage-deflate with --deflate.
void put_request(Buffer& out, const Options& opt, const HandshakeKey& key);

// What a valid 101 said.
struct Upgrade {
  bool deflate = false;
  DeflateParams params;
};

// Checks a whole answer head, through its blank line: empty if it is a 101
// that accepts `key` (and what it accepted in `upgrade`), else why not.
std::string check_answer(std::string_view head, const HandshakeKey& key, bool offered_deflate,
                         Upgrade& upgrade);

}  // namespace ws_load
