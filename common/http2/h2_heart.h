// The HTTP/2 session as a connection's heart (docs/http2.md): the
// connection feeds it every read and sends what it appends, and keeps it
// for the whole connection (its streams and HPACK tables live in it),
// where an HTTP/1 heart is lent per request.
#pragma once

#include <memory>

#include "http/heart.h"
#include "http2/h2_session.h"

namespace hello {

class H2Heart final : public Heart {
 public:
  H2Heart(const ResponseTable& table, const H2Answers& answers, Accounting& accounting)
      : table_(table), answers_(answers), accounting_(accounting) {}

  // A new session (its SETTINGS first) for a new connection.
  void reset() override;
  // Fed::partial: some stream's request is still incomplete.
  Fed feed(const char* data, size_t len, std::string& out) override;
  // Nothing is deferred: streams are answered when their request ends.
  Fed resume(std::string& out) override;
  // A stream's request took too long: GOAWAY, and the connection closes.
  void time_out(std::string& out) override;
  void refuse(std::string& out) override;

 private:
  const ResponseTable& table_;
  const H2Answers& answers_;
  Accounting& accounting_;
  std::unique_ptr<H2Session> session_;
};

}  // namespace hello
