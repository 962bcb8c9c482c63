// An H2Session fed raw frames (tests/support/h2_raw.h), for the
// conformance and limit tests: what a client sends, byte by byte, and the
// server's frames back.
#pragma once

#include <gtest/gtest.h>

#include <nghttp2/nghttp2.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "h2_frames.h"
#include "h2_raw.h"
#include "http2/h2_session.h"
#include "test_persona.h"

namespace hello::test {

class H2RawTest : public ::testing::Test {
 protected:
  explicit H2RawTest(TableOptions options = {}) : table_(kTestPersona, options), answers_(table_) {
    nghttp2_hd_inflate_new(&inflater_);
  }
  ~H2RawTest() override { nghttp2_hd_inflate_del(inflater_); }

  H2Session& session() {
    if (!session_) {
      limits_.answers = &answers_;
      session_ = std::make_unique<H2Session>(table_, limits_, sink_);
    }
    return *session_;
  }
  // `bytes` to the session; its frames back. `open_` says whether it wants more.
  std::vector<h2raw::Frame> send(const std::string& bytes) {
    std::string out;
    open_ = session().feed(bytes.data(), bytes.size(), out).next != Fed::Next::close;
    std::vector<h2raw::Frame> fs = h2raw::frames(out);
    hear(fs);
    return fs;
  }
  // The value of field `name` in the server's HEADERS on `stream`, or "".
  std::string field(uint32_t stream, std::string_view name) {
    for (const auto& [n, v] : heard_[stream].fields)
      if (n == name) return v;
    return {};
  }
  // The preface, an empty SETTINGS and the ACK of the server's: its
  // SETTINGS (and ACK) back.
  std::vector<h2raw::Frame> start(bool ack = true) {
    std::string in(h2raw::kPreface);
    in += h2raw::settings();
    if (ack) in += h2raw::settings_ack();
    return send(in);
  }
  // Sends the frame `one` over and over, one read each, until the session
  // answers with GOAWAY; the 1-based count it took, or 0 after `limit`.
  int sends_until_goaway(const std::string& one, int limit) {
    for (int i = 1; i <= limit; ++i)
      if (h2raw::goaway_code(send(one)).has_value()) return i;
    return 0;
  }

  // What the server said on each stream, read from every send(): its
  // fields (every header block decoded in order, as HPACK needs) and DATA.
  struct Heard {
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;
  };
  void hear(const std::vector<h2raw::Frame>& fs) {
    for (const h2raw::Frame& f : fs) {
      if (f.type == h2raw::kData) heard_[f.stream].body += f.payload;
      if (f.type != h2raw::kHeaders && f.type != h2raw::kContinuation) continue;
      block_ += f.payload;  // the server sends neither padding nor priority
      if ((f.flags & h2raw::kEndHeaders) == 0) continue;
      auto& fields = heard_[f.stream].fields;
      ASSERT_TRUE(h2_inflate_block(inflater_, block_, [&](std::string n, std::string v) {
        fields.emplace_back(std::move(n), std::move(v));
      })) << "the server's header block does not decode";
      block_.clear();
    }
  }

  nghttp2_hd_inflater* inflater_ = nullptr;
  std::string block_;  // a header block until its END_HEADERS
  std::map<uint32_t, Heard> heard_;
  H2Setup limits_;  // the limits a test sets (answers filled in)
  ResponseTable table_;
  H2Answers answers_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  std::unique_ptr<H2Session> session_;
  bool open_ = true;
};

}  // namespace hello::test
