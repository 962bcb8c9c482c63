// A Connection's output: the answers of one read in one write, only the
// rest the transport did not take queued, and what follows a queued write.
#include <string>
#include <utility>

#include "base/check.h"
#include "server/connection.h"

namespace hello {

// Sends what the heart appended to the worker's output buffer, which is
// empty again afterwards.
void Connection::send_output() {
  std::string& out = ctx_.output();
  if (!out.empty()) write(out);
  out.clear();
}

void Connection::write(const std::string& out) {
  ctx_.accounting().bytes_written(out.size());
  if (writing()) {
    pending_->backlog.append(out);
    return;
  }
  int n = try_write(out);
  if (n == static_cast<int>(out.size())) return;
  if (n < 0 && n != UV_EAGAIN) {
    close(failed_write(n));
    return;
  }
  if (n < 0) n = 0;
  pending_ = ctx_.acquire_write();
  pending_->queued.assign(out, static_cast<size_t>(n));
  write_queued();
}

// A write that fails because the client reset or left (EPIPE after its
// reset) closes the connection as the client's doing, as a reset seen by
// a read does; any other failure is an error.
Connection::CloseReason Connection::failed_write(int status) {
  return status == UV_ECONNRESET || status == UV_EPIPE ? CloseReason::client : CloseReason::error;
}

// Writes what the kernel takes now. The answer a connection ends with is
// its last bytes: the transport may hold them for the FIN that
// finish_if_done() sends next, so both leave in one segment.
int Connection::try_write(const std::string& out) {
  uv_buf_t buf = uv_buf_init(const_cast<char*>(out.data()), static_cast<unsigned>(out.size()));
  return transport_->try_write(&buf, 1, phase_ == Phase::ending);
}

void Connection::write_queued() {
  pending_->deadline = ctx_.now_ms() + ctx_.deadlines().send_ms;
  uv_buf_t bufs[2];
  unsigned n = 0;
  if (!pending_->queued.empty())
    bufs[n++] =
        uv_buf_init(pending_->queued.data(), static_cast<unsigned>(pending_->queued.size()));
  if (!pending_->ref.empty())
    bufs[n++] = uv_buf_init(const_cast<char*>(pending_->ref.data()),
                            static_cast<unsigned>(pending_->ref.size()));
  HELLO_CHECK(n > 0);
  int rc = transport_->write(&pending_->req, bufs, n);
  if (rc != 0) {
    ctx_.release_write(std::exchange(pending_, nullptr));
    close(failed_write(rc));
  }
}

void Connection::on_written(int status) {
  if (phase_ == Phase::closing || status < 0) {
    // Cancelled by close(), or the write failed.
    ctx_.release_write(std::exchange(pending_, nullptr));
    close(failed_write(status));
    return;
  }
  pending_->ref = {};
  if (!pending_->backlog.empty()) {
    std::swap(pending_->queued, pending_->backlog);
    pending_->backlog.clear();
    write_queued();
    return;
  }
  ctx_.release_write(std::exchange(pending_, nullptr));
  if (phase_ == Phase::streaming) {
    pump_stream(nullptr);
    return;
  }
  if (phase_ == Phase::writing) {
    enter(Phase::reading);
    start_reading();
    if (phase_ == Phase::closing) return;
    // The client's bytes waited in the socket while we did not read: its
    // deadlines and the drain check start over from now.
    read_since_check_ = true;
    if (heart_ != nullptr && heart_->keeps_time()) {
      wake_heart();  // the rest of its output, and its deadlines from now
      return;
    }
    if (heart_ != nullptr) start_header_timer();
  } else if (phase_ == Phase::reading && heart_ != nullptr && heart_->keeps_time()) {
    wake_heart();  // the rest of its output
    return;
  }
  // Idle from the moment the last answer was out, not from the last read.
  if (phase_ == Phase::reading && between_requests())
    deadline_ = ctx_.now_ms() + ctx_.deadlines().keep_alive_ms;
  finish_if_done();
}

}  // namespace hello
