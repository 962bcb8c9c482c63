// TlsTransport's handshake, reading and closing over a fake lower
// transport, with an OpenSSL client over memory BIOs: no socket.
#include "tls/tls_transport.h"

#include <gtest/gtest.h>
#include <openssl/err.h>

#include <string>
#include <vector>

#include "tls_wire.h"

namespace hello {
namespace {

using test::Client;

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

class TlsTransportTest : public test::TlsWire {};

// The alert the server sent in clear before the handshake ended.
int clear_alert(const std::string& sent) {
  if (sent.size() != 7 || sent[0] != '\x15') return -1;
  return static_cast<unsigned char>(sent[6]);
}

TEST_F(TlsTransportTest, AFullTls13HandshakeIsCountedByVersionAndCipher) {
  serve();
  Client c;
  shake(c);
  ASSERT_TRUE(c.done());
  EXPECT_EQ(stats_.tls_full.get(), 1u);
  EXPECT_EQ(stats_.tls_v1_3.get(), 1u);
  EXPECT_EQ(stats_.tls_aes_128_gcm.get(), 1u);  // first of the server's suites, its choice
  EXPECT_EQ(stats_.tls_aes_256_gcm.get(), 0u);
  EXPECT_EQ(handshakes(), 1u);
  EXPECT_TRUE(upper_.errors.empty());
  EXPECT_FALSE(tls_->negotiated_h2());
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(TlsTransportTest, AClientOfferingOnlyAes256GcmIsCountedAsSuch) {
  serve();
  Client c(0, nullptr, "TLS_AES_256_GCM_SHA384");
  shake(c);
  ASSERT_TRUE(c.done());
  EXPECT_EQ(stats_.tls_aes_256_gcm.get(), 1u);
  EXPECT_EQ(stats_.tls_aes_128_gcm.get(), 0u);
}

TEST_F(TlsTransportTest, ATls12HandshakeIsCountedByVersionAndCipher) {
  serve();
  Client c(TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256");
  shake(c);
  ASSERT_TRUE(c.done());
  EXPECT_EQ(stats_.tls_full.get(), 1u);
  EXPECT_EQ(stats_.tls_v1_2.get(), 1u);
  EXPECT_EQ(stats_.tls_v1_3.get(), 0u);
  EXPECT_EQ(stats_.tls_aes_128_gcm.get(), 1u);
}

TEST_F(TlsTransportTest, ChachaAndOtherSuitesAreCountedApart) {
  TlsOptions o;
  o.ciphersuites = "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256";
  serve(o);
  Client chacha(0, nullptr, "TLS_CHACHA20_POLY1305_SHA256");
  shake(chacha);
  ASSERT_TRUE(chacha.done());
  EXPECT_EQ(stats_.tls_chacha20.get(), 1u);
  reconnect();
  Client ccm(0, nullptr, "TLS_AES_128_CCM_SHA256");
  shake(ccm);
  ASSERT_TRUE(ccm.done());
  EXPECT_EQ(stats_.tls_cipher_other.get(), 1u);
  EXPECT_EQ(stats_.tls_full.get(), 2u);
  EXPECT_EQ(stats_.tls_v1_3.get(), 2u);
}

TEST_F(TlsTransportTest, AClientWithATicketIsCountedResumed) {
  serve();
  SSL_SESSION* session = nullptr;
  {
    Client first;
    shake(first);
    ASSERT_TRUE(first.done());
    first.give(from_server());  // the tickets
    EXPECT_EQ(first.read(), "");
    session = SSL_get1_session(first.ssl());
    ASSERT_NE(session, nullptr);
    SSL_shutdown(first.ssl());  // freed without it, the session would not resume
    ASSERT_EQ(SSL_SESSION_is_resumable(session), 1);
  }
  reconnect();
  Client again;
  SSL_set_session(again.ssl(), session);
  SSL_SESSION_free(session);
  shake(again);
  ASSERT_TRUE(again.done());
  EXPECT_EQ(SSL_session_reused(again.ssl()), 1);
  EXPECT_EQ(stats_.tls_resumed.get(), 1u);
  EXPECT_EQ(stats_.tls_full.get(), 1u);
  EXPECT_EQ(stats_.tls_v1_3.get(), 2u);
}

TEST_F(TlsTransportTest, AlpnH2IsNegotiatedAndForgottenByTheNextConnection) {
  TlsOptions o;
  o.h2 = true;
  serve(o, "hq");  // a persona's own protocol, two letters as h2's
  Client h2(0, nullptr, nullptr, "h2");
  shake(h2);
  ASSERT_TRUE(h2.done());
  EXPECT_TRUE(tls_->negotiated_h2());
  reconnect();
  EXPECT_FALSE(tls_->negotiated_h2());
  Client hq(0, nullptr, nullptr, "hq");
  shake(hq);
  ASSERT_TRUE(hq.done());
  const unsigned char* alpn = nullptr;
  unsigned alpn_len = 0;
  SSL_get0_alpn_selected(hq.ssl(), &alpn, &alpn_len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(alpn), alpn_len), "hq");
  EXPECT_FALSE(tls_->negotiated_h2());
}

TEST_F(TlsTransportTest, PlaintextFlowsBothWays) {
  serve();
  Client c;
  shake(c);
  c.write(kGet);
  send(c);
  EXPECT_EQ(upper_.plain, kGet);
  std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  uv_buf_t b = uv_buf_init(answer.data(), static_cast<unsigned>(answer.size()));
  EXPECT_EQ(tls_->try_write(&b, 1, false), static_cast<int>(answer.size()));
  c.give(from_server());
  EXPECT_EQ(c.read(), answer);
  EXPECT_TRUE(upper_.errors.empty());
}

// The client's Finished and its request in one read: the request is
// handed up in that read, and the tickets the handshake made leave with
// its answer, in one write.
TEST_F(TlsTransportTest, ARequestWithTheFinishedIsAnsweredWithTheTicketsInOneWrite) {
  serve();
  Client c;
  c.step();
  send(c);  // ClientHello
  c.give(from_server());
  c.step();  // the client's Finished waits to be sent
  ASSERT_TRUE(c.done());
  ASSERT_EQ(handshakes(), 0u);
  upper_.answer_via = tls_.get();
  upper_.answer = "an answer";
  c.write(kGet);
  size_t writes = lower_.lasts.size();
  send(c);
  EXPECT_EQ(stats_.tls_full.get(), 1u);
  EXPECT_EQ(upper_.plain, kGet);
  EXPECT_EQ(upper_.answered, static_cast<int>(upper_.answer.size()));
  EXPECT_EQ(lower_.lasts.size(), writes + 1);
  c.give(from_server());
  EXPECT_EQ(c.read(), "an answer");
  EXPECT_NE(SSL_get_session(c.ssl()), nullptr);
}

TEST_F(TlsTransportTest, AClientHelloInPiecesIsWaitedFor) {
  serve();
  Client c;
  c.step();
  std::string hello = c.take();
  ASSERT_GT(hello.size(), 20u);
  lower_.deliver(hello.substr(0, 10));
  EXPECT_EQ(lower_.sent, "");  // nothing to say yet
  EXPECT_TRUE(upper_.errors.empty());
  lower_.deliver(hello.substr(10));
  EXPECT_NE(lower_.sent, "");
  shake(c);
  EXPECT_TRUE(c.done());
  EXPECT_EQ(stats_.tls_full.get(), 1u);
}

TEST_F(TlsTransportTest, PlainHttpIsMisdirectedAndAnsweredInClear) {
  serve();
  lower_.deliver(kGet);
  EXPECT_EQ(upper_.misdirected, 1);
  EXPECT_EQ(upper_.plain, "");
  EXPECT_EQ(stats_.tls_failed_plain_http.get(), 1u);
  lower_.deliver(kGet);  // ignored from now on
  lower_.report(UV_EOF);
  EXPECT_EQ(upper_.plain, "");
  EXPECT_TRUE(upper_.errors.empty());
  EXPECT_EQ(upper_.misdirected, 1);
  // The answer passes through: at once, and queued.
  std::string answer = "HTTP/1.1 400 Bad Request\r\n\r\n";
  uv_buf_t b = uv_buf_init(answer.data(), 10);
  EXPECT_EQ(tls_->try_write(&b, 1, false), 10);
  EXPECT_EQ(lower_.lasts, std::vector<bool>{false});
  uv_write_t req;
  uv_buf_t rest = uv_buf_init(answer.data() + 10, static_cast<unsigned>(answer.size() - 10));
  ASSERT_EQ(tls_->write(&req, &rest, 1), 0);
  EXPECT_TRUE(upper_.written.empty());
  lower_.complete_write();
  EXPECT_EQ(upper_.written, std::vector<int>{0});
  EXPECT_EQ(lower_.sent, answer);
  // As TCP: unread input is the lower's to say, and the FIN is plain.
  EXPECT_FALSE(tls_->unread_input());
  lower_.unread = true;
  EXPECT_TRUE(tls_->unread_input());
  EXPECT_EQ(tls_->shutdown(), 0);
  EXPECT_EQ(lower_.shutdowns, 1);
  tls_->close(false);
  EXPECT_EQ(lower_.sent, answer);
  EXPECT_EQ(stats_.tls_failed_client_left.get(), 0u);
  lower_.finish_close();
  EXPECT_EQ(upper_.closed, 1);
}

TEST_F(TlsTransportTest, APlainWriteTheLowerRefusesIsReturned) {
  serve();
  lower_.deliver(kGet);
  ASSERT_EQ(upper_.misdirected, 1);
  lower_.fail_write = UV_EPIPE;
  uv_write_t req;
  std::string answer = "HTTP/1.1 400 Bad Request\r\n\r\n";
  uv_buf_t b = uv_buf_init(answer.data(), static_cast<unsigned>(answer.size()));
  EXPECT_EQ(tls_->write(&req, &b, 1), UV_EPIPE);
  // Nothing is left in flight: a later write may be queued.
  lower_.fail_write = 0;
  ASSERT_EQ(tls_->write(&req, &b, 1), 0);
  lower_.complete_write();
  EXPECT_EQ(upper_.written, std::vector<int>{0});
  EXPECT_EQ(lower_.sent, answer);
}

TEST_F(TlsTransportTest, GarbageFailsTheHandshakeWithAnAlertAndEproto) {
  serve();
  lower_.deliver(std::string("\x16\x03\x01\x00\x05hello", 10));
  EXPECT_EQ(stats_.tls_failed_other.get(), 1u);
  EXPECT_EQ(handshakes(), 1u);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPROTO});
  EXPECT_GT(clear_alert(lower_.sent), 0);
  EXPECT_TRUE(lower_.ended_last()) << "the alert is the last thing sent";
  EXPECT_EQ(ERR_peek_error(), 0u);
  tls_->close(false);  // counted once
  EXPECT_EQ(handshakes(), 1u);
}

TEST_F(TlsTransportTest, ATls11ClientFailsOnTheVersion) {
  serve();
  Client c(TLS1_1_VERSION, "DEFAULT:@SECLEVEL=0");
  shake(c);
  EXPECT_FALSE(c.done());
  EXPECT_EQ(stats_.tls_failed_version.get(), 1u);
  EXPECT_EQ(clear_alert(lower_.sent), TLS1_AD_PROTOCOL_VERSION);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPROTO});
}

TEST_F(TlsTransportTest, AClientWithNoCipherInCommonFailsOnTheCipher) {
  serve();
  Client c(TLS1_2_VERSION, "AES128-SHA");
  shake(c);
  EXPECT_FALSE(c.done());
  EXPECT_EQ(stats_.tls_failed_cipher.get(), 1u);
  EXPECT_EQ(clear_alert(lower_.sent), SSL3_AD_HANDSHAKE_FAILURE);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPROTO});
}

TEST_F(TlsTransportTest, AServerHelloTheLowerRefusesIsAnError) {
  serve();
  Client c;
  c.step();
  lower_.fail_try = UV_EPIPE;
  send(c);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPIPE});
  EXPECT_EQ(handshakes(), 0u);
}

TEST_F(TlsTransportTest, TicketsTheLowerRefusesAreAnError) {
  serve();
  Client c;
  c.step();
  send(c);
  c.give(from_server());
  c.step();
  ASSERT_TRUE(c.done());
  lower_.fail_try = UV_ECONNRESET;
  send(c);  // the Finished: the handshake ends, its tickets cannot leave
  EXPECT_EQ(stats_.tls_full.get(), 1u);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_ECONNRESET});
}

TEST_F(TlsTransportTest, ACorruptRecordIsEprotoAfterThePlaintextBeforeIt) {
  serve();
  Client c;
  shake(c);
  ASSERT_TRUE(c.done());
  c.write("good");
  std::string good = c.take();
  c.write("bad");
  std::string bad = c.take();
  bad[bad.size() - 3] ^= 1;  // in the record's authentication tag
  lower_.deliver(good + bad);
  EXPECT_EQ(upper_.plain, "good");
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EPROTO});
  EXPECT_EQ(ERR_peek_error(), 0u);
  // The server said why (bad_record_mac), encrypted.
  c.give(from_server());
  int error = 0;
  EXPECT_EQ(c.read(&error), "");
  EXPECT_EQ(error, SSL_ERROR_SSL);
  // And writes nothing more.
  std::string more = "more";
  uv_buf_t b = uv_buf_init(more.data(), 4);
  EXPECT_EQ(tls_->try_write(&b, 1, false), UV_EPROTO);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(TlsTransportTest, CloseNotifyIsAnEofAfterThePlaintextBeforeIt) {
  serve();
  Client c;
  shake(c);
  c.write(kGet);
  SSL_shutdown(c.ssl());
  send(c);
  EXPECT_EQ(upper_.plain, kGet);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_EOF});
}

TEST_F(TlsTransportTest, NothingIsHandedUpAfterTheConnectionClosedOnPlaintext) {
  serve();
  Client c;
  shake(c);
  c.write(kGet);
  SSL_shutdown(c.ssl());
  upper_.close_on_read = tls_.get();
  std::string before = lower_.sent;
  send(c);
  EXPECT_EQ(upper_.plain, kGet);
  EXPECT_TRUE(upper_.errors.empty()) << "no EOF on a closed transport";
  EXPECT_TRUE(lower_.close_asked);
  // Its close said close_notify, as the last bytes.
  EXPECT_GT(lower_.sent.size(), before.size());
  EXPECT_TRUE(lower_.ended_last());
  c.give(from_server());
  int error = 0;
  c.read(&error);
  EXPECT_EQ(error, SSL_ERROR_ZERO_RETURN);
}

TEST_F(TlsTransportTest, LowerReadsOfNothingAndErrorsPassAsTheyAre) {
  serve();
  lower_.report(0);
  EXPECT_TRUE(upper_.errors.empty());
  lower_.report(UV_ECONNRESET);
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_ECONNRESET});
  tls_->close(true);
  lower_.report(UV_EOF);  // closed: nothing is handed up
  EXPECT_EQ(upper_.errors, std::vector<ssize_t>{UV_ECONNRESET});
}

}  // namespace
}  // namespace hello
