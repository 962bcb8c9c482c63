// tls_resume's tallies, printed as text or JSON.
#include "tls_resume_report.h"

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

namespace tls_resume {
namespace {

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

// {"full": {...}, "resumed": {...}} of a pair of maps indexed by kFull and kResumed.
template <typename Key>
std::string json_by_kind(const std::map<Key, uint64_t> (&maps)[2]) {
  std::string out = "{";
  for (int i : {kFull, kResumed}) {
    std::map<std::string, uint64_t> named;
    for (const auto& [key, n] : maps[i]) named[fmt::format("{}", key)] = n;
    out += fmt::format("{}{}: {}", i == kFull ? "" : ", ", json_string(kHandshakeKinds[i]),
                       json_counts(named));
  }
  return out + "}";
}

// "TLSv1.3 TLS_AES_256_GCM_SHA384 x25519 x 19, ..." of one kind of handshake, or "-".
template <typename Key>
std::string text_counts(const std::map<Key, uint64_t>& counts) {
  std::string out;
  for (const auto& [key, n] : counts)
    out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", key, n);
  return out.empty() ? "-" : out;
}

std::map<std::string, uint64_t> versions_seen(const Tally& t) {
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < kVersionCount; ++i)
    if (t.versions[i] > 0) out[kVersionNames[i]] = t.versions[i];
  return out;
}

// ", TLS 1.3 suites LIST, TLS 1.2 suites LIST" for those set, else "".
std::string suites_text(const Options& opt) {
  std::string out;
  if (opt.ciphersuites) out += fmt::format(", TLS 1.3 suites '{}'", *opt.ciphersuites);
  if (opt.ciphers) out += fmt::format(", TLS 1.2 suites '{}'", *opt.ciphers);
  return out;
}

}  // namespace

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
  out += fmt::format("\"tls_versions\": {}, \"negotiated\": {}, \"tickets\": {}}}\n",
                     json_counts(versions_seen(t)), json_by_kind(t.negotiated),
                     json_by_kind(t.tickets));
  fmt::print("{}", out);
}

void print_text(const Options& opt, const Tally& t, double seconds) {
  fmt::print(
      "tls_resume: GET {} on {}:{}, SNI {}, {}, TLS 1.2 to {}, {} thread{}, resumption {}{}\n",
      opt.path, opt.host, opt.port, opt.servername,
      opt.cafile.empty() ? "not verified" : "verified", opt.tls_max, opt.threads,
      opt.threads == 1 ? "" : "s", opt.no_resume ? "off" : "on", suites_text(opt));
  fmt::print("connections {} in {:.3f} s, {:.1f} per second; failed {}\n", t.connections, seconds,
             static_cast<double>(t.connections) / seconds, t.failed);
  for (const auto& [why, n] : t.failures) fmt::print("  failed    {} x {}\n", n, why);
  fmt::print("handshakes  {} resumed, {} full;", t.resumed, t.full);
  for (const auto& [name, n] : versions_seen(t)) fmt::print(" {} {}", name, n);
  fmt::print("\nnegotiated  full: {}; resumed: {}\n", text_counts(t.negotiated[kFull]),
             text_counts(t.negotiated[kResumed]));
  fmt::print("tickets     full: {}; resumed: {} (tickets received x connections)\n",
             text_counts(t.tickets[kFull]), text_counts(t.tickets[kResumed]));
  fmt::print("answers     {} with status 200; {} closed without close_notify\n", t.ok_200,
             t.no_close_notify);
  fmt::print("handshake   ms p50 {:.3f}  p99 {:.3f}\n", percentile_ms(t.handshake_ns, 50),
             percentile_ms(t.handshake_ns, 99));
  fmt::print("connection  ms p50 {:.3f}  p99 {:.3f} (connect to close, answers with 200)\n",
             percentile_ms(t.total_ns, 50), percentile_ms(t.total_ns, 99));
  fmt::print("{}\n", t.failed == 0 ? "PASS" : "FAIL");
}

}  // namespace tls_resume
