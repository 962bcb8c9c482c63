// The HTTP/2 session as a connection's heart (docs/http2.md): the
// connection feeds it every read and sends what it appends, and keeps it
// for the whole connection (its streams and HPACK tables live in it),
// where an HTTP/1 heart is lent per request. Its streams are answered each
// on its own, so nothing is ever deferred as HTTP/1 defers (Fed::later):
// the session says when it wants resume() instead (Fed::wake_us), and
// keeps its own deadlines (the header and send timeouts, per stream).
#pragma once

#include <memory>

#include "http/heart.h"
#include "http2/h2_session.h"

namespace hello {

class H2Heart final : public Heart {
 public:
  // Kept for the whole connection, and keeping its streams' deadlines.
  static constexpr HeartTraits kTraits = {.kept = true, .keeps_time = true};

  H2Heart(const ResponseTable& table, const H2Setup& setup, Accounting& accounting)
      : Heart(kTraits), table_(table), setup_(setup), accounting_(accounting) {}

  // A new session (its SETTINGS first) for a new connection.
  void reset() override { session_ = std::make_unique<H2Session>(table_, setup_, accounting_); }
  // The session goes with the connection that ends; the pool keeps the heart.
  void release() override { session_.reset(); }
  // Some stream is live (a request incomplete, or an answer not all sent),
  // as Fed::partial said after the last feed() or resume().
  bool live() const override { return session_ != nullptr && session_->live() > 0; }
  Fed feed(const char* data, size_t len, std::string& out) override {
    return session_->feed(data, len, out);
  }
  Fed resume(std::string& out) override { return session_->resume(out); }
  Fed upgraded(const Upgrade& u, std::string& out) override { return session_->upgraded(u, out); }
  // The session times its streams out itself (resume() closes with
  // Fed::timeout); asked all the same, it says GOAWAY.
  void time_out(std::string& out) override { session_->go_away(out); }
  // GOAWAY with the last stream seen (RFC 9113 section 6.8): at a graceful
  // stop the client opens no more streams, at the keep-alive deadline it
  // learns why the connection ends.
  void goodbye(std::string& out) override { session_->go_away(out); }
  void refuse(std::string& out) override { session_->go_away(out); }

 private:
  const ResponseTable& table_;
  const H2Setup& setup_;
  Accounting& accounting_;
  std::unique_ptr<H2Session> session_;
};

}  // namespace hello
