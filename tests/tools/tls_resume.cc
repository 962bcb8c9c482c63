// tls_resume: opens TLS connections one after another on each of T threads,
// one GET per connection, and offers each connection the session of its
// thread's previous one, to measure what session resumption buys: how many
// handshakes the server resumed, how long handshakes and whole connections
// took, how many connections per second that makes. Blocking sockets and
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

namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSecond = 1'000'000'000;
// Every connect, send and receive gives up after this long, so that a
// stopped server costs failed connections, not a hung run.
constexpr time_t kSocketTimeoutSeconds = 5;
// The largest TLS record's plaintext: one read never returns more.
constexpr size_t kReadBuffer = 16 * 1024;
// An answer larger than this is not what a hello server sends; past it the
// connection fails rather than reading for ever.
constexpr size_t kMaxAnswer = 1 << 20;
// What an answer must start with: "HTTP/1.1 200" or "HTTP/1.0 200".
constexpr std::string_view kOk11 = "HTTP/1.1 200", kOk10 = "HTTP/1.0 200";
constexpr size_t kStatusPrefix = kOk11.size();

// The versions offered: TLS 1.2 up to --tls-max.
constexpr int kVersions[] = {TLS1_2_VERSION, TLS1_3_VERSION};
constexpr const char* kVersionNames[] = {"TLSv1.2", "TLSv1.3"};
constexpr size_t kVersionCount = std::size(kVersions);

// Where a connection can fail; the name starts its failure's reason.
enum class Step : uint8_t { kConnect, kHandshake, kWrite, kRead, kStatus };
constexpr const char* kStepNames[] = {"connect", "handshake", "write", "read", "status"};

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * kNsPerSecond + ts.tv_nsec;
}

double ms(int64_t ns) {
  return static_cast<double>(ns) / kNsPerMs;
}

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string path = "/";
  uint64_t count = 200;
  std::optional<double> duration;
  int threads = 1;
  bool no_resume = false;
  std::string tls_max = "1.3";
  std::string cafile;
  std::string servername = "localhost";
  bool json = false;
};

// What every thread's connections share, read only while they run.
struct Shared {
  const Options& opt;
  SSL_CTX* ctx;
  sockaddr_storage addr;
  socklen_t addr_len;
  std::string request;
};

// What one thread saw; the threads' tallies are added up once they end.
struct Tally {
  uint64_t connections = 0;
  uint64_t resumed = 0;  // handshakes completed with the offered session
  uint64_t full = 0;     // handshakes completed without it
  uint64_t failed = 0;   // the sum of `failures`
  uint64_t ok_200 = 0;
  uint64_t no_close_notify = 0;  // answers ended by a bare close, not counted as failures
  uint64_t versions[kVersionCount] = {};
  std::map<std::string, uint64_t> failures;  // by reason
  std::vector<int64_t> handshake_ns;         // one per completed handshake
  std::vector<int64_t> total_ns;             // connect to close, one per 200 answer

  void add(const Tally& o) {
    connections += o.connections, resumed += o.resumed, full += o.full, failed += o.failed;
    ok_200 += o.ok_200, no_close_notify += o.no_close_notify;
    for (size_t i = 0; i < kVersionCount; ++i) versions[i] += o.versions[i];
    for (const auto& [why, n] : o.failures) failures[why] += n;
    handshake_ns.insert(handshake_ns.end(), o.handshake_ns.begin(), o.handshake_ns.end());
    total_ns.insert(total_ns.end(), o.total_ns.begin(), o.total_ns.end());
  }
};

// One connection's state, reset whole before each.
struct Attempt {
  int fd = -1;
  SSL* ssl = nullptr;
  bool close_notify = false;  // the server's close_notify arrived
  size_t answer_bytes = 0;
  char status[kStatusPrefix] = {};
};

// SSL_OP_IGNORE_UNEXPECTED_EOF makes a bare close read like a close_notify;
// the alert itself is seen here.
void on_info(const SSL* ssl, int where, int value) {
  if (where == SSL_CB_READ_ALERT && (value & 0xff) == SSL_AD_CLOSE_NOTIFY)
    static_cast<Attempt*>(SSL_get_app_data(ssl))->close_notify = true;
}

std::string errno_text(int err) {
  if (err == 0) return "closed by the server";
  // SO_RCVTIMEO and SO_SNDTIMEO end a blocking call with these.
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS) return "timed out";
  return strerror(err);
}

// The first error in this thread's OpenSSL queue, which is then emptied.
std::string openssl_error() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no OpenSSL error";
  if (const char* reason = ERR_reason_error_string(e)) return reason;
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// One thread's connections, one after another, each offered the session of
// the one before.
class Client {
 public:
  explicit Client(const Shared& shared) : s_(shared), buffer_(kReadBuffer) {}
  ~Client() { SSL_SESSION_free(session_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Makes `count` connections, or with count 0 connects until `deadline_ns`
  // (at least once).
  void run(uint64_t count, int64_t deadline_ns) {
    if (count > 0) {
      tally_.handshake_ns.reserve(count);
      tally_.total_ns.reserve(count);
      for (uint64_t i = 0; i < count; ++i) connection();
      return;
    }
    do {
      connection();
    } while (now_ns() < deadline_ns);
  }

  const Tally& tally() const { return tally_; }

 private:
  void connection() {
    int64_t start = now_ns();
    a_ = {};
    bool ok = exchange();
    SSL_free(a_.ssl);
    if (a_.fd >= 0) close(a_.fd);
    ++tally_.connections;
    if (ok) {
      ++tally_.ok_200;
      tally_.total_ns.push_back(now_ns() - start);
    }
  }

  // Returns false once a failure is counted.
  bool exchange() {
    if (!open_socket() || !handshake() || !send_request() || !read_answer()) return false;
    // With TLS 1.3 the tickets came after the handshake, before the answer's end.
    if (!s_.opt.no_resume) {
      SSL_SESSION_free(session_);
      session_ = SSL_get1_session(a_.ssl);
    }
    // The server has closed already: this close_notify may meet a reset,
    // which changes nothing here (SIGPIPE is ignored).
    SSL_shutdown(a_.ssl);
    ERR_clear_error();
    std::string_view got(a_.status, std::min(a_.answer_bytes, kStatusPrefix));
    if (got == kOk11 || got == kOk10) return true;
    return fail(Step::kStatus, got.size() < kStatusPrefix ? "no status line" : printable(got));
  }

  bool open_socket() {
    a_.fd = socket(s_.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (a_.fd < 0) return fail(Step::kConnect, errno_text(errno));
    int one = 1;
    timeval limit{kSocketTimeoutSeconds, 0};
    if (setsockopt(a_.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        setsockopt(a_.fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0 ||
        setsockopt(a_.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0)
      return fail(Step::kConnect, fmt::format("setsockopt: {}", strerror(errno)));
    if (connect(a_.fd, reinterpret_cast<const sockaddr*>(&s_.addr), s_.addr_len) != 0)
      return fail(Step::kConnect, errno_text(errno));
    return true;
  }

  bool handshake() {
    const Options& opt = s_.opt;
    ERR_clear_error();
    a_.ssl = SSL_new(s_.ctx);
    if (a_.ssl == nullptr) return fail(Step::kHandshake, openssl_error());
    SSL_set_app_data(a_.ssl, &a_);
    if (SSL_set_fd(a_.ssl, a_.fd) != 1 ||
        SSL_set_tlsext_host_name(a_.ssl, opt.servername.c_str()) != 1 ||
        (!opt.cafile.empty() && SSL_set1_host(a_.ssl, opt.servername.c_str()) != 1) ||
        (session_ != nullptr && SSL_set_session(a_.ssl, session_) != 1))
      return fail(Step::kHandshake, openssl_error());
    errno = 0;
    int64_t start = now_ns();
    int rc = SSL_connect(a_.ssl);
    if (rc != 1) {
      std::string why = ssl_error(rc, errno);
      if (long v = SSL_get_verify_result(a_.ssl); !opt.cafile.empty() && v != X509_V_OK)
        why += fmt::format(" ({})", X509_verify_cert_error_string(v));
      return fail(Step::kHandshake, why);
    }
    tally_.handshake_ns.push_back(now_ns() - start);
    ++(SSL_session_reused(a_.ssl) ? tally_.resumed : tally_.full);
    for (size_t i = 0; i < kVersionCount; ++i)
      tally_.versions[i] += SSL_version(a_.ssl) == kVersions[i];
    return true;
  }

  bool send_request() {
    errno = 0;
    int size = static_cast<int>(s_.request.size());
    // Blocking, without SSL_MODE_ENABLE_PARTIAL_WRITE: all or an error.
    int rc = SSL_write(a_.ssl, s_.request.data(), size);
    return rc == size || fail(Step::kWrite, ssl_error(rc, errno));
  }

  // Reads until the server closes, keeping the status line's start.
  bool read_answer() {
    int n;
    for (;;) {
      errno = 0;
      n = SSL_read(a_.ssl, buffer_.data(), static_cast<int>(buffer_.size()));
      if (n <= 0) break;
      if (a_.answer_bytes < kStatusPrefix)
        std::memcpy(a_.status + a_.answer_bytes, buffer_.data(),
                    std::min(kStatusPrefix - a_.answer_bytes, static_cast<size_t>(n)));
      a_.answer_bytes += static_cast<size_t>(n);
      if (a_.answer_bytes > kMaxAnswer) return fail(Step::kRead, "answer over 1 MiB");
    }
    int saved = errno;
    if (SSL_get_error(a_.ssl, n) != SSL_ERROR_ZERO_RETURN)
      return fail(Step::kRead, ssl_error(n, saved));
    tally_.no_close_notify += !a_.close_notify;
    return true;
  }

  // Why an SSL call that returned `rc` failed; `err` is errno just after it.
  std::string ssl_error(int rc, int err) {
    switch (int code = SSL_get_error(a_.ssl, rc)) {
      case SSL_ERROR_ZERO_RETURN:
        return "closed by the server";
      case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0) return errno_text(err);
        return openssl_error();
      case SSL_ERROR_SSL:
        return openssl_error();
      case SSL_ERROR_WANT_READ:
      case SSL_ERROR_WANT_WRITE:
        // A blocking socket wants more only when SO_RCVTIMEO or SO_SNDTIMEO ran out.
        ERR_clear_error();
        return "timed out";
      default:
        ERR_clear_error();
        return fmt::format("SSL_get_error {}", code);
    }
  }

  static std::string printable(std::string_view text) {
    std::string out(text);
    for (char& c : out)
      if (c < 0x20 || c > 0x7e) c = '?';
    return out;
  }

  bool fail(Step step, std::string_view why) {
    ++tally_.failed;
    ++tally_.failures[fmt::format("{}: {}", kStepNames[static_cast<int>(step)], why)];
    return false;
  }

  const Shared& s_;
  std::vector<char> buffer_;        // every read of every connection
  SSL_SESSION* session_ = nullptr;  // the previous connection's, offered to the next
  Attempt a_;
  Tally tally_;
};

// Nearest rank over sorted values, in ms; NaN when there are none.
double percentile_ms(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return NAN;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return ms(sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1]);
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

std::string json_ms(double x) {
  return std::isnan(x) ? "null" : fmt::format("{:.3f}", x);
}

// {"name": n, ...} of the map's entries, or of the versions seen.
std::string json_counts(const std::map<std::string, uint64_t>& counts) {
  std::string out = "{";
  const char* sep = "";
  for (const auto& [name, n] : counts) {
    out += fmt::format("{}{}: {}", sep, json_string(name), n);
    sep = ", ";
  }
  return out + "}";
}

std::map<std::string, uint64_t> versions_seen(const Tally& t) {
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < kVersionCount; ++i)
    if (t.versions[i] > 0) out[kVersionNames[i]] = t.versions[i];
  return out;
}

void print_json(const Tally& t, double seconds) {
  std::string out = "{";
  out += fmt::format("\"connections\": {}, \"resumed\": {}, \"full\": {}, \"failed\": {}, ",
                     t.connections, t.resumed, t.full, t.failed);
  out += fmt::format("\"failures\": {}, \"ok_200\": {}, \"no_close_notify\": {}, ",
                     json_counts(t.failures), t.ok_200, t.no_close_notify);
  out += fmt::format("\"seconds\": {:.3f}, \"connections_per_second\": {:.1f}, ", seconds,
                     static_cast<double>(t.connections) / seconds);
  out += fmt::format("\"handshake_p50_ms\": {}, \"handshake_p99_ms\": {}, ",
                     json_ms(percentile_ms(t.handshake_ns, 50)),
                     json_ms(percentile_ms(t.handshake_ns, 99)));
  out +=
      fmt::format("\"total_p50_ms\": {}, \"total_p99_ms\": {}, ",
                  json_ms(percentile_ms(t.total_ns, 50)), json_ms(percentile_ms(t.total_ns, 99)));
  out += fmt::format("\"tls_versions\": {}}}\n", json_counts(versions_seen(t)));
  fmt::print("{}", out);
}

void print_text(const Options& opt, const Tally& t, double seconds) {
  fmt::print("tls_resume: GET {} on {}:{}, SNI {}, {}, TLS 1.2 to {}, {} thread{}, resumption {}\n",
             opt.path, opt.host, opt.port, opt.servername,
             opt.cafile.empty() ? "not verified" : "verified", opt.tls_max, opt.threads,
             opt.threads == 1 ? "" : "s", opt.no_resume ? "off" : "on");
  fmt::print("connections {} in {:.3f} s, {:.1f} per second; failed {}\n", t.connections, seconds,
             static_cast<double>(t.connections) / seconds, t.failed);
  for (const auto& [why, n] : t.failures) fmt::print("  failed    {} x {}\n", n, why);
  fmt::print("handshakes  {} resumed, {} full;", t.resumed, t.full);
  for (const auto& [name, n] : versions_seen(t)) fmt::print(" {} {}", name, n);
  fmt::print("\nanswers     {} with status 200; {} closed without close_notify\n", t.ok_200,
             t.no_close_notify);
  fmt::print("handshake   ms p50 {:.3f}  p99 {:.3f}\n", percentile_ms(t.handshake_ns, 50),
             percentile_ms(t.handshake_ns, 99));
  fmt::print("connection  ms p50 {:.3f}  p99 {:.3f} (connect to close, answers with 200)\n",
             percentile_ms(t.total_ns, 50), percentile_ms(t.total_ns, 99));
  fmt::print("{}\n", t.failed == 0 ? "PASS" : "FAIL");
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

int main(int argc, char** argv) {
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
