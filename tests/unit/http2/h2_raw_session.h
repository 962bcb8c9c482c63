// An H2Session fed raw frames (tests/support/h2_raw.h), for the
// conformance and limit tests: what a client sends, byte by byte, and the
// server's frames back.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "h2_raw.h"
#include "http2/h2_session.h"
#include "test_persona.h"

namespace hello::test {

class H2RawTest : public ::testing::Test {
 protected:
  H2RawTest() : table_(kTestPersona, {}), answers_(table_) {}

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
    return h2raw::frames(out);
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

  H2Setup limits_;  // the limits a test sets (answers filled in)
  ResponseTable table_;
  H2Answers answers_;
  WorkerStats stats_;
  Accounting sink_{stats_};
  std::unique_ptr<H2Session> session_;
  bool open_ = true;
};

}  // namespace hello::test
