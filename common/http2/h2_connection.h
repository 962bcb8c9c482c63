// The server side of an HTTP/2 connection's frames (RFC 9113), written here
// (docs/http2.md#the-frame-layer): the preface and SETTINGS, every frame's
// length, flag and stream rules, the stream states and ids, header blocks
// over HEADERS and CONTINUATION (decoded by nghttp2's HPACK inflater, the
// one part of nghttp2 the server still runs), DATA, flow control on both
// sides, RST_STREAM, PING, GOAWAY; PRIORITY is read and ignored, a
// PUSH_PROMISE refused, an unknown frame skipped. It reads bytes as they
// come, split anywhere, without copying a frame: a header block goes to the
// inflater piece by piece and DATA to the session, and only a control
// frame's few bytes are kept. What it finds it tells the session
// (H2Events); what the session answers it frames (respond(), data_head()).
// It keeps the limits and budgets of docs/http2.md#limits-and-floods
// (http2/h2_limits.h) and counts through the worker's Accounting.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http2/h2_flow.h"
#include "http2/h2_frame.h"
#include "http2/h2_limits.h"
#include "http2/h2_stream.h"
#include "observe/accounting.h"

namespace hello {

// What a connection tells its session, in the order the frames came.
class H2Events {
 public:
  // A request's HEADERS opened stream `id`: the session's stream for it.
  virtual H2Flow& opened(uint32_t id) = 0;
  // A field of a request's head, valid (trailers are checked, not told).
  virtual void field(H2Flow& s, std::string_view name, std::string_view value) = 0;
  // The request's head is complete and valid.
  virtual void head(H2Flow& s) = 0;
  // Content of the request's body.
  virtual void data(H2Flow& s, const char* bytes, size_t n) = 0;
  // The request has ended (END_STREAM), valid to its end.
  virtual void ended(H2Flow& s) = 0;
  // The stream has closed (both sides ended, or reset by either): the
  // session lets it go; the connection no longer knows it.
  virtual void closed(H2Flow& s) = 0;

 protected:
  ~H2Events() = default;
};

class H2Connection {
 public:
  H2Connection(H2Events& events, const H2Setup& setup, Accounting& accounting);
  ~H2Connection();
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  // Our SETTINGS, the first frame we send.
  void start(std::string& out);
  // The client's bytes (its preface first); the frames they call for
  // (ACKs, WINDOW_UPDATE, RST_STREAM, GOAWAY) appended to `out`.
  void feed(const char* data, size_t len, std::string& out);
  // An upgrade (Upgrade: h2c): the client's HTTP2-Settings applied, its
  // request stream 1 (opened through H2Events), half-closed; null if they
  // hold what a SETTINGS frame may not.
  H2Flow* upgrade(std::string_view settings);
  // Whether HTTP2-Settings' payload holds only what a SETTINGS frame may.
  static bool settings_valid(std::string_view payload);

  // A response's header block on `s` (END_STREAM if `end`).
  void respond(H2Flow& s, std::string_view block, bool end, std::string& out);
  // How many DATA bytes `s` may send now: the windows' least, at most a frame.
  size_t sendable(const H2Flow& s) const;
  // A DATA frame's head for `n` bytes on `s`, whose payload the caller
  // appends next; then, if `end`, sent_end().
  void data_head(H2Flow& s, size_t n, bool end, std::string& out);
  // The DATA that ended `s` is out: it closes if the client has ended too.
  void sent_end(H2Flow& s);
  // RST_STREAM: `s` closes.
  void reset(H2Flow& s, uint32_t code, std::string& out);
  // GOAWAY with the last stream seen: NO_ERROR lets the streams open end;
  // any other code ends the connection now.
  void go_away(uint32_t code, std::string& out);
  // A PING of ours (Tomcat's).
  void ping(std::string& out);

  // A connection error has ended it (GOAWAY sent): nothing more is read.
  bool failed() const { return failed_; }
  // Whether it goes on: not failed, and streams open or no GOAWAY yet.
  bool open() const { return !failed_ && (open_ != nullptr || (!goaway_in_ && !goaway_out_)); }
  // Our ACK of the client's first SETTINGS is out.
  bool acked_theirs() const { return acked_theirs_; }
  uint32_t last_stream() const { return last_in_; }
  // Streams open (request begun, answer not all sent).
  uint32_t open_count() const { return open_count_; }

 private:
  enum class Read : uint8_t { preface, head, prefix, payload, padding, done };
  enum class Block : uint8_t { none, request, trailers, ignored };
  static constexpr size_t kKeep = H2Defences::kMaxSettingsEntries * 6;
  static constexpr size_t kRemembered = 32;
  // A stream we reset before the client ended it: its frames are ignored.
  static constexpr uint32_t kIgnored = 0x80000000u;

  // Reading (h2_connection.cc).
  void settle();
  bool begin_frame();
  bool begin_data();
  bool begin_headers();
  bool prefix_done();
  void payload(const uint8_t* p, size_t n);
  void frame_done();
  void block_piece_done();
  void end_request(H2Flow& s);
  void inflate(const uint8_t* p, size_t n, bool final);
  void field(std::string_view name, std::string_view value);
  bool rst_stream();
  struct Entry {
    uint16_t id;
    uint32_t value;
  };
  static size_t unique_settings(const uint8_t* p, size_t n, Entry* out);
  static uint32_t settings_error(const Entry* e, size_t n);
  bool goaway();
  bool apply_settings(const uint8_t* p, size_t n);
  bool settings();
  bool window_update();
  void consume(H2Flow* s, size_t n);
  void ack(uint8_t type, const uint8_t* payload, size_t n);
  // Errors and streams (h2_connection_output.cc).
  void fail(uint32_t code);
  void flooded(H2Flood flood);
  void refuse(uint32_t id, H2Limit limit);
  void stream_error(H2Flow& s, uint32_t code) { reset(s, code, *out_); }
  H2Flow* find(uint32_t id) const;
  // Never opened: a client's stream above the last, or any of ours (even:
  // we open none).
  bool idle(uint32_t id) const { return id > last_in_ || (id & 1) == 0; }
  // Over but for what is queued: a GOAWAY either way, no stream open, and
  // nothing else to send with this read.
  bool closing() const {
    return failed_ || ((goaway_in_ || goaway_out_) && open_ == nullptr &&
                       out_->size() == read_start_ && !settings_queued_);
  }
  void link(H2Flow& s);
  void close(H2Flow& s, bool ours);
  // -1: never seen or forgotten; 0: closed; 1: closed by our RST_STREAM
  // before the client ended it (its frames ignored).
  int closed_state(uint32_t id) const;

  H2Events& events_;
  const H2Setup& setup_;
  Accounting& accounting_;
  H2Guard guard_;
  nghttp2_hd_inflater* inflater_ = nullptr;
  std::string* out_ = nullptr;    // during feed()
  size_t read_start_ = 0;         // its size when feed() began
  bool settings_queued_ = false;  // our SETTINGS go out with this read's frames

  // The frame being read.
  Read read_ = Read::preface;
  uint8_t head_[h2::kFrameHead];
  uint8_t keep_[kKeep];  // a control frame's payload, a HEADERS' prefix
  size_t have_ = 0;      // of the preface, head_ or keep_
  uint32_t length_ = 0;
  uint8_t type_ = 0;
  uint8_t flags_ = 0;
  uint32_t stream_ = 0;
  size_t prefix_ = 0;             // bytes kept before the payload is streamed
  size_t left_ = 0;               // payload bytes still to come (padding aside)
  size_t pad_ = 0;                // padding after them
  H2Flow* frame_flow_ = nullptr;  // the stream a DATA frame feeds, if any

  // The header block under way.
  Block block_ = Block::none;
  uint32_t block_stream_ = 0;
  H2Flow* block_flow_ = nullptr;  // its stream, while it is heard
  bool block_end_stream_ = false;
  uint8_t continuations_ = 0;
  size_t header_bytes_ = 0;

  // Streams.
  H2Flow* open_ = nullptr;
  uint32_t open_count_ = 0;
  uint32_t last_in_ = 0;  // the highest stream id the client opened
  uint32_t remembered_[kRemembered] = {};
  uint8_t remember_at_ = 0;

  // Flow control: the peer's windows for us, our connection window's use.
  int64_t send_window_ = h2::kInitialWindow;
  int64_t peer_initial_window_ = h2::kInitialWindow;
  uint32_t recv_consumed_ = 0;

  // Rapid reset (CVE-2023-44487): a bucket of RST_STREAMs received.
  uint64_t resets_left_ = H2Defences::kResetBurst;
  uint64_t reset_second_ = 0;

  uint16_t acks_this_read_ = 0;
  // Streams we reset in the read under way: they count against the
  // streams limit to its end, unless the client resets them too.
  static constexpr size_t kResetsKept = 8;
  uint32_t reset_this_read_ = 0;
  uint32_t reset_ids_[kResetsKept] = {};
  uint8_t settings_out_ = 0;  // our SETTINGS not yet acknowledged
  bool settings_in_ = false;  // the client's first SETTINGS has come
  bool ours_acked_ = false;   // the client has acknowledged our first SETTINGS
  bool acked_theirs_ = false;
  bool signal_table_ = false;  // our next header block starts with a table size update
  bool goaway_in_ = false;
  uint32_t goaway_last_in_ = 0x7fffffff;  // the client's last GOAWAY's last stream
  bool goaway_out_ = false;
  bool failed_ = false;
};

}  // namespace hello
