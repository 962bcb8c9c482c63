// An HTTP/2 server session over bytes (docs/http2.md, in progress): frames
// in, frames out, through nghttp2 1.52, whose memory is the worker's
// recycled blocks (base/recycled.h). Each stream is answered as soon as
// its request has ended, independently of the others, with the persona's
// answer in HTTP/2 form (http2/h2_answers.h): streams never wait for each
// other. It knows nothing of sockets, as the HTTP/1 heart does not.
//
// Not yet: the connection does not use it (no --h2), and the answers that
// are made per request (a JSON echo, a delay, a shape) are refused with
// RST_STREAM REFUSED_STREAM.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/pool.h"
#include "http2/h2_answers.h"
#include "observe/accounting.h"

namespace hello {

struct H2Stream {
  int method = 0;  // kGet, kHead, or another llhttp method number (0: unknown)
  std::string path;
  const H2Answer* answer = nullptr;
  size_t sent = 0;        // body bytes sent
  bool complete = false;  // the request has ended
};

class H2Session {
 public:
  static constexpr uint32_t kMaxConcurrentStreams = 100;

  H2Session(const ResponseTable& table, const H2Answers& answers, Accounting& accounting);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // The client's bytes in (its preface first); what the session sends
  // appended to `out`. False once the connection is to close after `out`:
  // a protocol error (GOAWAY sent) or both sides done.
  bool feed(const char* data, size_t len, std::string& out);
  // GOAWAY (NO_ERROR, the last stream seen) appended to `out`.
  void go_away(std::string& out);
  // Answers sent so far (RST_STREAMs for refused ones included).
  uint32_t answered() const { return answered_; }
  // True while some stream's request has begun and not ended.
  bool streams_open() const { return incomplete_ > 0; }

 private:
  friend struct H2Callbacks;

  void answer(int32_t stream_id, H2Stream& s);
  bool drain(std::string& out);

  const ResponseTable& table_;
  const H2Answers& answers_;
  Accounting& accounting_;
  nghttp2_session* session_ = nullptr;
  Pool<H2Stream> streams_;
  uint32_t answered_ = 0;
  uint32_t incomplete_ = 0;  // streams whose request has not ended
};

}  // namespace hello
