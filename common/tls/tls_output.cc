// A TLS transport's output: plaintext encrypted into the worker's scratch
// buffer and sent at once; what the kernel does not take waits in a queue
// lent by the worker, in order, and only then is more plaintext encrypted.
#include <openssl/err.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "base/check.h"
#include "tls/tls_transport.h"

namespace hello {

namespace {

// A queue that grew for a slow client gives its memory back when it empties.
constexpr size_t kKeptCapacity = 64 * 1024;

size_t total(const uv_buf_t* bufs, unsigned n) {
  size_t sum = 0;
  for (unsigned i = 0; i < n; ++i) sum += bufs[i].len;
  return sum;
}

}  // namespace

size_t TlsTransport::encrypt(const uv_buf_t* bufs, unsigned n, size_t from, size_t limit) {
  size_t taken = 0, skipped = 0;
  for (unsigned i = 0; i < n && shared_.cipher_out.size() < limit; ++i) {
    size_t len = bufs[i].len;
    if (skipped + len <= from) {
      skipped += len;
      continue;
    }
    size_t at = from + taken - skipped;
    while (at < len && shared_.cipher_out.size() < limit) {
      size_t chunk = std::min(TlsShared::kRecord, len - at);
      size_t written = 0;
      if (SSL_write_ex(ssl_, bufs[i].base + at, chunk, &written) != 1) {
        ERR_clear_error();
        write_error_ = UV_EPROTO;
        return taken;
      }
      at += written;
      taken += written;
    }
    skipped += len;
  }
  return taken;
}

int TlsTransport::flush(bool last) {
  std::string& out = shared_.cipher_out;
  if (out.empty()) return 0;
  if (flying_) {
    q_->backlog.append(out);
    out.clear();
    return 0;
  }
  uv_buf_t buf = uv_buf_init(out.data(), static_cast<unsigned>(out.size()));
  int n = lower_->try_write(&buf, 1, last);
  if (n == UV_EAGAIN) n = 0;
  if (n < 0) {
    out.clear();
    return n;
  }
  if (static_cast<size_t>(n) == out.size()) {
    out.clear();
    return 0;
  }
  queue().flight.assign(out, static_cast<size_t>(n));
  out.clear();
  return send_queued();
}

int TlsTransport::send_queued() {
  uv_buf_t buf = uv_buf_init(q_->flight.data(), static_cast<unsigned>(q_->flight.size()));
  flying_ = true;
  int rc = lower_->write(&q_->req, &buf, 1);
  if (rc != 0) flying_ = false;
  return rc;
}

// Encrypts and sends the plaintext of `bufs` from `from` on, while the
// kernel takes it: the new offset, or a negative libuv error.
int64_t TlsTransport::send_plain(const uv_buf_t* bufs, unsigned n, size_t from, bool last) {
  size_t all = total(bufs, n);
  while (from < all && !flying_) {
    from += encrypt(bufs, n, from, TlsShared::kFlushAt);
    if (write_error_ != 0) return write_error_;
    // Nothing follows the last answer but the close: its close_notify
    // goes in the same write, and shutdown() has only the FIN to send.
    if (last && from == all) {
      SSL_shutdown(ssl_);
      ERR_clear_error();
    }
    if (int rc = flush(last && from == all); rc < 0) return rc;
  }
  return static_cast<int64_t>(from);
}

int TlsTransport::try_write(const uv_buf_t* bufs, unsigned n, bool last) {
  if (state_ == State::plain) return lower_->try_write(bufs, n, last);
  if (state_ != State::open) return UV_EPIPE;
  if (write_error_ != 0) return write_error_;
  if (flying_) return UV_EAGAIN;
  return static_cast<int>(send_plain(bufs, n, 0, last));
}

int TlsTransport::write(uv_write_t* req, const uv_buf_t* bufs, unsigned n) {
  HELLO_CHECK((q_ == nullptr || q_->upper == nullptr) && n <= 2);
  if (state_ == State::plain) {
    queue().upper = req;
    flying_ = true;
    int rc = lower_->write(&q_->req, bufs, n);
    if (rc != 0) {
      flying_ = false;
      q_->upper = nullptr;
      return_queue();
    }
    return rc;
  }
  if (state_ != State::open) return UV_EPIPE;
  if (write_error_ != 0) return write_error_;
  TlsQueue& q = queue();
  q.upper = req;
  std::copy(bufs, bufs + n, q.plain);
  q.plain_n = n;
  q.plain_done = 0;
  int rc = pump();
  if (rc != 0 && q_ != nullptr) {
    q_->upper = nullptr;
    return_queue();
  }
  return rc;
}

// Encrypts and sends the queued plaintext while the kernel takes it; once
// all of it is out, the connection hears that its write completed.
int TlsTransport::pump() {
  int64_t done = send_plain(q_->plain, q_->plain_n, q_->plain_done, false);
  if (done < 0) return static_cast<int>(done);
  q_->plain_done = static_cast<size_t>(done);
  if (flying_ || q_->plain_done < total(q_->plain, q_->plain_n)) return 0;
  q_->plain_n = 0;
  q_->upper = nullptr;
  return_queue();
  report_written(0);
  return 0;
}

void TlsTransport::on_lower_written(int status) {
  flying_ = false;
  q_->flight.clear();
  if (state_ == State::closed || status < 0) {
    if (status < 0 && write_error_ == 0) write_error_ = status;
    if (q_->upper != nullptr) {
      q_->upper = nullptr;
      report_written(status < 0 ? status : UV_ECANCELED);
    }
    return;  // the queue goes back with the close
  }
  if (state_ == State::plain) {
    q_->upper = nullptr;
    return_queue();
    report_written(0);
    return;
  }
  if (!q_->backlog.empty()) {
    std::swap(q_->flight, q_->backlog);
    q_->backlog.clear();
    if (int rc = send_queued(); rc < 0) on_lower_written(rc);
    return;
  }
  if (q_->upper != nullptr) {
    if (int rc = pump(); rc < 0) {
      q_->upper = nullptr;
      report_written(rc);
    }
    if (flying_ || state_ == State::closed) return;
  }
  return_queue();
  if (shutdown_wanted_) {
    shutdown_wanted_ = false;
    lower_->shutdown();
  }
}

TlsQueue& TlsTransport::queue() {
  if (q_ == nullptr) q_ = shared_.queues.acquire([] { return std::make_unique<TlsQueue>(); });
  return *q_;
}

void TlsTransport::return_queue() {
  if (q_ != nullptr && !flying_ && q_->upper == nullptr && q_->flight.empty() &&
      q_->backlog.empty())
    release_queue();
}

// A queue that grew for a slow client gives its memory back.
void TlsTransport::release_queue() {
  if (q_ == nullptr) return;
  q_->flight.clear();
  q_->backlog.clear();
  if (q_->flight.capacity() > kKeptCapacity) std::string().swap(q_->flight);
  if (q_->backlog.capacity() > kKeptCapacity) std::string().swap(q_->backlog);
  q_->plain_n = 0;
  q_->upper = nullptr;
  shared_.queues.release(std::exchange(q_, nullptr));
}

}  // namespace hello
