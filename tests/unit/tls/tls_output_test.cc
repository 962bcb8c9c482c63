// A TlsTransport's output (tls_output.cc): plaintext encrypted and sent
// while the kernel takes it, the rest queued in order, and every failure
// of the transport under it handed to the connection; over a fake lower
// transport with an OpenSSL client over memory BIOs: no socket.
#include <gtest/gtest.h>
#include <openssl/err.h>

#include <string>

#include "tls/tls_transport.h"
#include "tls_wire.h"

namespace hello {
namespace {

using test::Client;

class TlsOutputTest : public test::TlsWire {
 protected:
  void SetUp() override {
    serve();
    shake(client_);
    ASSERT_TRUE(client_.done());
    client_.give(from_server());  // the tickets
    ASSERT_EQ(client_.read(), "");
    writes_ = lower_.lasts.size();
  }
  // What the client reads of the server's bytes since the last call.
  std::string client_reads(int* error = nullptr) {
    client_.give(from_server());
    return client_.read(error);
  }
  int try_write(std::string& s, bool last = false) {
    uv_buf_t b = uv_buf_init(s.data(), static_cast<unsigned>(s.size()));
    return tls_->try_write(&b, 1, last);
  }
  int write(std::string& s) {
    uv_buf_t b = uv_buf_init(s.data(), static_cast<unsigned>(s.size()));
    return tls_->write(&req_, &b, 1);
  }
  // try_writes since the handshake.
  size_t try_writes() { return lower_.lasts.size() - writes_; }

  Client client_;
  size_t writes_ = 0;
  uv_write_t req_;
};

constexpr int kFourRecords = 4 * TlsShared::kRecord;

TEST_F(TlsOutputTest, ALargeAnswerLeavesInWritesOfFourRecords) {
  std::string big(100000, 'x');
  big[99999] = 'y';
  EXPECT_EQ(try_write(big), 100000);
  EXPECT_EQ(try_writes(), 2u);
  EXPECT_EQ(client_reads(), big);
}

TEST_F(TlsOutputTest, TheLastAnswerCarriesCloseNotifyInItsWrite) {
  std::string answer = "the last answer";
  EXPECT_EQ(try_write(answer, true), static_cast<int>(answer.size()));
  EXPECT_EQ(try_writes(), 1u);
  EXPECT_TRUE(lower_.ended_last());
  int error = 0;
  EXPECT_EQ(client_reads(&error), answer);
  EXPECT_EQ(error, SSL_ERROR_ZERO_RETURN);
  // shutdown() has only the FIN left to send.
  EXPECT_EQ(tls_->shutdown(), 0);
  EXPECT_EQ(try_writes(), 1u);
  EXPECT_EQ(lower_.shutdowns, 1);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(TlsOutputTest, WhatTheKernelLeavesIsQueuedAndLaterWritesWait) {
  lower_.room = 50;
  std::string first = "first answer, longer than fifty bytes once encrypted";
  EXPECT_EQ(try_write(first), static_cast<int>(first.size()));
  EXPECT_EQ(lower_.writes, 1);
  std::string second = "second";
  EXPECT_EQ(try_write(second), UV_EAGAIN);
  lower_.room = SIZE_MAX;
  lower_.complete_write();
  EXPECT_EQ(try_write(second), static_cast<int>(second.size()));
  EXPECT_EQ(client_reads(), first + second);
}

TEST_F(TlsOutputTest, AKernelThatTakesNothingNowGetsAllOfItQueued) {
  lower_.room = 0;
  std::string answer = "answer";
  EXPECT_EQ(try_write(answer), static_cast<int>(answer.size()));
  EXPECT_EQ(lower_.writes, 1);
  lower_.complete_write();
  EXPECT_EQ(client_reads(), answer);
}

TEST_F(TlsOutputTest, NoMoreIsEncryptedWhileTheKernelHoldsFourRecords) {
  lower_.room = 100;
  std::string big(100000, 'x');
  EXPECT_EQ(try_write(big), kFourRecords);
  EXPECT_EQ(try_writes(), 1u);
}

TEST_F(TlsOutputTest, AQueuedWriteCompletesOnceAllOfItIsOut) {
  lower_.room = 1000;
  std::string a(50000, 'a'), b(50000, 'b');
  uv_buf_t bufs[2] = {uv_buf_init(a.data(), 50000), uv_buf_init(b.data(), 50000)};
  ASSERT_EQ(tls_->write(&req_, bufs, 2), 0);
  for (int i = 0; i < 20 && upper_.written.empty(); ++i) {
    ASSERT_NE(lower_.queued_req, nullptr);
    EXPECT_TRUE(upper_.written.empty());
    lower_.complete_write();
  }
  EXPECT_EQ(upper_.written, std::vector<int>{0});
  EXPECT_EQ(lower_.queued_req, nullptr);
  EXPECT_EQ(client_reads(), a + b);
}

TEST_F(TlsOutputTest, AQueuedWriteTheKernelTakesAtOnceCompletesAtOnce) {
  std::string answer = "answer";
  ASSERT_EQ(write(answer), 0);
  EXPECT_EQ(upper_.written, std::vector<int>{0});
  EXPECT_EQ(lower_.writes, 0);
  EXPECT_EQ(client_reads(), answer);
}

TEST_F(TlsOutputTest, AWriteRefusedAtOnceIsReturnedAndLeavesNothingQueued) {
  lower_.fail_try = UV_EPIPE;
  std::string answer = "answer";
  EXPECT_EQ(write(answer), UV_EPIPE);
  EXPECT_TRUE(upper_.written.empty());
  lower_.fail_try = 0;
  ASSERT_EQ(write(answer), 0);
  EXPECT_EQ(upper_.written, std::vector<int>{0});
}

TEST_F(TlsOutputTest, ALowerWriteRefusedFailsTheTryWrite) {
  lower_.room = 100;
  lower_.fail_write = UV_EPIPE;
  std::string answer(1000, 'a');
  EXPECT_EQ(try_write(answer), UV_EPIPE);
  EXPECT_EQ(lower_.writes, 1);
  // Nothing is left in flight.
  lower_.fail_write = 0;
  EXPECT_EQ(try_write(answer), 1000);
  EXPECT_EQ(lower_.writes, 2);
}

TEST_F(TlsOutputTest, AFailedQueuedWriteIsReportedAndRefusesTheNext) {
  lower_.room = 100;
  std::string answer(1000, 'a');
  ASSERT_EQ(write(answer), 0);
  lower_.complete_write(UV_ECONNRESET);
  EXPECT_EQ(upper_.written, std::vector<int>{UV_ECONNRESET});
  EXPECT_EQ(try_write(answer), UV_ECONNRESET);
  EXPECT_EQ(write(answer), UV_ECONNRESET);
  EXPECT_EQ(upper_.written, std::vector<int>{UV_ECONNRESET});
}

TEST_F(TlsOutputTest, ABacklogTheLowerRefusesFailsTheQueuedWrite) {
  lower_.room = 100;
  std::string answer(1000, 'a');
  ASSERT_EQ(write(answer), 0);
  ASSERT_EQ(tls_->shutdown(), 0);  // close_notify, behind the write in flight
  lower_.fail_write = UV_EPIPE;
  lower_.complete_write();
  EXPECT_EQ(upper_.written, std::vector<int>{UV_EPIPE});
  EXPECT_EQ(lower_.shutdowns, 0);
}

TEST_F(TlsOutputTest, MoreOfAQueuedWriteTheLowerRefusesFailsIt) {
  lower_.room = 100;
  std::string big(100000, 'x');
  ASSERT_EQ(write(big), 0);
  lower_.fail_try = UV_ECONNRESET;
  lower_.complete_write();  // the first four records are out; the rest cannot go
  EXPECT_EQ(upper_.written, std::vector<int>{UV_ECONNRESET});
}

TEST_F(TlsOutputTest, NothingIsEncryptedAfterABadRecord) {
  client_.write("bad");
  std::string bad = client_.take();
  bad[bad.size() - 1] ^= 1;
  lower_.deliver(bad);
  ASSERT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPROTO});
  std::string answer = "answer";
  EXPECT_EQ(write(answer), UV_EPROTO);
  EXPECT_TRUE(upper_.written.empty());
}

TEST_F(TlsOutputTest, BeforeTheHandshakeEndsNothingIsWritten) {
  reconnect();
  std::string answer = "answer";
  EXPECT_EQ(try_write(answer), UV_EPIPE);
  EXPECT_EQ(write(answer), UV_EPIPE);
  EXPECT_TRUE(lower_.lasts.empty());
  EXPECT_TRUE(upper_.written.empty());
}

}  // namespace
}  // namespace hello
