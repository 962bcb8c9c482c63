#include "server/connection_context.h"

namespace hello {

namespace {

// Pooled writes and held input keep at most this much buffer capacity.
constexpr size_t kPooledCapacity = 64 * 1024;

// A few hundred pipelined responses per read fit without growing.
constexpr size_t kOutputCapacity = 256 * 1024;

}  // namespace

ConnectionContext::ConnectionContext(uv_loop_t* loop, TimerQueue& timers, Accounting& accounting,
                                     const Deadlines& deadlines, const ConnectionOwner& owner,
                                     uv_buf_t read_buffer)
    : loop_(loop),
      timers_(timers),
      accounting_(accounting),
      deadlines_(deadlines),
      owner_(owner),
      read_buffer_(read_buffer) {
  output_.reserve(kOutputCapacity);
}

Heart* ConnectionContext::acquire_heart(Protocol p) {
  return hearts_[static_cast<size_t>(p)].acquire([&] { return owner_.make_heart(owner_.data, p); });
}

HeldInput* ConnectionContext::acquire_held() {
  return helds_.acquire([] { return std::make_unique<HeldInput>(); });
}

void ConnectionContext::release_held(HeldInput* h) {
  h->bytes.clear();
  h->offset = 0;
  if (h->bytes.capacity() > kPooledCapacity) std::string().swap(h->bytes);
  helds_.release(h);
}

PendingWrite* ConnectionContext::acquire_write() {
  return writes_.acquire([] { return std::make_unique<PendingWrite>(); });
}

// A write that once queued a lot for a slow client gives the memory back
// before it waits in the pool.
void ConnectionContext::release_write(PendingWrite* w) {
  w->queued.clear();
  w->backlog.clear();
  w->ref = {};
  if (w->queued.capacity() > kPooledCapacity) std::string().swap(w->queued);
  if (w->backlog.capacity() > kPooledCapacity) std::string().swap(w->backlog);
  writes_.release(w);
}

Transport* ConnectionContext::make_transport(TcpTransport& tcp) {
  if (tls_ == nullptr) return &tcp;
  TlsTransport* tls = tlses_.acquire([this] { return std::make_unique<TlsTransport>(*tls_); });
  if (tls->wrap(tcp)) return tls;
  tlses_.release(tls);
  return nullptr;
}

// Anything but the socket itself is one of the TLS transports lent above.
void ConnectionContext::take_transport(Transport* t, const TcpTransport& tcp) {
  if (t != &tcp) tlses_.release(static_cast<TlsTransport*>(t));
}

BodyStream* ConnectionContext::acquire_stream() {
  BodyStream* s = streams_.acquire([] { return std::make_unique<BodyStream>(); });
  *s = {};
  return s;
}

}  // namespace hello
