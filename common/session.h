// The socket-free heart: request bytes in, response bytes out. It owns the
// llhttp parser of one connection, routes each complete request to a
// prebuilt response and decides whether the connection stays open. It knows
// nothing of libuv, so unit tests and the fuzzer drive it directly.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "access_log.h"
#include "counter.h"
#include "response_table.h"

namespace hello {

class Session {
 public:
  // Counts into `stats`; logs each response to `log` unless it is null.
  Session(const ResponseTable& table, WorkerStats& stats, AccessLog* log = nullptr);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts over for a new connection from `peer` (an address, for the log).
  void reset(std::string_view peer = {});
  // Answers nothing more: the connection is being closed by the server.
  void stop() { closing_ = true; }

  // Parses `len` bytes and appends every response they complete to `out`,
  // in order. Returns false once the connection must close after `out` has
  // been sent; from then on further bytes are ignored.
  bool feed(const char* data, size_t len, std::string& out);

  bool closing() const { return closing_; }
  // True while a request has started but not yet been answered.
  bool mid_request() const { return mid_request_; }

 private:
  friend struct SessionCallbacks;

  // Routes sit at the root of short paths; a longer path matches none.
  static constexpr size_t kMaxPath = 64;
  // The log shows at most this much of a request target.
  static constexpr size_t kMaxLoggedTarget = 256;

  int on_message_begin();
  int on_url(const char* at, size_t len);
  int on_header_field(const char* at, size_t len);
  int on_header_field_complete();
  int on_headers_complete();
  int on_message_complete();
  // `parsed`: the request line is known and goes into the log.
  void answer(const PreparedResponse& r, bool head_only, bool parsed);
  void fail(int status);

  const ResponseTable& table_;
  llhttp_t parser_;
  std::string* out_ = nullptr;  // valid during feed()
  WorkerStats& stats_;
  AccessLog* log_;
  std::string_view peer_;

  char path_[kMaxPath];
  uint16_t path_length_ = 0;
  bool path_done_ = false;  // a '?' or '#' ended the path
  bool path_too_long_ = false;
  char target_[kMaxLoggedTarget];  // the raw target, kept only for the log
  uint16_t target_length_ = 0;
  char field_[4];  // enough to recognise "Host"
  uint16_t field_length_ = 0;
  uint8_t hosts_ = 0;
  int error_status_ = 0;  // set by a callback that rejects the request
  bool closing_ = false;
  bool mid_request_ = false;
};

}  // namespace hello
