// tls_resume: opens TLS connections one after another on each of T threads,
// one GET per connection, and offers each connection the session of its
// thread's previous one, to measure what session resumption buys: how many
// handshakes the server resumed, what each negotiated and how many session
// tickets it received, how long handshakes and whole connections took, how
// many connections per second that makes. Blocking sockets and
// OpenSSL 3.0, nothing shared with the servers it measures; scripts/bench
// --tls runs it as its "resumed handshake per request" load. How to run and
// read it: tests/tools/README.md.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "tls_resume_client.h"
#include "tls_resume_report.h"

namespace tls_resume {
namespace {

// The TLS 1.3 suites of `ctx`, by name.
std::vector<std::string> tls13_suites(SSL_CTX* ctx) {
  std::vector<std::string> names;
  STACK_OF(SSL_CIPHER)* all = SSL_CTX_get_ciphers(ctx);
  for (int i = 0; i < sk_SSL_CIPHER_num(all); ++i) {
    const SSL_CIPHER* c = sk_SSL_CIPHER_value(all, i);
    if (std::string_view(SSL_CIPHER_get_version(c)) == "TLSv1.3")
      names.emplace_back(SSL_CIPHER_get_name(c));
  }
  return names;
}

// --ciphersuites and --ciphers into `ctx`; false after printing why not.
// OpenSSL 3.0 skips a TLS 1.3 name it does not know, so each is looked for
// in what it kept; a TLS 1.2 list is refused only when nothing of it is
// left (its aliases make a name-by-name check meaningless).
bool set_suites(SSL_CTX* ctx, const Options& opt) {
  if (opt.ciphersuites) {
    const std::string& list = *opt.ciphersuites;
    if (SSL_CTX_set_ciphersuites(ctx, list.c_str()) != 1) {
      fmt::print(stderr, "tls_resume: --ciphersuites '{}': OpenSSL refuses it ({})\n", list,
                 openssl_error());
      return false;
    }
    std::vector<std::string> kept = tls13_suites(ctx);
    for (size_t start = 0; start < list.size();) {
      size_t end = std::min(list.find(':', start), list.size());
      std::string name = list.substr(start, end - start);
      if (std::find(kept.begin(), kept.end(), name) == kept.end()) {
        fmt::print(stderr, "tls_resume: --ciphersuites '{}': OpenSSL knows no TLS 1.3 suite '{}'\n",
                   list, name);
        return false;
      }
      start = end + 1;
    }
  }
  if (opt.ciphers && SSL_CTX_set_cipher_list(ctx, opt.ciphers->c_str()) != 1) {
    fmt::print(stderr, "tls_resume: --ciphers '{}': OpenSSL takes none of it ({})\n", *opt.ciphers,
               openssl_error());
    return false;
  }
  return true;
}

// The one context every connection is made from; nullptr after printing why not.
SSL_CTX* make_context(const Options& opt) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    fmt::print(stderr, "tls_resume: SSL_CTX_new: {}\n", openssl_error());
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, opt.tls_max == "1.2" ? TLS1_2_VERSION : TLS1_3_VERSION);
  // Many servers close after their answer without a close_notify. OpenSSL
  // would call that an error and mark the session not resumable; this way it
  // reads as the end, and on_info tells the two apart.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_info_callback(ctx, on_info);
  SSL_CTX_set_msg_callback(ctx, on_message);
  if (!set_suites(ctx, opt)) {
    SSL_CTX_free(ctx);
    return nullptr;
  }
  if (opt.cafile.empty()) {
    // The servers' certificates are usually made when they start.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    if (SSL_CTX_load_verify_file(ctx, opt.cafile.c_str()) != 1) {
      fmt::print(stderr, "tls_resume: --cafile: cannot load {}: {}\n", opt.cafile, openssl_error());
      SSL_CTX_free(ctx);
      return nullptr;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return ctx;
}

bool is_loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family != AF_INET6) return false;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
}

// CLI11's PositiveNumber states its range with 300 digits; this says it in words.
CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) {
        char* end = nullptr;
        double x = std::strtod(text.c_str(), &end);
        bool ok = !text.empty() && *end == '\0' && std::isfinite(x) && x > 0;
        return ok ? std::string() : fmt::format("'{}' is not a number above 0", text);
      },
      "");
}

int usage_error(const std::string& what) {
  fmt::print(stderr, "tls_resume: {} (see --help)\n", what);
  return kExitUsage;
}

// Parses the flags into `opt`; returns -1 to go on, else the exit status.
int parse(int argc, char** argv, Options& opt) {
  CLI::App app{"tls_resume: TLS connections one after another, each offered the last one's session",
               "tls_resume"};
  app.add_option("--port", opt.port, "Server port")
      ->type_name("PORT")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--host", opt.host, "Server address; loopback only")
      ->type_name("ADDRESS")
      ->capture_default_str();
  app.add_option("--path", opt.path, "Request path")->type_name("PATH")->capture_default_str();
  auto* count =
      app.add_option("--count", opt.count, "Connections in all, divided among the threads")
          ->type_name("N")
          ->capture_default_str()
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  app.add_option("--duration", opt.duration, "Connect for SECONDS instead of --count connections")
      ->type_name("SECONDS")
      ->check(positive_number())
      ->excludes(count);
  app.add_option("--threads", opt.threads, "Threads, each with its own connection and session")
      ->type_name("T")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_flag("--no-resume", opt.no_resume, "Offer no session: every handshake is full");
  app.add_option("--tls-max", opt.tls_max, "Highest TLS version offered (the lowest is 1.2)")
      ->type_name("VERSION")
      ->capture_default_str()
      ->check(CLI::IsMember({"1.2", "1.3"}));
  app.add_option("--cafile", opt.cafile, "Verify the server's chain and name against this PEM")
      ->type_name("PEM");
  app.add_option("--servername", opt.servername, "SNI, and the name verified with --cafile")
      ->type_name("NAME")
      ->capture_default_str();
  app.add_option("--ciphersuites", opt.ciphersuites,
                 "TLS 1.3 suites offered, in OpenSSL's syntax (default OpenSSL's)")
      ->type_name("LIST");
  app.add_option("--ciphers", opt.ciphers,
                 "TLS 1.2 suites offered, in OpenSSL's syntax (default OpenSSL's)")
      ->type_name("LIST");
  app.add_flag("--json", opt.json, "Print one JSON object instead of the summary");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return usage_error(e.what());
  }
  if (opt.path.empty() || opt.path[0] != '/' ||
      !std::all_of(opt.path.begin(), opt.path.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return usage_error("--path: must start with / and hold no spaces or control characters");
  if (opt.servername.empty()) return usage_error("--servername: must not be empty");
  if (opt.ciphersuites && opt.ciphersuites->empty() && opt.tls_max == "1.3")
    return usage_error("--ciphersuites: an empty list offers no TLS 1.3 suite: add --tls-max 1.2");
  if (!opt.duration && opt.count < static_cast<uint64_t>(opt.threads))
    return usage_error("--threads: more threads than --count connections");
  return -1;
}

// Resolves --host into `shared`; returns -1 to go on, else the exit status.
int resolve(const Options& opt, Shared& shared) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(opt.host.c_str(), nullptr, &hints, &found); rc != 0)
    return usage_error(fmt::format("--host: {}: {}", opt.host, gai_strerror(rc)));
  shared.addr_len = found->ai_addrlen;
  std::memcpy(&shared.addr, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  // Load goes to this machine only.
  if (!is_loopback(reinterpret_cast<sockaddr*>(&shared.addr)))
    return usage_error(fmt::format("--host: {} is not a loopback address", opt.host));
  auto port = htons(static_cast<uint16_t>(opt.port));
  if (shared.addr.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&shared.addr)->sin_port = port;
  else
    reinterpret_cast<sockaddr_in6*>(&shared.addr)->sin6_port = port;
  return -1;
}

}  // namespace
}  // namespace tls_resume

int main(int argc, char** argv) {
  using namespace tls_resume;
  Options opt;
  if (int rc = parse(argc, argv, opt); rc >= 0) return rc;
  Shared shared{opt, nullptr, {}, 0, {}};
  if (int rc = resolve(opt, shared); rc >= 0) return rc;
  bool v6 = opt.host.find(':') != std::string::npos;
  shared.request = fmt::format("GET {} HTTP/1.1\r\nHost: {}{}{}:{}\r\nConnection: close\r\n\r\n",
                               opt.path, v6 ? "[" : "", opt.host, v6 ? "]" : "", opt.port);
  shared.ctx = make_context(opt);
  if (shared.ctx == nullptr) return kExitUsage;
  // A close_notify written to a socket the server has closed must not end the run.
  signal(SIGPIPE, SIG_IGN);

  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < opt.threads; ++i) clients.push_back(std::make_unique<Client>(shared));
  auto threads_n = static_cast<uint64_t>(opt.threads);
  int64_t start = now_ns();
  int64_t deadline = opt.duration ? start + std::llround(*opt.duration * kNsPerSecond) : 0;
  std::vector<std::thread> threads;
  for (uint64_t i = 0; i < threads_n; ++i) {
    uint64_t count = opt.duration ? 0 : opt.count / threads_n + (i < opt.count % threads_n);
    threads.emplace_back(
        [client = clients[i].get(), count, deadline] { client->run(count, deadline); });
  }
  for (std::thread& t : threads) t.join();
  double seconds = static_cast<double>(now_ns() - start) / kNsPerSecond;

  Tally all;
  for (const auto& c : clients) all.add(c->tally());
  std::sort(all.handshake_ns.begin(), all.handshake_ns.end());
  std::sort(all.total_ns.begin(), all.total_ns.end());
  if (opt.json)
    print_json(all, seconds);
  else
    print_text(opt, all, seconds);
  SSL_CTX_free(shared.ctx);
  return all.failed == 0 ? kExitPass : kExitFail;
}
