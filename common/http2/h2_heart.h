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
  H2Heart(const ResponseTable& table, const H2Setup& setup, Accounting& accounting)
      : table_(table), setup_(setup), accounting_(accounting) {}

  // A new session (its SETTINGS first) for a new connection.
  void reset() override { session_ = std::make_unique<H2Session>(table_, setup_, accounting_); }
  void release() override { session_.reset(); }
  // Fed::partial: some stream is live (a request incomplete, or an answer
  // not all sent).
  Fed feed(const char* data, size_t len, std::string& out) override {
    return session_->feed(data, len, out);
  }
  Fed resume(std::string& out) override { return session_->resume(out); }
  Fed upgraded(const Upgrade& u, std::string& out) override { return session_->upgraded(u, out); }
  // GOAWAY; the connection closes (a graceful stop, the keep-alive timeout).
  void time_out(std::string& out) override { session_->go_away(out); }
  void refuse(std::string& out) override { session_->go_away(out); }

 private:
  const ResponseTable& table_;
  const H2Setup& setup_;
  Accounting& accounting_;
  std::unique_ptr<H2Session> session_;
};

}  // namespace hello
