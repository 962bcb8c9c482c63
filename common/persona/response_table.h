// Every response a persona can send, built once at startup. Answering a
// request is choosing an entry and copying its bytes; the only thing that
// changes afterwards is the Date value, patched in place once a second.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "http/status.h"
#include "persona/persona.h"
#include "persona/routes_file.h"
#include "persona/ws_table.h"
#include "shaping/shape.h"

namespace hello {

// Startup choices that change what the table holds.
struct TableOptions {
  bool json = false;            // "/" answers the persona's JSON body
  bool keep_alive = false;      // override always_close: follow HTTP keep-alive rules
  int keep_alive_timeout = -1;  // seconds, for {timeout}; negative: the persona's
  // Routes from --routes: added to the persona's, replacing one with the
  // same method and path. Read only while the table is built.
  const std::vector<FileRoute>* routes = nullptr;
  // --shape: a request's query string and X-Hello-Shape header shape its answer.
  bool shape = false;
  // --shape-default: the shape of a request that carries none (checked
  // already: the table parses it again and cannot fail). Empty: none.
  std::string shape_default = {};
  ShapeLimits shape_limits = {};
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
  // A template for a body known only per request (JSON echo): `bytes` is
  // the head alone, and the body's length in decimal goes here; else -1.
  int32_t length_offset = -1;
  // The connection must close once this is sent: a fatal error, or a body
  // ended by closing. Every variant of such an answer, the keep-alive ones
  // included, is built in a close layout.
  bool closes = false;
  // A shaped answer's template (docs/shaping.md) also marks the end of its
  // status line, its Content-Length line (left out for 204 and 304) and
  // where the shape's headers go.
  uint32_t status_end = 0;
  uint32_t length_line = 0;
  uint32_t length_line_end = 0;
  int32_t extra_offset = -1;
};

// What a request's method and path select.
// llhttp's numbers for the two methods every persona route answers.
inline constexpr int kGet = 1;   // HTTP_GET
inline constexpr int kHead = 2;  // HTTP_HEAD

struct RouteMatch {
  int route;        // the route to answer with, or -1
  bool path_known;  // some route has this path: -1 then means 405, not 404
  int path_route;   // a route with this path (for its 405), or -1
};

// The headers a persona's answers carry whatever the route (its head's
// names, its connection and chunked lines), in lower case: a shape's
// `header` may not add them again.
std::vector<std::string> reserved_headers(const Persona& persona);

class ResponseTable {
 public:
  ResponseTable(const Persona& persona, const TableOptions& options);
  // Shapes point into texts the table owns: it is never copied.
  ResponseTable(const ResponseTable&) = delete;
  ResponseTable& operator=(const ResponseTable&) = delete;

  // The first route whose path equals `path` (query already stripped), or -1.
  int find_route(std::string_view path) const;
  // The route for `method` (an llhttp_method_t) on `path`. A GET route also
  // answers HEAD where the persona allows it. Inline: it runs per request.
  RouteMatch match(std::string_view path, int method) const {
    RouteMatch m{-1, false, -1};
    for (size_t i = 0; i < routes_.size(); ++i) {
      // Sizes and first bytes first: most paths differ in one or the other.
      const std::string& p = routes_[i].path;
      if (p.size() != path.size() || (!p.empty() && p[0] != path[0]) || p != path) continue;
      m.path_known = true;
      m.path_route = static_cast<int>(i);
      if (routes_[i].method == method) return {static_cast<int>(i), true, m.path_route};
      if (routes_[i].method == kGet && method == kHead && policy_.head_allowed)
        m.route = static_cast<int>(i);  // unless a HEAD route of its own follows
    }
    return m;
  }
  size_t route_count() const { return route_count_; }
  // True for a route that answers with the request's JSON, minified.
  bool echo(int route) const { return routes_[route].echo; }
  // True if some route's answer waits, or some answers are shaped: one
  // test per request when neither.
  bool waits_or_shapes() const { return waits_or_shapes_; }
  // How long the route's answer waits, in microseconds (0: it does not).
  uint64_t delay_us(int route) const { return routes_[route].delay_us; }
  // The 400 template for a request that is valid HTTP but asks for
  // something wrong (a body that is not JSON, a bad shaping parameter),
  // with a text/plain body given per request. Keep-alive rules apply.
  const PreparedResponse& bad_request(Variant v) const { return bad_request_[static_cast<int>(v)]; }
  // True if some answers are shaped: by requests (--shape), a default or a
  // route's "shape". One test per request when none is.
  bool shaping() const { return shaping_; }
  // True if a request's query and X-Hello-Shape header are read (--shape).
  bool shape_requests() const { return shape_requests_; }
  const ShapeLimits& shape_limits() const { return shape_limits_; }
  // The shape of a request to `route` that carries none: the route's own,
  // else --shape-default; null for none.
  const Shape* shape_of(int route) const {
    const RouteKey& r = routes_[route];
    return r.has_shape ? &r.shape : has_default_shape_ ? &default_shape_ : nullptr;
  }
  // The body a shaped answer of `route` sends unless `size` replaces it.
  std::string_view content(int route) const { return routes_[route].content; }
  // The route's status, which a shaped answer keeps unless `status` replaces it.
  uint16_t status(int route) const { return routes_[route].status; }
  // Appends the head of a shaped answer of `route` in variant `v`: `status`
  // in the persona's layout, a Content-Length of `body_length` (none for
  // 204 and 304), the shape's `headers` and the decision header holding
  // `decision`, where the persona puts extra headers. Returns its length.
  size_t append_shaped_head(std::string& out, int route, Variant v, uint16_t status,
                            uint64_t body_length, const Shape& shape,
                            std::string_view decision) const;
  // The template a shaped answer of `route` in variant `v` is made from
  // (only while shaping()): its head, with the offsets of its holes.
  const PreparedResponse& shaped(int route, Variant v) const {
    HELLO_CHECK(static_cast<uint32_t>(route) < route_count_ && !shaped_.empty());
    return shaped_[route * kVariants + static_cast<int>(v)];
  }
  // The answer of route `index`; with `head`, the answer to HEAD, which for a
  // body without a length is an entry of its own (the head alone, without
  // a framing line), else the same entry, whose head_length bytes are sent.
  // Inline: it runs per request.
  const PreparedResponse& route(int index, Variant v, bool head = false) const {
    HELLO_CHECK(static_cast<uint32_t>(index) < route_count_);  // a negative index too
    if (head && routes_[index].head >= 0)
      return heads_[routes_[index].head * kVariants + static_cast<int>(v)];
    return responses_[index * kVariants + static_cast<int>(v)];
  }
  // One of kErrorStatuses; any other status answers as 400.
  const PreparedResponse& error(int status, Variant v) const;
  // The 405 for the path of route `path_route`: Allow lists that path's methods.
  const PreparedResponse& not_allowed(int path_route, Variant v) const {
    int set = path_route >= 0 ? routes_[path_route].not_allowed : -1;
    return set < 0 ? error(405, v) : not_allowed_[set * kVariants + static_cast<int>(v)];
  }
  const ConnectionPolicy& policy() const { return policy_; }
  // The persona's WebSocket answers (docs/websocket.md), or null: it speaks none.
  const WsTable* websocket() const { return ws_.get(); }

  // Rewrites the Date value of every response to `now`.
  void set_date(time_t now);

 private:
  struct RouteKey {
    std::string path;
    int method;
    bool echo;
    uint64_t delay_us = 0;
    uint16_t status = 200;
    std::string content = {};     // the body before framing, for shaped answers
    std::string shape_text = {};  // the route's "shape", parsed into `shape` (which points into it)
    Shape shape = {};
    bool has_shape = false;
    int not_allowed = -1;  // this path's 405 in not_allowed_, or -1: the persona's
    int head = -1;         // its own HEAD answers in heads_, or -1: the GET answers' heads
  };

  // What add() builds from a body.
  enum class Kind : uint8_t {
    answer,    // the body, framed as it says
    error,     // the body of an error status; one other than 404, 405 and 417 closes
    dynamic,   // a template whose body (Content-Length framed) comes with each request
    shaped,    // the same, with the offsets a shaped answer is assembled by
    head_only  // the answer to HEAD: the head alone, without a framing line unless a length
  };

  // Appends the kVariants responses of `status` with `body`.
  void add(const Persona& persona, int status, const Body& body, Kind kind,
           std::vector<PreparedResponse>& into);
  void add_not_allowed(const Persona& persona, const std::string& path);
  void prepare_shaping(const Persona& persona, const TableOptions& options,
                       const std::vector<FileRoute>& file);

  ConnectionPolicy policy_;
  int keep_alive_timeout_;  // seconds an idle keep-alive connection stays open, for {timeout}
  std::vector<RouteKey> routes_;
  uint32_t route_count_ = 0;  // routes_.size(), for the check in route()
  bool waits_or_shapes_ = false;
  bool shaping_ = false;
  bool shape_requests_ = false;
  bool has_default_shape_ = false;
  ShapeLimits shape_limits_;
  std::vector<std::string> reserved_headers_;  // shape_limits_.reserved
  std::string default_shape_text_;             // --shape-default, parsed into default_shape_
  Shape default_shape_;
  // "HTTP/1.x NNN Reason\r\n" for 200 to 599: [0, 400) for HTTP/1.1, then
  // HTTP/1.0 where the persona answers in it. Built only when shaping.
  std::vector<std::string> status_lines_;
  std::string_view decision_name_;  // "X-Hello-Shape-Decision: ", in the persona's case
  // Routes first, then kErrorStatuses in order; kVariants entries each.
  std::vector<PreparedResponse> responses_;
  std::vector<PreparedResponse> bad_request_;
  std::vector<PreparedResponse> shaped_;       // kVariants per route, when shaping
  std::vector<PreparedResponse> not_allowed_;  // kVariants per path of the route file
  std::vector<PreparedResponse> heads_;        // kVariants per route whose body has no length
  std::unique_ptr<WsTable> ws_;
};

}  // namespace hello
