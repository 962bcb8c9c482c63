// A fair turn (issue 33, docs/http2.md#limits-and-floods): one client that
// never stops sending must not stall the other connections of its worker.
// A single-worker server takes, for 5 seconds, either HTTP/2 header blocks
// that are cheap to send and costly to check (16 KiB of one-byte references
// to a 4 KB entry of HPACK's dynamic table: 64 MB of fields a block), or
// HTTP/1 requests pipelined by the megabyte by a client that reads nothing
// (or every answer as it comes),
// while another connection sends a GET every 50 ms: each is answered within
// 20 ms. The server's CPU is read from its CPU clock (clock_getcpuclockid):
// over the flood, divided by the header blocks it refused (its own count,
// in --stats-json), and while each GET waited.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "h2_raw.h"
#include "test_client.h"
#include "test_time.h"

namespace hello::test {
namespace {

using namespace h2raw;
using Clock = std::chrono::steady_clock;

constexpr auto kFlood = 5s;
constexpr auto kProbeEvery = 50ms;
constexpr auto kAnsweredWithin = 20ms;
constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: fair\r\n\r\n";

// How long, in ms, the calling thread has waited on a run queue for a CPU
// (the second field of its schedstat), or -1 where the kernel keeps none.
double run_queue_ms() {
  FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return -1;
  unsigned long long on_cpu = 0, waiting = 0;
  int n = std::fscanf(f, "%llu %llu", &on_cpu, &waiting);
  std::fclose(f);
  return n == 2 ? static_cast<double>(waiting) / 1e6 : -1;
}

// The CPU time so far, in ms, of the process whose CPU clock is `clock`
// (all its threads, the running ones to the nanosecond).
double cpu_ms(clockid_t clock) {
  timespec t;
  EXPECT_EQ(clock_gettime(clock, &t), 0);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// A JSON number after "key": in `json` (the first worker's, with -w 1 the
// only one), or -1.
long json_number(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\": ");
  return at == std::string::npos ? -1 : std::stol(json.substr(at + key.size() + 4));
}

// A non-blocking loopback connection, or -1; `receive_buffer` bytes of
// SO_RCVBUF unless 0 (set before the connection, for the window's scale).
int connect_nonblocking(int port, int receive_buffer) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// What the client that keeps a connection busy sends: its first bytes, then
// the same piece over and over while the server takes them.
struct Flooder {
  virtual ~Flooder() = default;
  // A new connection's first bytes.
  virtual std::string opening() = 0;
  // The next piece (a header block, a batch of requests).
  virtual std::string next() = 0;
  // The server's bytes: true once this connection is done (a GOAWAY).
  virtual bool heard(std::string_view) { return false; }
  // Whether the connection is to end once the server has stopped taking
  // bytes for a while (it reads nothing and the server waits for it).
  virtual bool ends_when_stalled() const { return false; }
  // The connection's SO_RCVBUF, or 0 for the default.
  virtual int receive_buffer() const { return 0; }
  // Whether it reads the server's bytes, all that have come each time.
  virtual bool reads() const { return true; }
};

// HTTP/2 header blocks of 16 KiB, each 16 K one-byte references (0xbe:
// index 62, the newest entry of the dynamic table) to a field of 4 KB
// that the connection's first block inserts (a literal with incremental
// indexing, 0x40): each block is 64 MB of fields, far over the header
// list's 16 KiB, on a new stream.
struct HeaderBlocks : Flooder {
  static constexpr size_t kBlock = 16384;  // SETTINGS_MAX_FRAME_SIZE's default
  std::string opening() override {
    id_ = 1;
    heard_.clear();
    std::string insert = "\x40" + std::string(hpack_int(0, 7, 3)) + "x-a" + hpack_int(0, 7, 4000) +
                         std::string(4000, 'a');
    std::string block = request_block() + insert;
    block.resize(kBlock, '\xbe');
    return std::string(kPreface) + settings() + settings_ack() +
           frame(kHeaders, kEndHeaders | kEndStream, next_id(), block);
  }
  std::string next() override {
    std::string block = request_block();
    block.resize(kBlock, '\xbe');
    return frame(kHeaders, kEndHeaders | kEndStream, next_id(), block);
  }
  bool heard(std::string_view bytes) override {
    heard_ += bytes;
    return goaway_code(frames(heard_)).has_value();
  }
  uint32_t next_id() { return std::exchange(id_, id_ + 2); }

  uint32_t id_ = 1;
  std::string heard_;
};

// HTTP/1 GETs pipelined 64 KiB at a time, up to 10 MB a connection. A
// client that reads nothing is served until the answers fill the sockets;
// then the server stops reading it, and 100 ms later a new connection takes
// over. One that reads every answer as it comes never holds the server
// back: without a bound on its turn, the server would take all libuv reads
// of a turn (32 of 64 KiB: 2 MB, some 70,000 requests) before the others.
struct PipelinedRequests : Flooder {
  static constexpr size_t kPerConnection = 10 * 1000 * 1000;
  explicit PipelinedRequests(bool reads) : reads_(reads) {}
  std::string opening() override {
    sent_ = 0;
    return next();
  }
  std::string next() override {
    if (sent_ >= kPerConnection) return {};
    std::string batch;
    while (batch.size() + kGet.size() <= 64 * 1024) batch += kGet;
    sent_ += batch.size();
    return batch;
  }
  bool ends_when_stalled() const override { return true; }
  bool reads() const override { return reads_; }

  bool reads_;
  size_t sent_ = 0;
};

struct FloodResult {
  long pieces = 0;       // pieces written whole
  long connections = 0;  // connections opened
};

// Keeps the server busy with `f` until `end`: a piece written whenever the
// socket takes it, the server's bytes read and handed to `f`, a new
// connection when the server ends one (or, for a client that reads nothing,
// stops taking its bytes for 100 ms).
FloodResult flood(int port, Flooder& f, Clock::time_point end) {
  FloodResult r;
  char buf[65536];
  while (Clock::now() < end) {
    int fd = connect_nonblocking(port, f.receive_buffer());
    if (fd < 0) break;
    ++r.connections;
    std::string out = f.opening();
    size_t at = 0;
    bool done = false;
    auto progress = Clock::now();
    while (!done && Clock::now() < end) {
      short events = static_cast<short>((f.reads() ? POLLIN : 0) | (at < out.size() ? POLLOUT : 0));
      pollfd p = {fd, events, 0};
      if (poll(&p, 1, 10) < 0) break;
      // All that has come (at most 64 reads of 64 KiB).
      for (int reads = 0; !done && reads < 64 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
           ++reads) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0 || f.heard({buf, static_cast<size_t>(n)})) done = true;
      }
      if (!done && (p.revents & POLLOUT) != 0) {
        ssize_t n = send(fd, out.data() + at, out.size() - at, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN) done = true;
        if (n > 0) {
          at += static_cast<size_t>(n);
          progress = Clock::now();
        }
        if (at == out.size()) {
          ++r.pieces;
          out = f.next();
          at = 0;
        }
      }
      if (f.ends_when_stalled() && Clock::now() - progress > 100ms) done = true;
    }
    // A reset: what the client has not read is of no interest.
    linger abortive = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
    close(fd);
  }
  return r;
}

struct ProbeResult {
  long sent = 0;
  long answered = 0;
  // Each GET's wait by the clock, and the CPU the server spent meanwhile
  // while the prober was not itself waiting for a CPU: on a machine with
  // more threads than CPUs the clock also counts the time the server was
  // not running at all, which its CPU leaves out, and the server's CPU
  // also counts the turns it took while the prober, its answer in, waited
  // to be run, which the prober's run-queue wait (schedstat) takes out.
  std::vector<double> waited_ms;
  std::vector<double> cpu_ms;
  double slowest_ms = 0;
  double most_cpu_ms = 0;
};

// A GET every kProbeEvery on one keep-alive connection until `end`.
ProbeResult probe(int port, clockid_t server, Clock::time_point end) {
  ProbeResult r;
  Client c(port);
  while (Clock::now() < end) {
    auto t0 = Clock::now();
    double queued0 = run_queue_ms();
    double cpu0 = cpu_ms(server);
    ++r.sent;
    if (!c.send(kGet)) break;
    std::string answer = c.read_response(false, 2s);
    if (answer.rfind("HTTP/1.1 200", 0) != 0) break;
    ++r.answered;
    double cpu = cpu_ms(server) - cpu0;
    double queued = run_queue_ms() - queued0;
    r.cpu_ms.push_back(std::max(0.0, cpu - queued));
    r.most_cpu_ms = std::max(r.most_cpu_ms, r.cpu_ms.back());
    r.waited_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    r.slowest_ms = std::max(r.slowest_ms, r.waited_ms.back());
    std::this_thread::sleep_until(t0 + kProbeEvery);
  }
  return r;
}

// The share of `waits` at most `limit_ms`.
double within(const std::vector<double>& waits, double limit_ms) {
  long n = std::count_if(waits.begin(), waits.end(), [&](double ms) { return ms <= limit_ms; });
  return waits.empty() ? 0 : static_cast<double>(n) / static_cast<double>(waits.size());
}

struct FloodRun {
  FloodResult flood;
  ProbeResult probe;
  double cpu_ms = 0;
};

// One flood of kFlood by `f` with the prober beside it.
FloodRun run_flood(const ServerProcess& s, Flooder& f) {
  FloodRun run;
  clockid_t server;
  EXPECT_EQ(clock_getcpuclockid(s.pid(), &server), 0);
  double cpu_before = cpu_ms(server);
  auto end = Clock::now() + kFlood;
  std::thread prober([&] {
    std::this_thread::sleep_for(100ms);  // once the flood is under way
    run.probe = probe(s.port(), server, end);
  });
  run.flood = flood(s.port(), f, end);
  prober.join();
  run.cpu_ms = cpu_ms(server) - cpu_before;
  return run;
}

// Every GET answered within 20 ms of the server's CPU while the prober was
// ready to run: that is the server's fairness, whatever else the machine
// runs (before the fair turn the header-block flood got none, its GETs
// waiting 420 ms of the server's CPU). The clock is reported, not judged:
// on a machine with more threads than CPUs (this one: 2 CPUs, a load of 7
// to 27) half the GETs can wait 30 to 200 ms while the scheduler runs
// something else in the server's place, which is no fault of the server's
// (with a load of 18, every GET within 3.4 ms of the server's CPU, 41%
// within 20 ms by the clock); on a machine with a CPU to spare every one
// is within 20 ms by the clock too.
void expect_served(const ProbeResult& r) {
  EXPECT_EQ(r.answered, r.sent);
  EXPECT_GT(r.answered, 50);
  ASSERT_GE(run_queue_ms(), 0) << "the kernel keeps no /proc/thread-self/schedstat";
  double limit = scaled_ms(static_cast<double>(kAnsweredWithin.count()));
  EXPECT_EQ(within(r.cpu_ms, limit), 1.0)
      << "every GET answered within 20 ms of the server's CPU; the most was " << r.most_cpu_ms;
}

void report(const char* what, const FloodRun& run) {
  const ProbeResult& r = run.probe;
  std::printf(
      "[ fairness ] %s: %ld GETs, slowest %.1f ms by the clock (%.0f%% within 20 ms), "
      "%.1f ms of server CPU (%.0f%% within 20 ms)\n",
      what, r.sent, r.slowest_ms, 100 * within(r.waited_ms, 20), r.most_cpu_ms,
      100 * within(r.cpu_ms, 20));
  ::testing::Test::RecordProperty("slowest_get_us", static_cast<int>(run.probe.slowest_ms * 1000));
  ::testing::Test::RecordProperty("most_cpu_per_get_us",
                                  static_cast<int>(run.probe.most_cpu_ms * 1000));
}

TEST(Fairness, Http2HeaderBlocksCostLittleAndOthersAreServedWithin20ms) {
  std::string stats = temp_path("fairness-h2.json");
  ServerProcess s("sanic", {"--h2", "-w", "1", "--stats-json", stats});
  HeaderBlocks blocks;
  FloodRun run = run_flood(s, blocks);
  ASSERT_EQ(s.stop(), 0);
  std::string json = read_file(stats);
  long refused = json_number(json, "over_header_list");
  double per_block = run.cpu_ms / static_cast<double>(std::max(refused, 1L));
  std::printf(
      "[ fairness ] HTTP/2: %ld blocks written on %ld connections, %ld refused, "
      "%ld floods; server CPU %.0f ms, %.3f ms a block refused\n",
      run.flood.pieces, run.flood.connections, refused, json_number(json, "flood_refused_headers"),
      run.cpu_ms, per_block);
  report("HTTP/2", run);
  RecordProperty("cpu_us_per_block", static_cast<int>(per_block * 1000));
  EXPECT_GT(refused, 100) << "the flood hardly reached the server";
  expect_served(run.probe);
  EXPECT_LE(per_block, scaled_ms(1.0)) << "server CPU per header block, ms";
  EXPECT_GT(json_number(json, "flood_refused_headers"), 0) << json;
}

// One pipelined flood of kFlood by a client that reads (or not).
void pipelined_flood(bool reads) {
  ServerProcess s("sanic", {"-w", "1"});
  PipelinedRequests requests(reads);
  FloodRun run = run_flood(s, requests);
  ASSERT_EQ(s.stop(), 0);
  const char* what = reads ? "HTTP/1 read" : "HTTP/1 unread";
  std::printf("[ fairness ] %s: %ld batches of 64 KiB on %ld connections; server CPU %.0f ms\n",
              what, run.flood.pieces, run.flood.connections, run.cpu_ms);
  report(what, run);
  EXPECT_GT(run.flood.pieces, 100) << "the flood hardly reached the server";
  expect_served(run.probe);
}

TEST(Fairness, PipelinedHttp1RequestsLeaveOthersServedWithin20ms) {
  pipelined_flood(false);
}

TEST(Fairness, PipelinedHttp1RequestsReadAsTheyComeLeaveOthersServedWithin20ms) {
  pipelined_flood(true);
}

}  // namespace
}  // namespace hello::test
