#include "http1/session.h"

namespace hello {

Session::Session(const ResponseTable& table, Accounting& sink, const Limits& limits, Dice* dice)
    : Heart(kTraits), RequestReader(table, limits, sink.logs()), sink_(sink), dice_(dice) {
  HELLO_CHECK(dice != nullptr || !table.shaping());
  reset();
}

void Session::reset() {
  start(settings(shape_requests_));
  state_ = State::idle;
  upgrading_ = false;
  upgrade_ = {};
}

Fed Session::feed(const char* data, size_t len, std::string& out) {
  Fed fed;
  fed.consumed = len;
  // Closed or deferred, both rare: one test for the two.
  if (state_ >= State::deferred) [[unlikely]] {
    HELLO_CHECK(state_ == State::closed);  // a deferred answer is resume()d first
    fed.next = Fed::Next::close;
    return fed;
  }
  answered_ = 0;
  // Kept on this stack (and read back from it after the parser ran, rather
  // than held in registers across it).
  FeedContext feed{&out, data, data + len};
  llhttp_errno_t err = parse(feed);
  if (err != HPE_OK) {
    if (err == HPE_PAUSED) {
      // on_message_complete() paused: after a closing response, or before
      // an answer that waits. Parsing stopped where that request ended.
      // Or after an answer whose body the connection sends (stream_):
      // parsing goes on once it is sent.
      const char* at = llhttp_get_error_pos(&parser());
      take_stream(fed);
      if (upgrading_) [[unlikely]] {
        fed.upgrade = true;
        fed.consumed = static_cast<size_t>(at - feed.begin);
      } else if (state_ == State::deferred) {
        fed.next = Fed::Next::later;
        fed.consumed = static_cast<size_t>(at - feed.begin);
        fed.delay_us = deferred_.delay_us;
        deferred_.clean_end = at == feed.end;
      } else if (state_ == State::idle) {
        fed.consumed = static_cast<size_t>(at - feed.begin);
        llhttp_resume(&parser());
      } else {
        fed.clean_end = at == feed.end;
      }
    } else if (err == HPE_PAUSED_UPGRADE) {
      // CONNECT was answered; what follows would be a tunnel.
      if (state_ != State::closed) enter(State::closed);
    } else {
      int status = request_.error_status;
      if (status == 0) {
        // llhttp also says "invalid version" when a valid HTTP/1.x is not
        // followed by CRLF; only a version we do not speak earns 505.
        const llhttp_t& p = parser();
        bool http1x = p.http_major == 1 && p.http_minor <= 1;
        status = err == HPE_INVALID_VERSION && !http1x  ? 505
                 : err == HPE_INVALID_TRANSFER_ENCODING ? 501
                                                        : 400;
      }
      fail(*feed.out, status);
    }
  }
  fed.answered = answered_;
  if (state_ == State::closed && !fed.upgrade)
    fed.next = Fed::Next::close;
  else if (state_ == State::in_request)
    fed.partial = true;
  return fed;
}

// A shaped answer pauses the parser whenever it leaves the connection
// something to do, so only a paused feed() (or a resume()) looks here.
void Session::take_stream(Fed& fed) {
  fed.body = stream_.body;
  fed.drip_us = stream_.drip_us;
  fed.reset = stream_.reset;
  stream_ = {};
}

Fed Session::resume(std::string& out) {
  HELLO_CHECK(state_ == State::deferred);
  answered_ = 0;
  bool closes = answer_deferred(out);
  Fed fed;
  fed.answered = answered_;
  fed.consumed = 0;
  take_stream(fed);
  if (deferred_.keep_alive && !closes) {
    enter(State::idle);
    llhttp_resume(&parser());
  } else {
    enter(State::closed);
    fed.next = Fed::Next::close;
    fed.clean_end = deferred_.clean_end;
  }
  return fed;
}

void Session::time_out(std::string& out) {
  if (state_ == State::closed) return;
  fail(out, 408, false);
}

void Session::refuse(std::string& out) {
  if (state_ == State::closed) return;
  fail(out, 400);
}

// The answer waits: parsing pauses here, and resume() sends it.
int Session::defer(uint64_t delay_us, Variant v, bool head, bool keep_alive, bool shaped) {
  deferred_ = {delay_us, v, head, keep_alive, shaped};
  enter(State::deferred);
  return HPE_PAUSED;
}

int Session::after_answer(bool keep_alive) {
  if (keep_alive) {
    enter(State::idle);
    // Stop here while the connection sends a body by reference.
    return stream_.body.length > 0 ? HPE_PAUSED : 0;
  }
  enter(State::closed);
  // Stop here: nothing after a closing response is answered.
  return HPE_PAUSED;
}

}  // namespace hello
