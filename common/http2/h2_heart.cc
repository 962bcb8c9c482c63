#include "http2/h2_heart.h"

namespace hello {

void H2Heart::reset() {
  session_ = std::make_unique<H2Session>(table_, answers_, accounting_);
}

Fed H2Heart::feed(const char* data, size_t len, std::string& out) {
  Fed fed;
  fed.consumed = len;
  uint32_t before = session_->answered();
  bool open = session_->feed(data, len, out);
  fed.answered = session_->answered() - before;
  fed.next = open ? Fed::Next::read : Fed::Next::close;
  fed.partial = open && session_->streams_open();
  fed.clean_end = !open;
  return fed;
}

Fed H2Heart::resume(std::string&) {
  Fed fed;
  fed.partial = session_->streams_open();
  return fed;
}

void H2Heart::time_out(std::string& out) {
  session_->go_away(out);
}

void H2Heart::refuse(std::string& out) {
  session_->go_away(out);
}

}  // namespace hello
