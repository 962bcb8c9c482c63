// Connection over a fake transport (connection_fixture.h) when things go
// wrong or come in odd shapes: read errors, a FIN or a write the transport
// refuses, input held behind a waiting answer up to its cap, plain HTTP on
// a TLS port, and a TLS transport OpenSSL cannot make.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "connection_fixture.h"
#include "tls/tls_context.h"

namespace hello {
namespace {

using test::ConnectionTest;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetSlow = "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetClose = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
constexpr std::string_view kGetSlowClose =
    "GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

// A GET of exactly 64 bytes: 1024 of them fill 64 KiB.
std::string get64() {
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
  std::string get = head + std::string(64 - head.size() - 4, 'x') + "\r\n\r\n";
  EXPECT_EQ(get.size(), 64u);
  return get;
}

std::string times(const std::string& s, int n) {
  std::string all;
  for (int i = 0; i < n; ++i) all += s;
  return all;
}

TEST_F(ConnectionTest, AReadErrorOtherThanAResetClosesAsAnError) {
  fake_.send("GET / HTTP/1.1\r\nHo");  // a request in progress
  fake_.read_error(UV_EPROTO);         // a TLS record that failed to decrypt
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_FALSE(fake_.aborted);
  EXPECT_EQ(fake_.received, "");
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_error.get(), 1u);
  EXPECT_EQ(stats_.closed_client.get(), 0u);
}

TEST_F(ConnectionTest, AFinTheTransportRefusesClosesAtOnce) {
  fake_.unread = true;  // a FIN and a wait would be due
  fake_.shutdown_error = UV_ENOTCONN;
  fake_.send(kGetClose);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_FALSE(fake_.fin);
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_answered.get(), 1u);
}

TEST_F(ConnectionTest, AQueuedWriteTheTransportRefusesClosesAsAnError) {
  fake_.room = 10;
  fake_.write_error = UV_EIO;
  fake_.send(kGet);
  EXPECT_EQ(fake_.received, answer("/").substr(0, 10));
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_error.get(), 1u);
}

TEST_F(ConnectionTest, InputHeldBehindAWaitingAnswerStopsReadingAt64KiB) {
  const std::string held = times(get64(), 1024);
  fake_.send(kGetSlow);
  ASSERT_EQ(connection_.phase(), Connection::Phase::waiting);
  EXPECT_EQ(fake_.send(std::string_view(held).substr(0, 65535)), 65535u);
  EXPECT_TRUE(fake_.reading()) << "one byte under the cap";
  EXPECT_EQ(fake_.send(std::string_view(held).substr(65535)), 1u);
  EXPECT_FALSE(fake_.reading()) << "at the cap";
  EXPECT_EQ(fake_.send(kGet), 0u) << "the rest waits in the socket";
  EXPECT_EQ(fake_.received, "");
  // The wait ends: everything held is answered behind it, in one write,
  // and reading resumes.
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/slow") + times(answer("/"), 1024));
  EXPECT_EQ(fake_.try_writes, 1);
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  EXPECT_EQ(stats_.requests.get(), 1025u);
}

TEST_F(ConnectionTest, AWaitingClosingAnswerWithInputHeldEndsWithTheFin) {
  // The transport has nothing unread, but the connection holds input it
  // will never parse: the client is given the FIN and the time to read.
  // (The closing request ends its read: the heart alone would call the
  // end clean.)
  fake_.send(kGetSlowClose);
  ASSERT_EQ(connection_.phase(), Connection::Phase::waiting);
  fake_.send(kGet);
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/slow", Variant::close_11));
  EXPECT_TRUE(fake_.last_write_held);
  EXPECT_TRUE(fake_.fin);
  EXPECT_FALSE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  fake_.eof();
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_answered.get(), 1u);
}

TEST_F(ConnectionTest, AWaitingClosingAnswerWithNothingHeldClosesAtOnce) {
  fake_.send(kGetSlowClose);
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/slow", Variant::close_11));
  EXPECT_FALSE(fake_.fin);
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_answered.get(), 1u);
}

TEST_F(ConnectionTest, PlainHttpOnATlsPortGetsA400InClearThenTheFin) {
  fake_.misdirect();
  EXPECT_EQ(fake_.received, table_.error(400, Variant::close_11).bytes);
  EXPECT_TRUE(fake_.last_write_held);
  EXPECT_TRUE(fake_.fin) << "the request was not read: the client gets time to read the 400";
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  fake_.eof();
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_error.get(), 1u);
  EXPECT_EQ(stats_.closed_answered.get(), 0u);
}

TEST_F(ConnectionTest, PlainHttpReportedWhileAnAnswerWaitsIsIgnored) {
  fake_.send(kGetSlow);
  fake_.misdirect();
  EXPECT_EQ(fake_.received, "");
  EXPECT_EQ(connection_.phase(), Connection::Phase::waiting);
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/slow"));
}

// A connection accepted with --tls whose TLS transport OpenSSL cannot make
// (SSL_new fails: here, for want of a context) closes its socket.
class ConnectionTlsWrapTest : public ConnectionTest {
 protected:
  void SetUp() override { init_loop(); }
};

TEST_F(ConnectionTlsWrapTest, ATlsTransportThatCannotBeMadeClosesTheSocket) {
  TlsOptions options;
  options.enabled = true;
  std::string error;
  auto tls = TlsContext::create(options, "", {"localhost"}, error);
  ASSERT_NE(tls, nullptr) << error;
  TlsShared shared(tls->ctx(), sink_);
  shared.ctx = nullptr;
  context_.use_tls(&shared);
  // The socket's place is taken by a pipe: no network, and its other end
  // sees the close.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  connection_.adopt(fds[1], Protocol::http1);
  ASSERT_EQ(connection_.phase(), Connection::Phase::closing);
  run_until([&] { return released_ == 1; });
  EXPECT_EQ(released_, 1);
  char c;
  EXPECT_EQ(read(fds[0], &c, 1), 0) << "closed, nothing written";
  ::close(fds[0]);
  EXPECT_EQ(stats_.closed_error.get(), 1u);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 0u) << "no handshake began";
}

}  // namespace
}  // namespace hello
