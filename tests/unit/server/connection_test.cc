// Connection over a fake transport (connection_fixture.h): pipelining,
// waiting answers, output held back, the FIN and the close, resets.
#include "server/connection.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "connection_fixture.h"

namespace hello {
namespace {

using test::ConnectionTest;
using test::FakeTransport;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetJson = "GET /json HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetSlow = "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n";
constexpr std::string_view kGetClose = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

TEST_F(ConnectionTest, PipelinedAnswersLeaveInOrderInOneWrite) {
  fake_.send(std::string(kGet) + std::string(kGetJson) + std::string(kGet));
  EXPECT_EQ(fake_.received, answer("/") + answer("/json") + answer("/"));
  EXPECT_EQ(fake_.try_writes, 1);
  EXPECT_FALSE(fake_.last_write_held);
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  EXPECT_EQ(stats_.requests.get(), 3u);
  EXPECT_EQ(stats_.bytes_out.get(), fake_.received.size());
}

TEST_F(ConnectionTest, AnAnswerThatWaitsKeepsTheOrder) {
  fake_.send(std::string(kGet) + std::string(kGetSlow) + std::string(kGetJson));
  // The answer before the waiting one goes at once; the one after waits with it.
  EXPECT_EQ(fake_.received, answer("/"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::waiting);
  run_until([&] { return connection_.phase() != Connection::Phase::waiting; });
  EXPECT_EQ(fake_.received, answer("/") + answer("/slow") + answer("/json"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_EQ(fake_.try_writes, 2);  // one per read, one when the wait ended
}

TEST_F(ConnectionTest, OutputOverTheHighWaterMarkStopsReading) {
  fake_.room = 0;  // a client that reads nothing
  std::string burst;
  for (int i = 0; i < 2000; ++i) burst += kGet;
  size_t sent = 0;
  // Bounded: each burst adds about 200 KB of answers.
  for (int i = 0; i < 20 && fake_.reading(); ++i) {
    fake_.send(burst);
    sent += 2000;
  }
  EXPECT_FALSE(fake_.reading());
  EXPECT_EQ(connection_.phase(), Connection::Phase::writing);
  // Reading stopped with the first read that took the output over 1 MiB.
  size_t one = answer("/").size();
  EXPECT_GT(sent * one, size_t{1} << 20);
  EXPECT_LE((sent - 2000) * one, size_t{1} << 20);
  // The client reads: everything arrives, in order, and reading resumes.
  while (fake_.queued_req != nullptr) fake_.complete_write();
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
  EXPECT_TRUE(fake_.reading());
  EXPECT_EQ(fake_.received.size(), sent * one);
  EXPECT_EQ(fake_.received.substr(0, 2 * one), answer("/") + answer("/"));
}

TEST_F(ConnectionTest, AClosingAnswerWithUnreadInputSendsFinAndDrains) {
  fake_.unread = true;
  fake_.send(kGetClose);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_TRUE(fake_.last_write_held);  // held for the FIN
  EXPECT_TRUE(fake_.fin);
  EXPECT_FALSE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
  // What the client still sends is read and ignored; its FIN ends it.
  fake_.send(kGet);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  fake_.eof();
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_FALSE(fake_.aborted);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_answered.get(), 1u);
}

TEST_F(ConnectionTest, AClosingAnswerWithNothingUnreadClosesAtOnce) {
  fake_.send(kGetClose);
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_FALSE(fake_.fin);
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_FALSE(fake_.aborted);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
}

TEST_F(ConnectionTest, AClosingAnswerQueuedIsWrittenBeforeTheEnd) {
  fake_.room = 10;
  fake_.unread = true;
  fake_.send(kGetClose);
  EXPECT_EQ(connection_.phase(), Connection::Phase::ending);
  EXPECT_FALSE(fake_.fin);  // not before the answer is out
  fake_.complete_write();
  EXPECT_EQ(fake_.received, answer("/", Variant::close_11));
  EXPECT_TRUE(fake_.fin);
  EXPECT_EQ(connection_.phase(), Connection::Phase::lingering);
}

TEST_F(ConnectionTest, AShapedResetAbortsAfterTheAnswersBeforeIt) {
  fake_.send(std::string(kGet) + "GET /?reset=100 HTTP/1.1\r\nHost: a\r\n\r\n" + std::string(kGet));
  EXPECT_EQ(fake_.received, answer("/"));
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_TRUE(fake_.aborted);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_reset.get(), 1u);
  EXPECT_EQ(stats_.resets.get(), 1u);
}

TEST_F(ConnectionTest, AClientResetClosesAtOnce) {
  fake_.send("GET / HTTP/1.1\r\nHo");  // a request in progress
  fake_.client_reset();
  EXPECT_TRUE(fake_.close_asked);
  EXPECT_EQ(connection_.phase(), Connection::Phase::closing);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_client.get(), 1u);
}

TEST_F(ConnectionTest, AWriteFailedByTheClientsResetCountsAsTheClients) {
  fake_.fail = UV_EPIPE;
  fake_.send(kGet);
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_client.get(), 1u);
  EXPECT_EQ(stats_.closed_error.get(), 0u);
}

TEST_F(ConnectionTest, AWriteFailedOtherwiseIsAnError) {
  fake_.fail = UV_EIO;
  fake_.send(kGet);
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  EXPECT_EQ(stats_.closed_error.get(), 1u);
}

TEST_F(ConnectionTest, AClientThatLeavesWhileItsAnswerWaitsGetsNothing) {
  fake_.send(kGetSlow);
  EXPECT_EQ(connection_.phase(), Connection::Phase::waiting);
  fake_.eof();
  EXPECT_TRUE(fake_.close_asked);
  fake_.finish_close();
  // The wait was cancelled: nothing fires on the closed connection.
  run_until([] { return false; }, 40);  // twice the delay
  EXPECT_EQ(fake_.received, "");
  EXPECT_EQ(stats_.closed_client.get(), 1u);
  EXPECT_EQ(stats_.requests.get(), 0u);
}

TEST_F(ConnectionTest, APartialWriteQueuesOnlyTheRest) {
  fake_.room = 7;
  fake_.send(std::string(kGet) + std::string(kGet));
  EXPECT_EQ(fake_.received.size(), 7u);
  EXPECT_EQ(fake_.queued.size(), 2 * answer("/").size() - 7);
  // Answers produced while the write is in flight go behind it.
  fake_.send(kGetJson);
  fake_.complete_write();
  fake_.complete_write();
  EXPECT_EQ(fake_.received, answer("/") + answer("/") + answer("/json"));
  EXPECT_EQ(connection_.phase(), Connection::Phase::reading);
}

}  // namespace
}  // namespace hello
