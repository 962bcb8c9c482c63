// tls_handshakes: how many TLS handshakes one process does per second on
// 1 and on 2 threads, each thread a worker's server context
// (tls/tls_context.h, as hello-* --tls -w N makes them) against a client
// of its own, joined in memory (tests/support/tls_pair.h). With --shared,
// every thread uses one server context instead, as the server did before
// each worker had its own: the gap between the two is what OpenSSL 3.0's
// locks on a shared library context cost. No sockets and no kernel: only
// the handshakes' CPU. How to run and read it: tests/tools/README.md.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "tls/tls_context.h"
#include "tls_pair.h"

namespace {

using hello::TlsContext;
using hello::TlsOptions;
using hello::test::handshake;
using hello::test::TlsClient;

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Options {
  double seconds = 2;   // per measurement
  int rounds = 5;       // alternated, the median reported
  bool resume = false;  // offer each thread's last ticket
  std::string key_type = "ecdsa-p256";
  std::string suites;  // the client's TLS 1.3 suites, empty: OpenSSL's
  bool json = false;
};

// One thread's handshakes against `server` until `stop`; their count, or
// -1 if one failed.
int64_t shake_until(SSL_CTX* server, const Options& opt, const std::atomic<bool>& stop) {
  OSSL_LIB_CTX* lib = OSSL_LIB_CTX_new();
  int64_t done = 0;
  {
    TlsClient client(lib, TLS1_3_VERSION, opt.suites);
    while (!stop.load(std::memory_order_relaxed)) {
      SSL_SESSION* offer = opt.resume ? client.last() : nullptr;
      if (offer != nullptr) SSL_SESSION_up_ref(offer);
      hello::test::Shaken got = handshake(client, server, offer);
      SSL_SESSION_free(offer);
      if (!got.ok || got.resumed != (offer != nullptr)) {
        done = -1;
        break;
      }
      ++done;
    }
  }
  OSSL_LIB_CTX_free(lib);
  return done;
}

// Handshakes per second of `threads` threads, each on context i of `tls`
// (or all on context 0 if `shared`), for opt.seconds.
double rate(const TlsContext& tls, int threads, bool shared, const Options& opt) {
  std::atomic<bool> stop{false};
  std::vector<int64_t> counts(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  double start = now_s();
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      SSL_CTX* ctx = tls.ctx(shared ? 0 : static_cast<size_t>(i));
      counts[static_cast<size_t>(i)] = shake_until(ctx, opt, stop);
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(opt.seconds));
  stop = true;
  for (std::thread& t : pool) t.join();
  double elapsed = now_s() - start;
  int64_t total = 0;
  for (int64_t n : counts) {
    if (n < 0) return -1;
    total += n;
  }
  return static_cast<double>(total) / elapsed;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{
      "Handshakes per second on 1 and 2 threads, each thread with its own server context "
      "(as the server's workers) or all on one (--shared beside it)."};
  app.add_option("--seconds", opt.seconds, "Seconds per measurement")->check(CLI::Range(0.1, 60.0));
  app.add_option("--rounds", opt.rounds, "Rounds, alternated; medians reported")
      ->check(CLI::Range(1, 50));
  app.add_flag("--resume", opt.resume, "Resumed handshakes: each offers the thread's last ticket");
  app.add_option("--key-type", opt.key_type, "ecdsa-p256 or rsa2048")
      ->check(CLI::IsMember({"ecdsa-p256", "rsa2048"}));
  app.add_option("--ciphersuites", opt.suites, "The client's TLS 1.3 suites");
  app.add_flag("--json", opt.json, "One JSON object on stdout");
  CLI11_PARSE(app, argc, argv);

  TlsOptions options;
  options.enabled = true;
  options.key_type = opt.key_type;
  std::string error;
  auto tls = TlsContext::create(options, "", {"localhost"}, error, 2);
  if (!tls) {
    fmt::print(stderr, "tls_handshakes: {}\n", error);
    return 2;
  }
  // The four measurements, in this order in every round.
  struct Case {
    const char* name;
    int threads;
    bool shared;
    std::vector<double> rates;
  } cases[] = {{"own_1", 1, false, {}},
               {"own_2", 2, false, {}},
               {"shared_1", 1, true, {}},
               {"shared_2", 2, true, {}}};
  for (int round = 0; round < opt.rounds; ++round)
    for (Case& c : cases) {
      double r = rate(*tls, c.threads, c.shared, opt);
      if (r < 0) {
        fmt::print(stderr, "tls_handshakes: a handshake failed ({} threads{})\n", c.threads,
                   c.shared ? ", shared" : "");
        return 1;
      }
      c.rates.push_back(r);
      if (!opt.json) fmt::print(stderr, "round {} {}: {:.0f} handshakes/s\n", round + 1, c.name, r);
    }
  double own1 = median(cases[0].rates), own2 = median(cases[1].rates);
  double sh1 = median(cases[2].rates), sh2 = median(cases[3].rates);
  if (opt.json) {
    fmt::print(
        "{{\"resume\": {}, \"rounds\": {}, \"seconds\": {}, \"own_1\": {:.1f}, \"own_2\": {:.1f}, "
        "\"shared_1\": {:.1f}, \"shared_2\": {:.1f}, \"own_scaling\": {:.3f}, "
        "\"shared_scaling\": {:.3f}, \"own_over_shared_2\": {:.3f}}}\n",
        opt.resume, opt.rounds, opt.seconds, own1, own2, sh1, sh2, own2 / own1, sh2 / sh1,
        own2 / sh2);
    return 0;
  }
  fmt::print("{} handshakes per second, medians of {} rounds of {} s:\n",
             opt.resume ? "resumed" : "full", opt.rounds, opt.seconds);
  fmt::print("  a context per thread: 1 thread {:.0f}, 2 threads {:.0f} ({:.2f}x)\n", own1, own2,
             own2 / own1);
  fmt::print("  one shared context:   1 thread {:.0f}, 2 threads {:.0f} ({:.2f}x)\n", sh1, sh2,
             sh2 / sh1);
  fmt::print("  2 threads, own over shared: {:.3f}\n", own2 / sh2);
  return 0;
}
