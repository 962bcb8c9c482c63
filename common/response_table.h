// Every response a persona can send, built once at startup. Answering a
// request is choosing an entry and copying its bytes; the only thing that
// changes afterwards is the Date value, patched in place once a second.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "persona.h"
#include "status.h"

namespace hello {

// Startup choices that change what the table holds.
struct TableOptions {
  bool json = false;            // "/" answers the persona's JSON body
  bool keep_alive = false;      // override always_close: follow HTTP keep-alive rules
  int keep_alive_timeout = -1;  // seconds, for {timeout}; negative: the persona's
};

// The four header layouts a response comes in.
enum class Variant : uint8_t { keep_alive_10, close_10, keep_alive_11, close_11 };
inline constexpr int kVariants = 4;

inline Variant variant_of(bool http11, bool keep_alive) {
  return static_cast<Variant>((http11 ? 2 : 0) + (keep_alive ? 0 : 1));
}

// The connection decisions the heart takes, derived from the persona.
struct ConnectionPolicy {
  bool always_close;
  bool keep_alive_http10;
  bool head_allowed;
  bool no_parsing;
};

struct PreparedResponse {
  std::string bytes;     // status line, headers, blank line, body
  uint32_t head_length;  // bytes up to and including the blank line (HEAD sends only these)
  int32_t date_offset;   // where the Date value starts in `bytes`, or -1
  int status;
};

class ResponseTable {
 public:
  ResponseTable(const Persona& persona, const TableOptions& options);

  // The route whose path equals `path` (query already stripped), or -1.
  int find_route(std::string_view path) const;
  const PreparedResponse& route(int index, Variant v) const;
  // One of kErrorStatuses; any other status answers as 400.
  const PreparedResponse& error(int status, Variant v) const;
  const ConnectionPolicy& policy() const { return policy_; }
  size_t route_count() const { return paths_.size(); }
  // Seconds an idle keep-alive connection stays open.
  int keep_alive_timeout() const { return keep_alive_timeout_; }

  // Rewrites the Date value of every response to `now`.
  void set_date(time_t now);

 private:
  void add(const Persona& persona, int status, const Body& body);

  ConnectionPolicy policy_;
  int keep_alive_timeout_;
  std::vector<std::string_view> paths_;
  // Routes first, then kErrorStatuses in order; kVariants entries each.
  std::vector<PreparedResponse> responses_;
};

}  // namespace hello
