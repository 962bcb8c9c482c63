// hello-floor's heart: the cost of a server that does no HTTP work. A
// request is whatever ends in CRLF CRLF, and each is answered with the
// same prebuilt bytes. It parses nothing, never closes and never waits.
#pragma once

#include "http/heart.h"
#include "observe/accounting.h"
#include "persona/response_table.h"

namespace hello {

class FloorSession final : public Heart {
 public:
  // Lent per request, as HTTP/1's heart is; the connection keeps its deadlines.
  static constexpr HeartTraits kTraits = {.kept = false, .keeps_time = false};

  FloorSession(const ResponseTable& table, Accounting& sink)
      : Heart(kTraits), table_(table), sink_(sink) {}

  void reset() override { matched_ = 0; }
  // A request has begun: part of CRLF CRLF was seen at the end of the last read.
  bool live() const override { return matched_ != 0; }
  Fed feed(const char* data, size_t len, std::string& out) override;
  Fed resume(std::string& out) override;
  void time_out(std::string& out) override;
  // hello-floor answers nothing but its one response: it closes.
  void refuse(std::string&) override {}

 private:
  const ResponseTable& table_;
  Accounting& sink_;
  uint8_t matched_ = 0;  // bytes of CRLF CRLF seen at the end of the last read
};

}  // namespace hello
