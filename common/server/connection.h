// One accepted connection: drives a Heart over a Transport. Reads go
// through the worker's shared buffer; the responses of one read leave in
// one write, and only what the transport did not take at once is copied
// and queued. It knows its ConnectionContext, never the worker.
// Connections are recycled by their owner, never freed per request.
//
// A connection's life is one Phase (docs/architecture.md draws it):
//
//   reading --> waiting --> reading        an answer waits on the worker's timer
//   reading | waiting --> streaming --> reading | ending
//                                          a body sent by reference, or dripped
//   reading --> writing --> reading        the client reads too slowly: reading pauses
//   reading | waiting --> ending --> lingering --> closing
//                                          last answer, then FIN, then the client's FIN
//   any phase --> closing                  the transport closes; the owner gets it back
//
// The connection never asks which protocol or transport it has: its
// context makes the transport (TCP, or TLS over it) and picks the protocol
// and its heart; whatever differs between hearts is in the heart's
// contract (http/heart.h).
//
// An idle connection holds little more than its transport: the parser
// state (a Heart, unless the heart is kept), a write the kernel did not
// take at once (PendingWrite) and input held behind a waiting answer
// (HeldInput) are borrowed from the context's pools while they are needed
// and given back as soon as they are not, as is the state of a body sent
// by reference (BodyStream).
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "base/timer_queue.h"
#include "http/heart.h"
#include "net/transport.h"
#include "observe/accounting.h"
#include "server/connection_context.h"
#include "server/protocol.h"

namespace hello {

class Connection final {
 public:
  using CloseReason = hello::CloseReason;

  enum class Phase : uint8_t {
    // Parsing requests as they arrive and answering them at once. Without
    // a request in progress the keep-alive (or first-request) deadline runs
    // on the worker's sweep; with one, the header deadline on the timer.
    reading,
    // An answer waits on the timer. Input is held, not parsed; no header
    // deadline runs.
    waiting,
    // The last answer's body goes out by reference to bytes the heart or
    // the table owns (a shaped `size`), all at once or piece by piece on
    // the timer (`drip`). Input is held, as while waiting; a client's EOF
    // waits for the body's end.
    streaming,
    // Output waits for a client that reads too slowly: reading pauses until
    // it drains (the send timeout runs on the sweep).
    writing,
    // The last answer is produced: once it is written, FIN or close.
    ending,
    // FIN sent; the sweep closes the connection if the client's does not come.
    lingering,
    // uv_close called; the worker gets the connection back in on_close.
    closing,
  };

  explicit Connection(ConnectionContext& ctx);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Accepts the pending connection of `server` and starts serving it in
  // `protocol`, over the transport the context makes for it. On failure
  // the connection closes itself and goes back to its owner.
  void accept(uv_stream_t* server, Protocol protocol);
  // The same for a socket accepted outside libuv (at shutdown).
  void adopt(uv_os_sock_t fd, Protocol protocol);
  // Serves a connection already made over `transport`, which outlives it.
  void start(Transport& transport, Protocol protocol);
  // Reads the request of a connection accepted once its first bytes came
  // (TCP_DEFER_ACCEPT) now instead of a loop turn later.
  void read_now();
  // Closes the transport; the owner gets the connection back once it has closed.
  // `why` counts the close unless a reason was decided before.
  void close(CloseReason why = CloseReason::none);
  // Graceful stop: answer what the client has sent (waiting answers
  // included), then close once the connection has been idle for a moment
  // (see check_drain()).
  void drain();
  // The worker's once-a-second sweep: the keep-alive and first-request
  // deadlines, the send timeout and the end of the wait after our FIN.
  void check_deadlines(uint64_t now_ms);
  // While draining, called every few tens of milliseconds: a connection
  // that read nothing since the last call and owes nothing is closed.
  void check_drain(uint64_t now_ms);

  Phase phase() const { return phase_; }

  // The worker's intrusive list of live connections.
  Connection* prev = nullptr;
  Connection* next = nullptr;

 private:
  friend struct ConnectionCallbacks;

  // After our last response and FIN, wait this long for the client's FIN so
  // it reads the answer instead of a reset, then close anyway. Checked by the
  // worker's once-a-second sweep, so the wait is 2 to 3 s.
  static constexpr uint64_t kLingerMs = 2000;
  // During shutdown the wait for the client's FIN is shorter: everything owed
  // has been sent, and the process should not outlive its clients' manners.
  static constexpr uint64_t kDrainLingerMs = 200;
  static constexpr uint64_t kNsPerMs = 1000000;

  bool writing() const { return pending_ != nullptr; }
  // Every phase change goes through here and is checked.
  void enter(Phase to);
  void open_tcp(int rc, Protocol protocol);
  void attach(Transport& transport, Protocol protocol);
  // Enters closing, stops the timer and closes the transport (`abort`: with a reset).
  void shut(bool abort);
  Heart& answering();
  void begin();
  // What the transport reports (through ConnectionCallbacks).
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void on_written(int status);
  void on_closed();
  void on_misdirected();
  void on_timer();
  void start_reading();
  void stop_reading();
  // Feeds input to the heart; `held`: the input is held_'s own.
  void consume(const char* data, size_t len, bool held);
  // Carries out what the heart decided (after feed(), resume() or
  // time_out()): one place for every outcome. `data` and `len` are the
  // input fed, whose unparsed rest is held when an answer waits.
  void after_feed(const Fed& fed, const char* data, size_t len, bool held, bool was_partial);
  // Fed::upgrade: the heart of the protocol the request switches to takes over.
  void switch_heart(const Fed& fed, const char* data, size_t len, bool held);
  // The waiting answer is due.
  void answer_waiting();
  // Sends the body fed.body after the output, keeping the unparsed input.
  void start_stream(const Fed& fed, const char* data, size_t len, bool held);
  // Sends what is due of the body, after `head` (answers before it) if
  // given, which is empty once handed over.
  void pump_stream(std::string* head);
  // The body is out: parsing goes on, or the connection ends.
  void finish_stream();
  // A drip's next piece is due.
  void drip();
  // Ends the connection with a TCP reset.
  void reset();
  // Keeps input that cannot be parsed yet.
  void hold(const char* data, size_t len);
  void release_held();
  void release_stream();
  void borrow_heart();
  void release_heart();
  void say_goodbye();
  // No request in progress: a heart lent per request is given back then; a
  // kept one has none live.
  bool between_requests() const { return heart_ == nullptr || !heart_->live(); }
  void end(bool clean);
  void send_output();
  void write(const std::string& out);
  static CloseReason failed_write(int status);
  int try_write(const std::string& out);
  void write_queued();
  void finish_if_done();
  bool unread_input();
  void start_header_timer();
  void wake_at(uint64_t wake_us);
  void wake_heart();
  // Records the service time of the `answered` requests whose answers
  // were just handed to the kernel; `pending` if a request remains.
  void note_service(uint32_t answered, bool pending);

  ConnectionContext& ctx_;
  Transport* transport_ = nullptr;   // made_, or one a test gives
  Heart* heart_ = nullptr;           // borrowed while a request is in progress or waits, or kept
  PendingWrite* pending_ = nullptr;  // borrowed while a write is in flight
  HeldInput* held_ = nullptr;        // borrowed while input waits behind an answer
  BodyStream* stream_ = nullptr;     // borrowed while streaming
  // reading: the header deadline of the request in progress; waiting: the
  // time of the answer.
  Timer timer_;
  // Loop time: reading without a request in progress, the keep-alive or
  // first-request deadline; lingering, the end of the wait for the client's FIN.
  uint64_t deadline_ = 0;
  Phase phase_ = Phase::closing;
  Protocol protocol_{};  // the context's word for which heart to borrow
  // Orthogonal facts: whether the client sent EOF, whether the worker is
  // stopping, and activity for the drain check.
  bool peer_done_ = false;
  bool first_read_ = false;  // no read consumed yet: the protocol may still change
  bool draining_ = false;
  bool read_since_check_ = false;
  // ending: the closing request ended exactly where the input did.
  bool clean_end_ = false;
  // Service time (docs/observability.md): when the bytes being consumed
  // were read, and when the first byte of the oldest request not yet
  // answered was (0: none).
  uint64_t read_ns_ = 0;
  uint64_t pending_since_ns_ = 0;
  uint32_t carried_answers_ = 0;                  // a waiting answer sent with the held input's
  CloseReason close_reason_ = CloseReason::none;  // the first reason decided wins
  void decide(CloseReason why) {
    if (close_reason_ == CloseReason::none) close_reason_ = why;
  }

  uint8_t peer_length_ = 0;
  uint16_t peer_port_ = 0;
  TcpTransport tcp_;
  Transport* made_ = nullptr;  // the context's transport for tcp_ (tcp_ or over it), until closed
  // The client's address, for the access log; allocated only with the log.
  std::unique_ptr<char[]> peer_;
};

}  // namespace hello
