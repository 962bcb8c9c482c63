// The accounting sink alone: each event moves its own counter and no
// other, and the access-log lines it writes carry the answer's version and
// service time. (The hearts' and the connection's tests check that they
// report the events; these check where the events land.)
#include "observe/accounting.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace hello {
namespace {

using Member = Counter WorkerStats::*;

// The counters of one kind of event, so that a test can see that exactly
// one of them moved.
std::vector<uint64_t> values(const WorkerStats& stats, const std::vector<Member>& members) {
  std::vector<uint64_t> v;
  for (Member m : members) v.push_back((stats.*m).get());
  return v;
}

// `members` all 0 but the one at `index`, which is `count`.
std::vector<uint64_t> only(size_t size, size_t index, uint64_t count = 1) {
  std::vector<uint64_t> v(size, 0);
  v[index] = count;
  return v;
}

const std::vector<Member> kClosedCounters = {
    &WorkerStats::connections_rejected,  &WorkerStats::closed_client,
    &WorkerStats::closed_answered,       &WorkerStats::closed_keepalive_timeout,
    &WorkerStats::closed_header_timeout, &WorkerStats::closed_send_timeout,
    &WorkerStats::closed_reset,          &WorkerStats::closed_shutdown,
    &WorkerStats::closed_error,
};

TEST(AccountingClosed, EachReasonCountsInItsOwnCounterAndUndecidedIsAnError) {
  struct Case {
    CloseReason why;
    size_t counter;  // in kClosedCounters
  };
  const Case cases[] = {
      {CloseReason::none, 8},
      {CloseReason::limit, 0},
      {CloseReason::client, 1},
      {CloseReason::answered, 2},
      {CloseReason::keepalive_timeout, 3},
      {CloseReason::header_timeout, 4},
      {CloseReason::send_timeout, 5},
      {CloseReason::reset, 6},
      {CloseReason::shutdown, 7},
      {CloseReason::error, 8},
  };
  for (const Case& c : cases) {
    WorkerStats stats;
    Accounting accounting(stats);
    accounting.opened();
    accounting.closed(c.why);
    EXPECT_EQ(values(stats, kClosedCounters), only(kClosedCounters.size(), c.counter))
        << "reason " << static_cast<int>(c.why);
  }
}

TEST(AccountingClosed, TheOpenGaugeFollowsOpensAndCloses) {
  WorkerStats stats;
  Accounting accounting(stats);
  accounting.opened();
  accounting.opened();
  accounting.opened();
  EXPECT_EQ(accounting.open(), 3u);
  accounting.closed(CloseReason::answered);
  accounting.closed(CloseReason::client);
  EXPECT_EQ(accounting.open(), 1u);
}

const std::vector<Member> kTlsCounters = {
    &WorkerStats::tls_full,
    &WorkerStats::tls_resumed,
    &WorkerStats::tls_failed_version,
    &WorkerStats::tls_failed_cipher,
    &WorkerStats::tls_failed_plain_http,
    &WorkerStats::tls_failed_other,
    &WorkerStats::tls_failed_client_left,
};
const std::vector<Member> kTlsDetails = {
    &WorkerStats::tls_v1_2,        &WorkerStats::tls_v1_3,     &WorkerStats::tls_aes_128_gcm,
    &WorkerStats::tls_aes_256_gcm, &WorkerStats::tls_chacha20, &WorkerStats::tls_cipher_other,
};

TEST(AccountingTls, EachEndCountsInItsOwnCounterAndFailuresHaveNoVersionOrCipher) {
  using End = TlsHandshake::End;
  const End ends[] = {End::full,       End::resumed, End::version,    End::cipher,
                      End::plain_http, End::other,   End::client_left};
  for (size_t i = 0; i < std::size(ends); ++i) {
    WorkerStats stats;
    Accounting accounting(stats);
    TlsHandshake h;
    h.end = ends[i];
    h.tls13 = true;
    h.cipher = TlsHandshake::Cipher::chacha20;
    accounting.tls_handshake(h);
    EXPECT_EQ(values(stats, kTlsCounters), only(kTlsCounters.size(), i)) << "end " << i;
    bool completed = ends[i] == End::full || ends[i] == End::resumed;
    // Completed: TLS 1.3 and ChaCha20 counted once; failed: nothing.
    std::vector<uint64_t> details(kTlsDetails.size(), 0);
    if (completed) details[1] = details[4] = 1;
    EXPECT_EQ(values(stats, kTlsDetails), details) << "end " << i;
  }
}

TEST(AccountingTls, VersionsAndCiphersOfFullAndResumedHandshakes) {
  using Cipher = TlsHandshake::Cipher;
  WorkerStats stats;
  Accounting accounting(stats);
  auto handshake = [&](TlsHandshake::End end, bool tls13, Cipher cipher) {
    TlsHandshake h;
    h.end = end;
    h.tls13 = tls13;
    h.cipher = cipher;
    accounting.tls_handshake(h);
  };
  handshake(TlsHandshake::End::full, false, Cipher::aes_128_gcm);
  handshake(TlsHandshake::End::resumed, false, Cipher::aes_256_gcm);
  handshake(TlsHandshake::End::resumed, false, Cipher::aes_256_gcm);
  handshake(TlsHandshake::End::full, true, Cipher::chacha20);
  handshake(TlsHandshake::End::full, true, Cipher::chacha20);
  handshake(TlsHandshake::End::resumed, true, Cipher::chacha20);
  handshake(TlsHandshake::End::full, true, Cipher::other);
  // 1.2: 3, 1.3: 4; AES-128: 1, AES-256: 2, ChaCha20: 3, other: 1.
  EXPECT_EQ(values(stats, kTlsDetails), (std::vector<uint64_t>{3, 4, 1, 2, 3, 1}));
  EXPECT_EQ(stats.tls_full.get(), 4u);
  EXPECT_EQ(stats.tls_resumed.get(), 3u);
}

TEST(AccountingH2, EachLimitAndFloodCountsInItsOwnCounter) {
  const std::vector<Member> limits = {
      &WorkerStats::h2_over_streams, &WorkerStats::h2_over_header_list, &WorkerStats::h2_over_body};
  for (size_t i = 0; i < limits.size(); ++i) {
    WorkerStats stats;
    Accounting accounting(stats);
    accounting.h2_over_limit(static_cast<H2Limit>(i));
    EXPECT_EQ(values(stats, limits), only(limits.size(), i)) << "limit " << i;
  }
  const std::vector<Member> floods = {
      &WorkerStats::h2_flood_rapid_reset, &WorkerStats::h2_flood_continuation,
      &WorkerStats::h2_flood_ack,         &WorkerStats::h2_flood_ping,
      &WorkerStats::h2_flood_settings,    &WorkerStats::h2_flood_priority,
      &WorkerStats::h2_flood_empty_data,  &WorkerStats::h2_flood_refused_headers,
  };
  for (size_t i = 0; i < floods.size(); ++i) {
    WorkerStats stats;
    Accounting accounting(stats);
    accounting.h2_flood(static_cast<H2Flood>(i));
    EXPECT_EQ(values(stats, floods), only(floods.size(), i)) << "flood " << i;
  }
}

TEST(AccountingShaping, ShapedResetsAndBadParametersAreCountedByKind) {
  const std::vector<Member> shaping = {&WorkerStats::shaped, &WorkerStats::resets,
                                       &WorkerStats::shaped_5xx, &WorkerStats::shape_errors};
  struct Case {
    Answered::Shaping shaping;
    uint16_t status;
    std::vector<uint64_t> counted;  // shaped, resets, 5xx, errors
  };
  const Case cases[] = {
      {Answered::Shaping::none, 500, {0, 0, 0, 0}},
      {Answered::Shaping::shaped, 200, {1, 0, 0, 0}},
      {Answered::Shaping::shaped, 499, {1, 0, 0, 0}},
      {Answered::Shaping::shaped, 500, {1, 0, 1, 0}},
      {Answered::Shaping::shaped, 599, {1, 0, 1, 0}},
      {Answered::Shaping::reset, 0, {1, 1, 0, 0}},
      {Answered::Shaping::bad_parameters, 400, {0, 0, 0, 1}},
  };
  for (const Case& c : cases) {
    WorkerStats stats;
    Accounting accounting(stats);
    Answered a;
    a.shaping = c.shaping;
    a.status = c.status;
    accounting.answered(a);
    EXPECT_EQ(values(stats, shaping), c.counted)
        << "shaping " << static_cast<int>(c.shaping) << " status " << c.status;
  }
}

uint64_t monotonic_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

// An access log into a file of its own, and the lines written to it.
class AccountingLog : public ::testing::Test {
 protected:
  void open(LogFormat format) {
    fd_ = mkstemp(path_);
    ASSERT_GE(fd_, 0);
    writer_ = std::make_unique<LogWriter>(fd_, true, 1, format);
    log_ = std::make_unique<AccessLog>(*writer_, 0, dropped_);
    accounting_ = std::make_unique<Accounting>(stats_, nullptr, log_.get());
  }
  // Stops the writer, which writes what was handed to it, and reads the
  // file. No final flush: only what the accounting handed over is there.
  std::vector<std::string> lines() {
    EXPECT_TRUE(writer_->stop());
    std::ifstream in(path_);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  void TearDown() override {
    accounting_.reset();
    log_.reset();
    writer_.reset();
    unlink(path_);
  }
  static Answered get(uint8_t http_minor) {
    Answered a;
    a.status = 200;
    a.http_minor = http_minor;
    a.method = "GET";
    a.target = "/";
    a.body_bytes = 2;
    return a;
  }
  // The JSON line's "service_us".
  static double service_us(const std::string& line) {
    size_t at = line.find("\"service_us\":");
    EXPECT_NE(at, std::string::npos) << line;
    return at == std::string::npos ? -1 : strtod(line.c_str() + at + 13, nullptr);
  }

  char path_[40] = "/tmp/accounting_test.XXXXXX";
  int fd_ = -1;
  WorkerStats stats_;
  Counter dropped_;
  std::unique_ptr<LogWriter> writer_;
  std::unique_ptr<AccessLog> log_;
  std::unique_ptr<Accounting> accounting_;
};

TEST_F(AccountingLog, EachLineHasItsRequestsVersion) {
  open(LogFormat::clf);
  accounting_->answered(get(0));
  accounting_->answered(get(1));
  Answered h2 = get(1);
  h2.http2 = true;
  accounting_->answered(h2);
  accounting_->flush_final();
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0].ends_with("\"GET / HTTP/1.0\" 200 2")) << got[0];
  EXPECT_TRUE(got[1].ends_with("\"GET / HTTP/1.1\" 200 2")) << got[1];
  EXPECT_TRUE(got[2].ends_with("\"GET / HTTP/2.0\" 200 2")) << got[2];
}

// The first answer of a read began when the oldest pending request did,
// the others when the read came; an HTTP/2 stream knows its own start.
TEST_F(AccountingLog, TheFirstAnswerIsTimedFromTheOldestRequestTheOthersFromTheRead) {
  open(LogFormat::json);
  uint64_t now = monotonic_ns();
  accounting_->serving("127.0.0.1", 80, now - 3'000'000'000, now - 1'000'000'000);
  accounting_->answered(get(1));
  accounting_->answered(get(1));
  Answered stream = get(1);
  stream.began_ns = now - 2'000'000'000;
  accounting_->answered(stream);
  accounting_->flush_final();
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 3u);
  // At least 3 s, 1 s and 2 s; the order says each was timed from its own start.
  EXPECT_GE(service_us(got[0]), 3e6) << got[0];
  EXPECT_GE(service_us(got[1]), 1e6) << got[1];
  EXPECT_GE(service_us(got[2]), 2e6) << got[2];
  EXPECT_LT(service_us(got[1]), service_us(got[2]));
  EXPECT_LT(service_us(got[2]), service_us(got[0]));
}

TEST_F(AccountingLog, ATickHandsTheLinesToTheWriter) {
  open(LogFormat::clf);
  accounting_->answered(get(1));
  accounting_->tick(time(nullptr));
  // No flush_final(): the line is in the file only if the tick handed it over.
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ends_with("\"GET / HTTP/1.1\" 200 2")) << got[0];
}

}  // namespace
}  // namespace hello
