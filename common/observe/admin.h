// The admin port (--admin HOST:PORT, docs/observability.md): /metrics,
// /healthz, /readyz, /stats and POST /stats/reset, on a listener of its
// own in the main thread's control loop, so the persona's port keeps its
// bytes and the workers never serve it. Each request is parsed by llhttp
// under the same limits as the persona's (header bytes, header time), and
// each answer closes its connection: the admin port's clients are a
// scraper and a person with curl, not a load.
#pragma once

#include <uv.h>

#include <cstddef>
#include <string>

#include "observe/metrics_format.h"

namespace hello {

// What the routes answer with; the control loop implements it.
class AdminSource {
 public:
  virtual ~AdminSource() = default;
  // The /metrics exposition in `format` (the Accept header's choice).
  virtual std::string metrics(MetricsFormat format) = 0;
  virtual std::string stats() = 0;  // the --stats-json shape, since the last reset
  virtual void reset_stats() = 0;
  virtual bool ready() = 0;  // false once a graceful stop has begun
};

class AdminServer {
 public:
  // Open admin connections at once; beyond it new ones are closed.
  static constexpr size_t kMaxConnections = 32;

  AdminServer(uv_loop_t* loop, AdminSource& source, size_t max_header_bytes,
              uint64_t header_timeout_ms);
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Binds and listens. Returns 0 or a libuv error.
  int listen(const struct sockaddr* addr);
  // The port it listens on.
  int port() const;
  // Closes the listener and every connection (asynchronously, with the loop).
  void close();

 private:
  friend struct AdminCallbacks;
  struct Exchange;

  void on_connection(int status);
  void finish(Exchange* x);

  uv_loop_t* loop_;
  AdminSource& source_;
  size_t max_header_bytes_;
  uint64_t header_timeout_ms_;
  uv_tcp_t listener_;
  bool listening_ = false;
  size_t open_ = 0;
  Exchange* live_ = nullptr;  // open connections, to close them at the end
};

}  // namespace hello
