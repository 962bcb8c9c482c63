// nghttp2 1.52's server session as hello-family ran it until issue 35
// (git a57d745:common/http2/h2_session.h), kept unchanged but for its namespace
// and includes as the reference of the differential test (tests/diff).
// An HTTP/2 server session over bytes (docs/http2.md): frames in, frames
// out, through nghttp2 1.52, whose memory is the worker's recycled blocks
// (base/recycled.h). Each stream is answered on its own (http2/h2_stream.h):
// at once when its request ends, with the persona's answer in HTTP/2 form
// (http2/h2_answer_fields.h), or later (a delay, a drip), while the others go on:
// streams never wait for each other. It knows nothing of sockets, as the
// HTTP/1 heart does not; what it waits for it says in Fed::wake_us.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string>

#include "base/pool.h"
#include "http/heart.h"
#include "http2/h2_answer_fields.h"
#include "observe/accounting.h"
#include "reference/h2_limits.h"
#include "reference/h2_stream.h"

namespace hello::reference {

// nghttp2's memory functions on the worker's recycled blocks
// (base/recycled.h), or null (plain malloc) in a sanitized build.
nghttp2_mem* h2_memory();

// nghttp2's read callback for a stream's body (h2_session.cc).
ssize_t h2_read_body(nghttp2_session* session, int32_t stream_id, uint8_t* buf, size_t length,
                     uint32_t* flags, nghttp2_data_source* source, void* user);

class H2Session {
 public:
  static constexpr uint32_t kMaxConcurrentStreams = 100;
  // One feed() or resume() appends about this much at most; the rest
  // follows from resume() (Fed::wake_us 0), once it is written.
  static constexpr size_t kMaxOutput = 256 * 1024;

  H2Session(const ResponseTable& table, const H2Setup& setup, Accounting& accounting);
  // A session of its own answers, defaults otherwise (the tests').
  H2Session(const ResponseTable& table, const H2Answers& answers, Accounting& accounting)
      : H2Session(table, H2Setup{&answers}, accounting) {}
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // The client's bytes in (its preface first); what the session sends
  // appended to `out`. next is `close` once the connection is to close
  // after `out`: a protocol error (GOAWAY sent), a timeout, or both sides
  // done. partial: some stream is live; wake_us: when to resume().
  Fed feed(const char* data, size_t len, std::string& out);
  // What has come due since: delayed answers, drips' pieces, the rest of
  // the output, timeouts.
  Fed resume(std::string& out);
  // The HTTP/1.1 request `u` switched to HTTP/2 (Upgrade: h2c): appends
  // the 101 head, then the session's SETTINGS and stream 1's answer.
  Fed upgraded(const Upgrade& u, std::string& out);
  // GOAWAY (NO_ERROR, the last stream seen) appended to `out`.
  void go_away(std::string& out);
  // Answers sent so far (RST_STREAMs for reset ones included).
  uint32_t answered() const { return answered_; }
  // True while some stream's request has begun and not ended.
  bool streams_open() const { return incomplete_ > 0; }
  // Live streams: a request begun, or an answer not all sent.
  uint32_t live() const { return live_count_; }

 private:
  friend struct H2Callbacks;

  // Streams (h2_session_answer.cc).
  void request_ended(H2Stream& s);
  void answer(H2Stream& s);
  void answer_made(H2Stream& s, const H2Answer& t, std::string_view body);
  void answer_shaped(H2Stream& s);
  void submit(H2Stream& s, bool with_body);
  void count(const H2Stream& s, uint64_t body_bytes, Answered::Shaping shaping);
  void start_drip(H2Stream& s, uint64_t drip_us);
  void refuse_body(H2Stream& s);
  int refuse_fields(H2Stream& s);
  void link(H2Stream& s);
  void unlink(H2Stream& s);
  void after_first_settings();
  // Timing (h2_session.cc).
  void wake_due(uint64_t now);
  Fed step(bool open);

  bool drain(std::string& out);
  H2Stream* stream(int32_t id) const;

  const ResponseTable& table_;
  H2Setup setup_;
  Accounting& accounting_;
  DecisionText decision_text_;  // of the last shaped answer, for the log
  H2Guard guard_;               // limits and floods (h2_limits.h)
  nghttp2_session* session_ = nullptr;
  Pool<H2Stream> own_streams_;
  Pool<H2Stream>* streams_;
  H2Stream* live_ = nullptr;
  uint32_t live_count_ = 0;
  uint32_t answered_ = 0;
  uint32_t incomplete_ = 0;   // streams whose request has not ended
  uint64_t progress_ns_ = 0;  // when body bytes last went out
  bool more_ = false;         // the last drain stopped at kMaxOutput
  Fed::Timeout timed_out_ = Fed::Timeout::none;
  H2Stream* upgraded_ = nullptr;  // Tomcat's way: stream 1 waits for the client's preface
  bool pinged_ = false;           // Tomcat's way: the PING after the first SETTINGS
};

}  // namespace hello::reference
