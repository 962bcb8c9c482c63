// The access log: one line per response, in Common Log Format or as a JSON
// object (--access-log-format, docs/observability.md). Each worker
// fills its own buffer and hands whole buffers to one writer thread, so a
// slow disk or a full pipe never stalls request handling and lines from
// different workers never interleave. When a worker's backlog is full,
// further lines are dropped and counted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http/limits.h"  // kMaxLoggedTarget
#include "observe/counter.h"

namespace hello {

// The line's format (--access-log-format).
enum class LogFormat : uint8_t { clf, json };

// One answer, as the log shows it.
struct LogRecord {
  std::string_view peer;  // the client's numeric address; empty if unknown
  uint16_t port = 0;
  std::string_view method;  // empty: no request line ("-" in CLF, null in JSON)
  std::string_view target;  // at most kMaxLoggedTarget bytes of it are logged
  int version = 11;         // 10, 11 or 20 (HTTP/1.0, HTTP/1.1, HTTP/2.0, as nginx logs it)
  int status = 0;
  uint64_t body_bytes = 0;
  uint64_t service_ns = 0;    // JSON only
  uint64_t now_ns = 0;        // JSON only: CLOCK_MONOTONIC when the answer was made
  std::string_view decision;  // JSON only: X-Hello-Shape-Decision's value, if shaped
};

// The log shows at most kMaxLoggedTarget bytes of a request target
// (http/limits.h: a request keeps no more), and at most this much of a
// shaping decision (shaping's kDecisionText).
inline constexpr size_t kMaxLoggedDecision = 160;

class LogWriter {
 public:
  // Buffers are this big; a worker flushes when the next line might not fit.
  static constexpr size_t kBufferSize = 64 * 1024;
  // At most this many buffers per worker (4 MiB): the bounded backlog.
  static constexpr size_t kMaxBuffers = 64;

  // Writes lines of `format` to `fd`, closing it at the end if `owns_fd`.
  LogWriter(int fd, bool owns_fd, int workers, LogFormat format = LogFormat::clf);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Queues `buf` for writing and gives the worker an empty buffer in its
  // place. Returns false, leaving `buf` alone, if the worker's backlog is full.
  bool submit(int worker, std::string& buf);
  // Writes everything queued, then ends the writer thread. Returns false if
  // the writer is still blocked (a consumer that stopped reading) at
  // `deadline`; the thread then still uses this object, which must be kept.
  bool stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());
  // Lines of `worker` that could not be written (the reader went away), or
  // were still queued when stop() gave up.
  uint64_t lines_lost(int worker);
  // Buffers of `worker` handed over and not yet written and given back:
  // 0 once the consumer has read everything submitted.
  size_t backlog(int worker);
  LogFormat format() const { return format_; }

 private:
  struct Pending {
    int worker;
    std::string buf;
    uint64_t lost;  // lines of buf a failed write did not deliver
  };
  void run();

  int fd_;
  bool owns_fd_;
  LogFormat format_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> queue_;
  std::vector<std::vector<std::string>> spare_;  // per worker, emptied buffers
  std::vector<size_t> allocated_;                // per worker, buffers in existence
  std::vector<uint64_t> lost_;                   // per worker, lines not written
  std::condition_variable finished_wake_;
  bool stopping_ = false;
  bool finished_ = false;
  std::thread thread_;
};

// One worker's side of the log. Worker thread only.
class AccessLog {
 public:
  AccessLog(LogWriter& writer, int worker, Counter& dropped);

  // True for JSON lines, which want LogRecord's JSON-only fields.
  bool json() const { return format_ == LogFormat::json; }
  // Formats the CLF timestamp of `now`, and takes the wall clock's offset
  // from the monotonic one for JSON's; called once a second.
  void set_time(time_t now);
  // Appends one line.
  void append(const LogRecord& r) {
    if (format_ == LogFormat::json)
      append_json(r);
    else
      append_clf(r);
  }
  // Hands the current buffer to the writer if it holds anything.
  void flush();
  // The last flush: lines that find the backlog full are counted as dropped.
  void flush_final();

 private:
  // True if a line of up to `max_line` bytes fits, after a flush if need
  // be; otherwise the line is counted as dropped.
  bool room_for(size_t max_line);
  void append_clf(const LogRecord& r);
  void append_json(const LogRecord& r);
  // JSON's "time": the RFC 3339 text of `now_ns` (monotonic), in UTC to
  // the millisecond, into `out`; returns its end.
  char* put_json_time(uint64_t now_ns, char* out);

  LogWriter& writer_;
  int worker_;
  LogFormat format_;
  Counter& dropped_;
  std::string buf_;
  char time_[32];  // "[29/Nov/2026:21:42:08 +0000]"
  size_t time_length_ = 0;
  // JSON: the wall clock minus the monotonic one, in ns, taken once a
  // second; and the date and time of the second last formatted.
  int64_t wall_offset_ns_ = 0;
  int64_t json_second_ = -1;
  char json_date_[24];  // "2026-11-29T21:42:08."
};

}  // namespace hello
