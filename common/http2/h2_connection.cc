// The frames in: the preface, each frame's header and its rules, header
// blocks and DATA. The control frames' work is in h2_connection_control.cc;
// what the server sends of its own (responses, GOAWAY) and how streams
// close in h2_connection_output.cc.
#include "http2/h2_connection.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace hello {

using namespace h2;

H2Connection::H2Connection(H2Events& events, const H2Setup& setup, Accounting& accounting)
    : events_(events), setup_(setup), accounting_(accounting), guard_(setup, accounting) {
  nghttp2_mem* memory = setup.memory != nullptr ? setup.memory : h2_memory();
  HELLO_CHECK(nghttp2_hd_inflate_new2(&inflater_, memory) == 0);
}

H2Connection::~H2Connection() {
  nghttp2_hd_inflate_del(inflater_);
}

void H2Connection::start(std::string& out) {
  uint8_t payload[12];
  size_t n = guard_.settings_payload(payload);
  append_frame(out, kSettings, 0, 0, payload, n);
  ++settings_out_;
  settings_queued_ = true;
}

void H2Connection::feed(const char* data, size_t len, std::string& out) {
  out_ = &out;
  read_start_ = out.size();
  acks_this_read_ = 0;
  reset_this_read_ = 0;
  const auto* p = reinterpret_cast<const uint8_t*>(data);
  while (len > 0 && !failed_) {
    size_t take = 0;
    switch (read_) {
      case Read::preface:
        take = std::min(len, kPrefaceLength - have_);
        if (memcmp(p, kPreface + have_, take) != 0) {
          fail(kProtocolError);  // RFC 9113 section 3.4
          break;
        }
        have_ += take;
        if (have_ == kPrefaceLength) {
          have_ = 0;
          read_ = Read::head;
        }
        break;
      case Read::head:
        take = std::min(len, kFrameHead - have_);
        memcpy(head_ + have_, p, take);
        have_ += take;
        if (have_ == kFrameHead) {
          have_ = 0;
          if (begin_frame()) settle();
        }
        break;
      case Read::prefix:
        take = std::min(len, prefix_ - have_);
        memcpy(keep_ + have_, p, take);
        have_ += take;
        // Padding past the frame is an error as soon as its length is in,
        // as nghttp2 found it (RFC 9113 sections 6.1 and 6.2).
        if ((type_ == kHeaders || type_ == kData) && (flags_ & kPadded) != 0 &&
            keep_[0] > length_ - prefix_) {
          fail(kProtocolError);
          break;
        }
        settle();
        break;
      case Read::payload:
        take = std::min(len, left_);
        left_ -= take;
        payload(p, take);
        settle();
        break;
      case Read::padding:
        take = std::min(len, pad_);
        pad_ -= take;
        settle();
        break;
      case Read::done:
        take = len;
        break;
    }
    p += take;
    len -= take;
  }
  settings_queued_ = false;
  out_ = nullptr;
}

// Moves on past each part of the frame that has come whole.
void H2Connection::settle() {
  while (!failed_) {
    if (read_ == Read::prefix && have_ == prefix_) {
      have_ = 0;
      read_ = Read::payload;
      if (!prefix_done()) return;
    } else if (read_ == Read::payload && left_ == 0) {
      read_ = Read::padding;
      if (type_ == kHeaders || type_ == kContinuation) block_piece_done();
    } else if (read_ == Read::padding && pad_ == 0) {
      read_ = Read::head;
      frame_done();
      return;
    } else {
      return;
    }
  }
}

// A frame's header: its length, type and stream against the rules, and
// the budgets. False once the connection has failed.
bool H2Connection::begin_frame() {
  length_ = read24(head_);
  type_ = head_[3];
  flags_ = head_[4];
  stream_ = read32(head_ + 5) & 0x7fffffff;
  prefix_ = pad_ = 0;
  left_ = length_;
  frame_flow_ = nullptr;
  read_ = Read::prefix;
  if (length_ > kMaxFrame) return fail(kFrameSizeError), false;
  // The preface's own SETTINGS comes first (RFC 9113 section 3.4).
  if (!settings_in_ && (type_ != kSettings || (flags_ & kAck) != 0))
    return fail(kProtocolError), false;
  settings_in_ = true;
  // A header block is one piece: nothing but its CONTINUATIONs within it.
  if (block_ != Block::none && (type_ != kContinuation || stream_ != block_stream_))
    return fail(kProtocolError), false;
  // Here what the header alone shows: lengths, budgets, DATA's stream;
  // the rest once the frame's first bytes are in (prefix_done()), where
  // nghttp2 checked it too.
  bool ack = (flags_ & kAck) != 0;
  switch (type_) {
    case kData:
      return begin_data();
    case kHeaders:
      prefix_ = ((flags_ & kPadded) != 0 ? 1 : 0) + ((flags_ & kPriorityFlag) != 0 ? 5 : 0);
      if (length_ < prefix_) return fail(kFrameSizeError), false;
      left_ -= prefix_;
      return true;
    case kPriority:
      if (!guard_.spend(H2Guard::priority)) return flooded(guard_.flood()), false;
      if (length_ != 5) return fail(kFrameSizeError), false;
      break;
    case kRstStream:
      accounting_.h2_rst_stream(false);
      if (length_ != 4) return fail(kFrameSizeError), false;
      break;
    case kSettings:
      if (!ack && !guard_.spend(H2Guard::settings)) return flooded(guard_.flood()), false;
      if (ack && length_ != 0) return fail(kFrameSizeError), false;
      if (length_ % 6 != 0) return fail(kFrameSizeError), false;
      if (length_ > kKeep) return flooded(H2Flood::settings), false;
      break;
    case kPushPromise:  // refused once its promised stream is read
      prefix_ = ((flags_ & kPadded) != 0 ? 1 : 0) + 4;
      if (length_ < prefix_) return fail(kFrameSizeError), false;
      left_ -= prefix_;
      return true;
    case kPing:
      if (!ack && !guard_.spend(H2Guard::ping)) return flooded(guard_.flood()), false;
      if (length_ != 8) return fail(kFrameSizeError), false;
      break;
    case kGoaway:
      accounting_.h2_goaway(false);
      if (length_ < 8) return fail(kFrameSizeError), false;
      break;
    case kWindowUpdate:
      if (length_ != 4) return fail(kFrameSizeError), false;
      break;
    case kContinuation:
      if (block_ == Block::none) return fail(kProtocolError), false;
      if (++continuations_ > H2Defences::kMaxContinuations)
        return flooded(H2Flood::continuation), false;
      frame_flow_ = block_flow_;
      return true;
    default:  // unknown: skipped (RFC 9113 section 5.5)
      return true;
  }
  // A control frame: its payload kept (a GOAWAY's debug data skipped).
  prefix_ = type_ == kGoaway ? 8 : length_;
  left_ = length_ - prefix_;
  return true;
}

bool H2Connection::begin_data() {
  if (stream_ == 0) return fail(kProtocolError), false;
  if ((flags_ & kPadded) != 0) {
    if (length_ < 1) return fail(kFrameSizeError), false;
    prefix_ = 1;
    left_ -= 1;
  }
  // The connection's window counts the whole frame, padding and all.
  if (length_ > kInitialWindow - recv_consumed_) return fail(kFlowControlError), false;
  H2Flow* s = find(stream_);
  if (s == nullptr) {
    if (idle(stream_)) return fail(kProtocolError), false;
    if (closed_state(stream_) == 0) return fail(kStreamClosed), false;
    // Reset by us before the client ended it, or long forgotten: ignored,
    // padding unread.
    consume(nullptr, length_);
    prefix_ = 0;
    left_ = length_;
    return true;
  }
  // Half-closed (remote): a stream error by RFC 9113 section 5.1, which
  // nghttp2 made a connection error (section 5.4.1 allows it).
  if (s->end_in || !s->head_in) return fail(kStreamClosed), false;
  if (length_ > kInitialWindow - s->recv_consumed) {
    consume(nullptr, length_);
    stream_error(*s, kFlowControlError);
    return !failed_;
  }
  if (length_ == 0 && (flags_ & kEndStream) == 0 && !guard_.spend(H2Guard::empty_data))
    return flooded(guard_.flood()), false;
  consume(s, length_);
  frame_flow_ = s;
  return !failed_;
}

// A HEADERS: a new request stream, a request's trailers, or a block only
// decoded (HPACK's table must follow every block).
bool H2Connection::begin_headers() {
  if (stream_ == 0 || (stream_ & 1) == 0) return fail(kProtocolError), false;
  guard_.begin_block();
  continuations_ = 0;
  block_stream_ = stream_;
  block_end_stream_ = (flags_ & kEndStream) != 0;
  block_ = Block::ignored;
  block_flow_ = nullptr;
  H2Flow* known = stream_ <= last_in_ ? find(stream_) : nullptr;  // a new one is in no list
  if (H2Flow* s = known; s != nullptr) {
    if (s->end_in) return fail(kStreamClosed), false;  // half-closed (remote)
    block_flow_ = s;
    block_ = Block::trailers;
    return true;
  }
  if (stream_ <= last_in_) {
    int closed = closed_state(stream_);
    // Below the last on a stream never opened (or long closed): RFC 9113
    // section 5.1.1's connection error. The last itself, refused before
    // it opened, is only decoded, as nghttp2 did.
    if (closed < 0 && stream_ < last_in_) return fail(kProtocolError), false;
    if (closed == 0) return fail(kStreamClosed), false;
    // On a stream we reset before the client ended it: decoded and
    // ignored, within a budget.
    if (!guard_.spend(H2Guard::refused_headers)) return flooded(guard_.flood()), false;
    return true;
  }
  last_in_ = stream_;
  if (goaway_out_) return true;  // a stream after our GOAWAY: ignored
  // Streams we reset in this read count until the read is done, as they
  // did in nghttp2 until its RST_STREAM was sent.
  if (open_count_ + reset_this_read_ >= setup_.max_concurrent_streams) {
    // Over our SETTINGS_MAX_CONCURRENT_STREAMS: refused while the client
    // may not know it yet, a connection error once it has acknowledged it.
    if (ours_acked_) return fail(kProtocolError), false;
    refuse(stream_, H2Limit::streams);
    return true;
  }
  H2Flow& s = events_.opened(stream_);
  s.open(stream_, peer_initial_window_);
  link(s);
  block_flow_ = &s;
  block_ = Block::request;
  return true;
}

// The bytes kept before the payload: padding's length, a priority, or a
// whole control frame.
bool H2Connection::prefix_done() {
  bool is_ack = (flags_ & kAck) != 0;
  switch (type_) {
    case kData:
    case kHeaders: {
      if (prefix_ == 0) return type_ == kData || begin_headers();  // nothing before the payload
      size_t at = 0;
      if ((flags_ & kPadded) != 0) pad_ = keep_[at++];
      if (pad_ > left_) return fail(kProtocolError), false;  // padding past the frame
      left_ -= pad_;
      if (type_ == kData) return true;
      // A stream may not depend on itself (RFC 9113 section 5.3.1): a
      // connection error for a request's HEADERS; trailers' priority is
      // not looked at, as nghttp2 did not.
      bool self = (flags_ & kPriorityFlag) != 0 && (read32(keep_ + at) & 0x7fffffff) == stream_;
      if (self && stream_ > last_in_) return fail(kProtocolError), false;
      return begin_headers();
    }
    case kPriority:
      if (stream_ == 0 || (read32(keep_) & 0x7fffffff) == stream_)
        return fail(kProtocolError), false;
      return true;
    case kRstStream:
      if (stream_ == 0 || idle(stream_)) return fail(kProtocolError), false;
      return rst_stream();
    case kSettings:
      if (stream_ != 0) return fail(kProtocolError), false;
      if (!is_ack) return settings();
      if (settings_out_ == 0) return fail(kProtocolError), false;  // none of ours to ACK
      --settings_out_;
      ours_acked_ = true;
      return true;
    case kPing:
      if (stream_ != 0) return fail(kProtocolError), false;
      // Not when the connection is over (nghttp2's "closing": a GOAWAY
      // either way, no stream open and nothing else to send).
      if (!is_ack && !closing()) ack(kPing, keep_, 8);
      return !failed_;
    case kGoaway:
      if (stream_ != 0) return fail(kProtocolError), false;
      return goaway();
    case kWindowUpdate:
      return window_update();
    case kPushPromise:  // a client may not push (RFC 9113 section 8.4)
      return fail(kProtocolError), false;
    default:
      return true;
  }
}

void H2Connection::payload(const uint8_t* p, size_t n) {
  if (n == 0) return;
  if (type_ == kHeaders || type_ == kContinuation) {
    inflate(p, n, false);
    return;
  }
  if (type_ != kData || frame_flow_ == nullptr) return;
  H2Flow& s = *frame_flow_;
  s.data_in += n;
  int64_t declared = s.check.content_length();
  if (declared >= 0 && s.data_in > static_cast<uint64_t>(declared)) {
    stream_error(s, kProtocolError);  // more than its Content-Length (8.1.1)
    return;
  }
  events_.data(s, reinterpret_cast<const char*>(p), n);
}

// A HEADERS' or CONTINUATION's piece of a block is in, its padding yet to
// come: with END_HEADERS the block's decoding ends here (a block cut short
// is a COMPRESSION_ERROR now), as nghttp2's did.
void H2Connection::block_piece_done() {
  if ((flags_ & kEndHeaders) != 0) inflate(nullptr, 0, true);
}

// The frame is whole, padding and all: a DATA's END_STREAM, a block's end.
void H2Connection::frame_done() {
  if (type_ == kData && frame_flow_ != nullptr && (flags_ & kEndStream) != 0)
    end_request(*frame_flow_);
  if ((type_ != kHeaders && type_ != kContinuation) || (flags_ & kEndHeaders) == 0) return;
  Block b = std::exchange(block_, Block::none);
  H2Flow* s = std::exchange(block_flow_, nullptr);
  if (b == Block::request) {
    if (!s->check.head_done()) {
      s->end_in = block_end_stream_;  // the client has ended it all the same
      return stream_error(*s, kProtocolError);
    }
    s->head_in = true;
    events_.head(*s);
    if (block_end_stream_) end_request(*s);
  } else if (b == Block::trailers) {
    // Trailers end the stream (RFC 9113 section 8.1).
    if (!block_end_stream_) return stream_error(*s, kProtocolError);
    end_request(*s);
  }
}

// END_STREAM: the request is whole, if its content is what it declared.
void H2Connection::end_request(H2Flow& s) {
  s.end_in = true;
  int64_t declared = s.check.content_length();
  if (declared >= 0 && s.data_in != static_cast<uint64_t>(declared))
    return stream_error(s, kProtocolError);
  events_.ended(s);
}

// A piece of a header block to nghttp2's inflater; each field it yields
// to field().
void H2Connection::inflate(const uint8_t* p, size_t n, bool final) {
  while (!failed_) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, p, n, final ? 1 : 0);
    if (used < 0) {
      // A block that does not decode breaks HPACK's state for good
      // (RFC 9113 section 4.3); short of memory, the same end.
      fail(used == NGHTTP2_ERR_NOMEM ? kInternalError : kCompressionError);
      return;
    }
    p += used;
    n -= static_cast<size_t>(used);
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0)
      field({reinterpret_cast<const char*>(nv.name), nv.namelen},
            {reinterpret_cast<const char*>(nv.value), nv.valuelen});
    if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
      nghttp2_hd_inflate_end_headers(inflater_);
      return;
    }
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && n == 0) return;
  }
}

void H2Connection::field(std::string_view name, std::string_view value) {
  if (block_ != Block::request && block_ != Block::trailers) return;
  H2Flow& s = *block_flow_;
  bool trailers = block_ == Block::trailers;
  if (!s.check.field(name, value, trailers)) return stream_error(s, kProtocolError);
  if (!guard_.field_fits(name.size(), value.size())) {
    // Over the header list: the stream refused, the rest of the block
    // decoded and not looked at, within a budget of such blocks.
    stream_error(s, kRefusedStream);
    guard_.over_limit(H2Limit::header_list);
    if (!guard_.spend(H2Guard::refused_headers)) flooded(guard_.flood());
    return;
  }
  if (!trailers) events_.field(s, name, value);
}

}  // namespace hello
