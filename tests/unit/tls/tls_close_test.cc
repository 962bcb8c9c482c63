// How a TlsTransport ends (close_notify, the FIN, a close, an abort) and
// what it passes to the transport under it, over a fake lower transport
// with an OpenSSL client over memory BIOs: no socket.
#include <gtest/gtest.h>
#include <openssl/err.h>

#include <string>

#include "tls/tls_transport.h"
#include "tls_wire.h"

namespace hello {
namespace {

using test::Client;

class TlsCloseTest : public test::TlsWire {
 protected:
  // A connection whose handshake is over, its tickets read by the client.
  void open(Client& c) {
    serve();
    shake(c);
    ASSERT_TRUE(c.done());
    c.give(from_server());
    ASSERT_EQ(c.read(), "");
  }
  // What the client makes of the server's bytes since the last call.
  std::string client_reads(Client& c, int* error) {
    c.give(from_server());
    return c.read(error);
  }
  uv_buf_t buf(std::string& s) { return uv_buf_init(s.data(), static_cast<unsigned>(s.size())); }
};

TEST_F(TlsCloseTest, ShutdownSaysCloseNotifyOnceThenTheFin) {
  Client c;
  open(c);
  EXPECT_EQ(tls_->shutdown(), 0);
  EXPECT_EQ(lower_.shutdowns, 1);
  EXPECT_TRUE(lower_.ended_last());
  int error = 0;
  EXPECT_EQ(client_reads(c, &error), "");
  EXPECT_EQ(error, SSL_ERROR_ZERO_RETURN);
  size_t sent = lower_.sent.size();
  EXPECT_EQ(tls_->shutdown(), 0);
  EXPECT_EQ(lower_.sent.size(), sent) << "close_notify once";
  EXPECT_EQ(lower_.shutdowns, 2);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(TlsCloseTest, ACloseNotifyTheLowerRefusesFailsTheShutdown) {
  Client c;
  open(c);
  lower_.fail_try = UV_EPIPE;
  EXPECT_EQ(tls_->shutdown(), UV_EPIPE);
  EXPECT_EQ(lower_.shutdowns, 0) << "no FIN";
}

TEST_F(TlsCloseTest, AFailingFinIsReturned) {
  Client c;
  open(c);
  lower_.fail_shutdown = UV_ENOTCONN;
  EXPECT_EQ(tls_->shutdown(), UV_ENOTCONN);
}

TEST_F(TlsCloseTest, TheFinWaitsForTheQueueAndCloseNotifyGoesBehindIt) {
  Client c;
  open(c);
  std::string answer(5000, 'a');
  uv_buf_t b = buf(answer);
  lower_.room = 100;
  EXPECT_EQ(tls_->try_write(&b, 1, false), 5000);
  ASSERT_NE(lower_.queued_req, nullptr);
  EXPECT_EQ(tls_->shutdown(), 0);
  EXPECT_EQ(lower_.shutdowns, 0) << "not before the queue is out";
  lower_.complete_write();  // the answer's rest
  EXPECT_EQ(lower_.shutdowns, 0);
  ASSERT_NE(lower_.queued_req, nullptr) << "close_notify, queued behind it";
  lower_.complete_write();
  EXPECT_EQ(lower_.shutdowns, 1);
  int error = 0;
  EXPECT_EQ(client_reads(c, &error), answer);
  EXPECT_EQ(error, SSL_ERROR_ZERO_RETURN);
}

TEST_F(TlsCloseTest, CloseSaysCloseNotifyThenClosesTheLower) {
  Client c;
  open(c);
  tls_->close(false);
  EXPECT_TRUE(lower_.close_asked);
  EXPECT_FALSE(lower_.aborted);
  EXPECT_TRUE(lower_.ended_last());
  int error = 0;
  client_reads(c, &error);
  EXPECT_EQ(error, SSL_ERROR_ZERO_RETURN);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 0u);
  tls_->close(false);  // once (the fake fails a second close)
  EXPECT_EQ(upper_.closed, 0);
  lower_.finish_close();
  EXPECT_EQ(upper_.closed, 1);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(TlsCloseTest, AnAbortSaysNothing) {
  Client c;
  open(c);
  size_t sent = lower_.sent.size();
  tls_->close(true);
  EXPECT_TRUE(lower_.aborted);
  EXPECT_EQ(lower_.sent.size(), sent);
}

TEST_F(TlsCloseTest, CloseAfterCloseNotifyWasSentSaysItNoMore) {
  Client c;
  open(c);
  ASSERT_EQ(tls_->shutdown(), 0);
  size_t sent = lower_.sent.size();
  tls_->close(false);
  EXPECT_EQ(lower_.sent.size(), sent);
}

TEST_F(TlsCloseTest, AClosedBeforeTheHandshakeEndedIsCountedClientLeft) {
  serve();
  Client c;
  c.step();
  send(c);
  tls_->close(false);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 1u);
  EXPECT_EQ(handshakes(), 1u);
  EXPECT_EQ(lower_.lasts.size(), 1u) << "only the ServerHello's flight, no close_notify";
  // Back from the pool: the next connection is counted afresh.
  lower_.finish_close();
  lower_ = test::FakeLower();
  upper_ = test::Upper();
  connect();
  tls_->close(false);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 2u);
}

TEST_F(TlsCloseTest, ATransportWhoseHandshakeWasCountedCountsTheNextAfresh) {
  serve();
  lower_.deliver(std::string("\x16\x03\x01\x00\x05hello", 10));
  ASSERT_EQ(stats_.tls_failed_other.get(), 1u);
  reconnect();
  tls_->close(false);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 1u);
  EXPECT_EQ(handshakes(), 2u);
}

TEST_F(TlsCloseTest, ACloseWithAWriteInFlightCancelsItWithoutCloseNotify) {
  Client c;
  open(c);
  std::string answer(5000, 'a');
  uv_buf_t b = buf(answer);
  uv_write_t req;
  lower_.room = 100;
  ASSERT_EQ(tls_->write(&req, &b, 1), 0);
  std::string queued = lower_.queued;
  size_t writes = lower_.lasts.size();
  tls_->close(false);
  EXPECT_EQ(lower_.queued, queued);
  EXPECT_EQ(lower_.lasts.size(), writes) << "no close_notify";
  EXPECT_TRUE(upper_.written.empty());
  lower_.finish_close();
  EXPECT_EQ(upper_.written, std::vector<int>{UV_ECANCELED});
  EXPECT_EQ(upper_.closed, 1);
}

TEST_F(TlsCloseTest, WhatRemainsIsPassedToTheLower) {
  serve();
  EXPECT_TRUE(tls_->reading());
  tls_->stop_reading();
  EXPECT_FALSE(tls_->reading());
  EXPECT_FALSE(lower_.reading());
  lower_.fail_start = UV_EBADF;
  EXPECT_EQ(tls_->start_reading(), UV_EBADF);
  EXPECT_FALSE(tls_->reading());
  tls_->read_now();
  EXPECT_EQ(lower_.read_nows, 1);
  char name[64];
  EXPECT_EQ(tls_->peer_name(name, sizeof name), 4343);
  EXPECT_STREQ(name, "192.0.2.9");
  // Before the handshake's end, unread input is the lower's to say.
  EXPECT_FALSE(tls_->unread_input());
  lower_.unread = true;
  EXPECT_TRUE(tls_->unread_input());
}

TEST_F(TlsCloseTest, OnceOpenAClientIsAlwaysAwaitedAtTheClose) {
  Client c;
  open(c);
  lower_.unread = false;
  EXPECT_TRUE(tls_->unread_input()) << "it answers our close_notify";
}

TEST_F(TlsCloseTest, AWrapOpenSslRefusesLeavesTheLowerAlone) {
  serve();
  tls_->close(true);
  lower_.finish_close();
  test::FakeLower other;
  SSL_CTX* ctx = std::exchange(shared_->ctx, nullptr);  // SSL_new fails
  EXPECT_FALSE(tls_->wrap(other));
  EXPECT_FALSE(other.attached());
  EXPECT_EQ(ERR_peek_error(), 0u);
  shared_->ctx = ctx;
  EXPECT_TRUE(tls_->wrap(other));
  EXPECT_TRUE(other.attached());
}

}  // namespace
}  // namespace hello
