// The access log: Common Log Format, one line per response. Each worker
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

#include "observe/counter.h"

namespace hello {

class LogWriter {
 public:
  // Buffers are this big; a worker flushes when the next line might not fit.
  static constexpr size_t kBufferSize = 64 * 1024;
  // At most this many buffers per worker (4 MiB): the bounded backlog.
  static constexpr size_t kMaxBuffers = 64;

  // Writes to `fd`, closing it at the end if `owns_fd`.
  LogWriter(int fd, bool owns_fd, int workers);
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

 private:
  struct Pending {
    int worker;
    std::string buf;
    uint64_t lost;  // lines of buf a failed write did not deliver
  };
  void run();

  int fd_;
  bool owns_fd_;
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

  // Formats the CLF timestamp of `now`; called once a second.
  void set_time(time_t now);
  // Appends one line; an empty `method` logs the request line as "-".
  // `version`: 10, 11 or 20 (HTTP/1.0, HTTP/1.1, HTTP/2.0, as nginx logs it).
  void append(std::string_view peer, std::string_view method, std::string_view target, int version,
              int status, size_t body_bytes);
  // Hands the current buffer to the writer if it holds anything.
  void flush();
  // The last flush: lines that find the backlog full are counted as dropped.
  void flush_final();

 private:
  LogWriter& writer_;
  int worker_;
  Counter& dropped_;
  std::string buf_;
  char time_[32];  // "[29/Nov/2026:21:42:08 +0000]"
  size_t time_length_ = 0;
};

}  // namespace hello
