// What the HTTP/2 connection (http2/h2_connection.h) keeps of each open
// stream: its id, its state on each side, its windows and its request's
// checks. The session's stream (http2/h2_stream.h) is one, so a stream is
// one object from the pool whichever layer holds it.
#pragma once

#include <cstdint>

#include "http2/h2_request_check.h"

namespace hello {

struct H2Flow {
  uint32_t id = 0;
  int64_t send_window = 0;      // what we may send: the peer's window for it
  uint32_t recv_consumed = 0;   // DATA taken since our last WINDOW_UPDATE for it
  uint64_t data_in = 0;         // the request's content received (padding aside)
  H2RequestCheck check;         // its fields against RFC 9113's rules
  bool head_in = false;         // its request's head has been read
  bool end_in = false;          // the client has ended it (END_STREAM)
  bool end_out = false;         // we have ended it
  bool queued = false;          // the session's: in its queue of answers
  H2Flow* flow_prev = nullptr;  // the connection's open streams, newest first
  H2Flow* flow_next = nullptr;

  // Starts over for a new stream `stream_id` whose send window is `window`.
  void open(uint32_t stream_id, int64_t window) {
    id = stream_id;
    send_window = window;
    recv_consumed = 0;
    data_in = 0;
    check.begin();
    head_in = end_in = end_out = queued = false;
    flow_prev = flow_next = nullptr;
  }
};

}  // namespace hello
