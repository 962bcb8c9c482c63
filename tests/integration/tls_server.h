// The server the TLS integration tests start (tls_test.cc,
// tls_exchange_test.cc): hello-sanic --tls with an admin port whose /stats
// counts the handshakes, and what those tests share.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/tcp.h>  // tcp_info's tcpi_data_segs_in, which glibc's lacks
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <simdjson.h>
#include <csignal>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "test_client.h"
#include "test_time.h"

namespace hello::test {

using Clock = std::chrono::steady_clock;
using Counts = std::map<std::string, uint64_t>;

inline constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
inline constexpr unsigned char kAlertRecord = 0x15;  // TLS record type 21, RFC 8446 section 5.1

inline int status_of(const std::string& r) {
  return r.size() >= 12 && r.rfind("HTTP/1.", 0) == 0 ? std::stoi(r.substr(9, 3)) : -1;
}

inline std::string body_of(const std::string& r) {
  size_t at = r.find("\r\n\r\n");
  return at == std::string::npos ? "" : r.substr(at + 4);
}

// hello-sanic --tls with an admin port, and `flags`.
class TlsServer {
 public:
  explicit TlsServer(const std::vector<std::string>& flags = {})
      : admin_port_(free_port()), server_("sanic", all_flags(admin_port_, flags)) {}

  ServerProcess& process() { return server_; }
  int port() const { return server_.port(); }

  // The handshake counters of /stats's "total" that are not zero (of
  // full, resumed and the failures), or {"unreadable", 1}.
  Counts counts() const {
    Client c(admin_port_);
    c.send("GET /stats HTTP/1.1\r\nHost: a\r\n\r\n");
    std::string body = body_of(c.read_to_eof(2s).value_or(""));
    simdjson::dom::parser parser;
    simdjson::dom::object tls;
    if (parser.parse(body).get(tls) == simdjson::SUCCESS &&
        tls["total"]["tls"].get(tls) == simdjson::SUCCESS) {
      Counts counts;
      for (const char* key : {"full", "resumed", "failed_version", "failed_cipher",
                              "failed_plain_http", "failed_other", "failed_client_left"}) {
        uint64_t n = 0;
        if (tls[key].get(n) != simdjson::SUCCESS) return {{"unreadable", 1}};
        if (n != 0) counts[key] = n;
      }
      return counts;
    }
    return {{"unreadable", 1}};
  }

  // The counters once they are `expected`, or as they are after `limit`:
  // a worker counts on its own loop, the admin port reads on another.
  Counts counts_when(const Counts& expected, std::chrono::milliseconds limit = 2s) const {
    auto deadline = Clock::now() + limit;
    Counts now = counts();
    while (now != expected && Clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      now = counts();
    }
    return now;
  }

  // One request over a new TLS connection; true if it got the route's body.
  bool serves() const {
    try {
      Client c(port(), Tls::on);
      return c.send(kGet) && body_of(c.read_response()) == "Hello!!!";
    } catch (const std::exception&) {
      return false;
    }
  }

 private:
  static std::vector<std::string> all_flags(int admin_port, std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--tls", "--admin", "127.0.0.1:" + std::to_string(admin_port)});
    return flags;
  }

  int admin_port_;
  ServerProcess server_;
};

// A client context limited to `max_version` and `ciphers`, no verification.
inline SSL_CTX* client_ctx(int max_version, const char* ciphers) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, max_version);
  EXPECT_EQ(SSL_CTX_set_cipher_list(ctx, ciphers), 1) << ciphers;
  return ctx;
}

}  // namespace hello::test
