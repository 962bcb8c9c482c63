// tls_resume's client (tls_resume.cc): one thread's TLS connections, one
// after another, each offered the session of the one before, and what the
// threads saw.
#pragma once

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
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

namespace tls_resume {

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

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * kNsPerSecond + ts.tv_nsec;
}

inline double ms(int64_t ns) {
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
  std::optional<std::string> ciphersuites;  // TLS 1.3, OpenSSL's syntax; unset: OpenSSL's
  std::optional<std::string> ciphers;       // TLS 1.2, OpenSSL's syntax; unset: OpenSSL's
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

// The two kinds of completed handshake, as Tally's indexes.
constexpr int kFull = 0, kResumed = 1;
constexpr const char* kHandshakeKinds[] = {"full", "resumed"};

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
  // Indexed by kFull and kResumed: the completed handshakes by what they
  // negotiated ("TLSv1.3 TLS_AES_256_GCM_SHA384 x25519"), and their
  // connections by the session tickets each received.
  std::map<std::string, uint64_t> negotiated[2];
  std::map<uint64_t, uint64_t> tickets[2];

  void add(const Tally& o) {
    connections += o.connections, resumed += o.resumed, full += o.full, failed += o.failed;
    ok_200 += o.ok_200, no_close_notify += o.no_close_notify;
    for (size_t i = 0; i < kVersionCount; ++i) versions[i] += o.versions[i];
    for (const auto& [why, n] : o.failures) failures[why] += n;
    for (int i : {kFull, kResumed}) {
      for (const auto& [what, n] : o.negotiated[i]) negotiated[i][what] += n;
      for (const auto& [got, n] : o.tickets[i]) tickets[i][got] += n;
    }
    handshake_ns.insert(handshake_ns.end(), o.handshake_ns.begin(), o.handshake_ns.end());
    total_ns.insert(total_ns.end(), o.total_ns.begin(), o.total_ns.end());
  }
};

// One connection's state, reset whole before each.
struct Attempt {
  int fd = -1;
  SSL* ssl = nullptr;
  bool close_notify = false;  // the server's close_notify arrived
  bool handshaken = false;    // the handshake completed
  bool resumed = false;       // ... with the offered session
  uint64_t tickets = 0;       // NewSessionTicket messages received
  size_t answer_bytes = 0;
  char status[kStatusPrefix] = {};
};

// SSL_OP_IGNORE_UNEXPECTED_EOF makes a bare close read like a close_notify;
// the alert itself is seen here.
inline void on_info(const SSL* ssl, int where, int value) {
  if (where == SSL_CB_READ_ALERT && (value & 0xff) == SSL_AD_CLOSE_NOTIFY)
    static_cast<Attempt*>(SSL_get_app_data(ssl))->close_notify = true;
}

// Every NewSessionTicket the server sends, TLS 1.2's in the handshake and
// TLS 1.3's after it (read with the answer), on a full handshake or a
// resumed one. (A new-session callback would miss TLS 1.2's renewed ticket
// on a resumed handshake: OpenSSL calls it for new sessions only.)
inline void on_message(int write_p, int, int content_type, const void* buf, size_t len, SSL* ssl,
                       void*) {
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
      *static_cast<const unsigned char*>(buf) == SSL3_MT_NEWSESSION_TICKET)
    ++static_cast<Attempt*>(SSL_get_app_data(ssl))->tickets;
}

// The key exchange's group ("x25519", "secp256r1"), or for a TLS 1.2
// finite-field one its type and size ("DH-2048"); "none" without one (RSA
// key transport). A resumed handshake that made no exchange of its own (TLS
// 1.2, or TLS 1.3 with psk_ke) names the group of its session's first one,
// as OpenSSL does.
inline std::string group_name(SSL* ssl) {
  if (int nid = SSL_get_negotiated_group(ssl); nid != NID_undef) {
    if (const char* name = SSL_group_to_name(ssl, nid)) return name;
    if (const char* name = OBJ_nid2sn(nid)) return name;
  }
  EVP_PKEY* key = nullptr;
  if (SSL_get_peer_tmp_key(ssl, &key) != 1 || key == nullptr) return "none";
  char name[64];
  std::string out =
      EVP_PKEY_get_group_name(key, name, sizeof name, nullptr) == 1
          ? std::string(name)
          : fmt::format("{}-{}", EVP_PKEY_get0_type_name(key), EVP_PKEY_get_bits(key));
  EVP_PKEY_free(key);
  return out;
}

// What a completed handshake negotiated: "PROTOCOL SUITE GROUP".
inline std::string negotiated_text(SSL* ssl) {
  return fmt::format("{} {} {}", SSL_get_version(ssl), SSL_get_cipher_name(ssl), group_name(ssl));
}

inline std::string errno_text(int err) {
  if (err == 0) return "closed by the server";
  // SO_RCVTIMEO and SO_SNDTIMEO end a blocking call with these.
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS) return "timed out";
  return strerror(err);
}

// The first error in this thread's OpenSSL queue, which is then emptied.
inline std::string openssl_error() {
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
    if (a_.handshaken) ++tally_.tickets[a_.resumed ? kResumed : kFull][a_.tickets];
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
    a_.handshaken = true;
    a_.resumed = SSL_session_reused(a_.ssl) == 1;
    ++(a_.resumed ? tally_.resumed : tally_.full);
    ++tally_.negotiated[a_.resumed ? kResumed : kFull][negotiated_text(a_.ssl)];
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

}  // namespace tls_resume
