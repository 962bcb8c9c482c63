#include "persona/response_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include <llhttp.h>

#include "base/check.h"
#include "http/field_syntax.h"
#include "http/http_date.h"

namespace hello {

namespace {

// Stands in for the Date value while building; unique enough that finding
// it again is unambiguous (no persona text contains control characters).
constexpr std::string_view kDateMarker =
    "\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03\x04\x05\x06\x07"
    "\x08\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03\x04\x05";
static_assert(kDateMarker.size() == kHttpDateLength);

// Stands in for the body length of a template while building.
constexpr std::string_view kLengthMarker = "\x0e\x0f\x0e\x0f";
// Stands in for the place of a shaped answer's own headers.
constexpr std::string_view kExtraMarker = "\x14\x15\x14\x15";
// Stand in for the values of a {type} or {length} line that is left out
// or replaced whole.
constexpr std::string_view kTypeMarker = "\x10\x11\x10\x11";
constexpr std::string_view kFramingMarker = "\x12\x13\x12\x13";

// Replaces the whole line of `head` (header lines, each ending in CRLF)
// that holds `marker` with `line`.
void replace_line(std::string& head, std::string_view marker, std::string_view line) {
  size_t at = head.find(marker);
  HELLO_CHECK(at != std::string::npos);  // every persona head has {type} and {length}
  size_t begin = head.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  size_t end = head.find("\r\n", at);
  HELLO_CHECK(end != std::string::npos);
  head.replace(begin, end + 2 - begin, line);
}

// `content` in the chunked coding (RFC 9112 section 7.1): one chunk, unless
// empty, then the last chunk and an empty trailer section.
std::string in_chunks(std::string_view content) {
  if (content.empty()) return "0\r\n\r\n";
  return fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", content.size(), content);
}

std::string reason_in_style(int status, ReasonStyle style) {
  std::string reason(reason_phrase(status));
  if (style == ReasonStyle::none) return {};
  if (style == ReasonStyle::upper)
    std::transform(reason.begin(), reason.end(), reason.begin(),
                   [](unsigned char c) { return std::toupper(c); });
  return reason;
}

// The persona's body for an error `status`; `text` holds formatted text.
Body error_body(const Persona& persona, int status, std::string& text) {
  auto it = std::find_if(persona.errors.begin(), persona.errors.end(),
                         [&](const ErrorBody& e) { return e.status == status; });
  if (it != persona.errors.end()) return it->body;
  text = fmt::format(fmt::runtime(persona.error_format), fmt::arg("code", status),
                     fmt::arg("reason", reason_phrase(status)));
  return Body{persona.error_type, text};
}

std::string_view connection_line(const ConnectionHeaders& c, Variant v) {
  switch (v) {
    case Variant::keep_alive_10:
      return c.keep_alive_10;
    case Variant::close_10:
      return c.close_10;
    case Variant::keep_alive_11:
      return c.keep_alive_11;
    case Variant::close_11:
      return c.close_11;
  }
  return {};
}

}  // namespace

static_assert(kGet == HTTP_GET && kHead == HTTP_HEAD);

std::vector<std::string> reserved_headers(const Persona& persona) {
  std::vector<std::string> names;
  auto add_names = [&](std::string_view lines) {
    size_t at = 0;
    while (at < lines.size()) {
      size_t end = lines.find("\r\n", at);
      if (end == std::string_view::npos) end = lines.size();
      std::string_view line = lines.substr(at, end - at);
      // The slots that stand for whole lines come first on theirs.
      for (std::string_view slot : {"{extra}", "{connection}"})
        if (line.starts_with(slot)) line.remove_prefix(slot.size());
      size_t colon = line.find(':');
      if (colon != std::string_view::npos && colon > 0) {
        std::string name(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(), to_lower_ascii);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
      at = end + 2;
    }
  };
  add_names(persona.head);
  const ConnectionHeaders& c = persona.connection;
  for (std::string_view line : {c.keep_alive_10, c.close_10, c.keep_alive_11, c.close_11})
    add_names(line);
  add_names(persona.chunked_header);
  return names;
}

ResponseTable::ResponseTable(const Persona& persona, const TableOptions& options)
    : policy_{persona.always_close && !options.keep_alive, persona.keep_alive_http10,
              persona.head_allowed, persona.no_parsing},
      keep_alive_timeout_(options.keep_alive_timeout >= 0 ? options.keep_alive_timeout
                                                          : persona.keep_alive_timeout) {
  const std::vector<FileRoute> none;
  const std::vector<FileRoute>& file = options.routes != nullptr ? *options.routes : none;
  // A file's WebSocket echoes are the WebSocket table's paths, not HTTP routes.
  std::vector<FileRoute> http_file;
  std::vector<std::string> ws_paths;
  for (const FileRoute& f : file) {
    if (f.kind == FileRoute::Kind::websocket)
      ws_paths.push_back(f.path);
    else
      http_file.push_back(f);
  }
  auto in_file = [&](int method, std::string_view path) {
    return std::any_of(file.begin(), file.end(),
                       [&](const FileRoute& f) { return f.method == method && f.path == path; });
  };
  for (const Route& r : persona.routes) {
    if (in_file(HTTP_GET, r.path)) continue;  // the file's route replaces it
    const Body& body = options.json && r.path == "/" ? persona.json : r.body;
    routes_.push_back({std::string(r.path), HTTP_GET, false});
    routes_.back().content = body.content;
    add(persona, 200, body, Kind::answer, responses_);
    if (body.framing != Framing::length) {
      routes_.back().head = static_cast<int>(heads_.size() / kVariants);
      add(persona, 200, body, Kind::head_only, heads_);
    }
  }
  size_t first_file = routes_.size();
  for (const FileRoute& f : http_file) {
    std::string extra;
    for (const auto& [name, value] : f.headers) extra += fmt::format("{}: {}\r\n", name, value);
    bool echo = f.kind == FileRoute::Kind::echo;
    routes_.push_back(
        {f.path, f.method, echo, f.delay_us, static_cast<uint16_t>(f.status), f.content, f.shape});
    add(persona, f.status, Body{f.content_type, f.content, extra},
        echo ? Kind::dynamic : Kind::answer, responses_);
  }
  std::string text;
  for (int status : kErrorStatuses)
    add(persona, status, error_body(persona, status, text), Kind::error, responses_);
  // A path of the route file answers 405 with its own methods in Allow (RFC
  // 9110 section 15.5.6); the persona's own paths keep the persona's line.
  if (!persona.allow_header.empty())
    for (size_t i = first_file; i < routes_.size(); ++i)
      if (routes_[i].not_allowed < 0) add_not_allowed(persona, routes_[i].path);
  // A request that is valid HTTP with a body that is not JSON: the
  // connection stays usable, so this 400 follows the keep-alive rules.
  add(persona, 400, Body{"text/plain; charset=utf-8", {}}, Kind::dynamic, bad_request_);
  route_count_ = static_cast<uint32_t>(routes_.size());
  prepare_shaping(persona, options, http_file);
  waits_or_shapes_ = shaping_;
  for (const RouteKey& r : routes_) waits_or_shapes_ |= r.delay_us > 0;
  if (!persona.websocket.path.empty())
    ws_ = std::make_unique<WsTable>(persona.websocket, std::move(ws_paths));
  set_date(time(nullptr));
}

// Shapes are parsed here, once routes_ no longer moves: they point into
// texts it holds. Every text was checked before the table was built.
void ResponseTable::prepare_shaping(const Persona& persona, const TableOptions& options,
                                    const std::vector<FileRoute>& file) {
  shape_limits_ = options.shape_limits;
  reserved_headers_ = reserved_headers(persona);
  shape_limits_.reserved = &reserved_headers_;
  shape_requests_ = options.shape || !options.shape_default.empty();
  shaping_ = shape_requests_;
  ShapeError error;
  auto parse = [&](std::string& text, Shape& shape) {
    HELLO_CHECK(parse_shape(text.data(), text.size(), shape_limits_, shape, error));
  };
  for (RouteKey& r : routes_) {
    if (r.shape_text.empty()) continue;
    parse(r.shape_text, r.shape);
    r.has_shape = true;
    shaping_ = true;
  }
  if (!options.shape_default.empty()) {
    default_shape_text_ = options.shape_default;
    parse(default_shape_text_, default_shape_);
    has_default_shape_ = true;
  }
  if (!shaping_) return;
  // Every route's template: the file's routes with their own headers.
  for (size_t i = 0; i < routes_.size(); ++i) {
    const RouteKey& r = routes_[i];
    std::string extra;
    std::string_view type;
    size_t first_file = routes_.size() - file.size();
    if (i >= first_file) {
      const FileRoute& f = file[i - first_file];
      for (const auto& [name, value] : f.headers) extra += fmt::format("{}: {}\r\n", name, value);
      type = f.content_type;
    } else {
      auto it = std::find_if(persona.routes.begin(), persona.routes.end(),
                             [&](const Route& pr) { return pr.path == r.path; });
      HELLO_CHECK(it != persona.routes.end());
      type = options.json && r.path == "/" ? persona.json.content_type : it->body.content_type;
      extra = it->body.extra_headers;
    }
    add(persona, r.status, Body{type, {}, extra}, Kind::shaped, shaped_);
  }
  for (bool http10 : {false, true})
    for (int status = 200; status < 600; ++status)
      status_lines_.push_back(fmt::format("{} {} {}\r\n",
                                          http10 && persona.echo_version ? "HTTP/1.0" : "HTTP/1.1",
                                          status, reason_in_style(status, persona.reasons)));
  bool lower = !persona.head.empty() && persona.head[0] >= 'a' && persona.head[0] <= 'z';
  decision_name_ = lower ? "x-hello-shape-decision: " : "X-Hello-Shape-Decision: ";
}

size_t ResponseTable::append_shaped_head(std::string& out, int route, Variant v, uint16_t status,
                                         uint64_t body_length, const Shape& shape,
                                         std::string_view decision) const {
  HELLO_CHECK(static_cast<uint32_t>(route) < route_count_ && status >= 200 && status < 600);
  const PreparedResponse& t = shaped_[route * kVariants + static_cast<int>(v)];
  size_t begin = out.size();
  bool http10 = v == Variant::keep_alive_10 || v == Variant::close_10;
  out.append(status_lines_[(http10 ? 400 : 0) + status - 200]);
  // Two holes in the template, in either order: the length and the headers.
  bool no_length = status == 204 || status == 304;
  struct Hole {
    uint32_t at;
    uint32_t resume;
    bool headers;
  };
  uint32_t length_at = static_cast<uint32_t>(t.length_offset);
  Hole length =
      no_length ? Hole{t.length_line, t.length_line_end, false} : Hole{length_at, length_at, false};
  uint32_t extra_at = static_cast<uint32_t>(t.extra_offset);
  Hole extra{extra_at, extra_at, true};
  Hole holes[2] = {length, extra};
  // At the same place (headers just before a left-out length line), the
  // empty hole first.
  if (holes[1].at < holes[0].at ||
      (holes[1].at == holes[0].at && holes[1].resume < holes[0].resume))
    std::swap(holes[0], holes[1]);
  const char* bytes = t.bytes.data();
  uint32_t pos = t.status_end;
  for (const Hole& h : holes) {
    out.append(bytes + pos, h.at - pos);
    pos = h.resume;
    if (!h.headers) {
      if (!no_length) {
        char digits[20];
        out.append(digits, static_cast<size_t>(std::to_chars(digits, digits + 20, body_length).ptr -
                                               digits));
      }
      continue;
    }
    for (uint8_t i = 0; i < shape.header_count; ++i) {
      out.append(shape.headers[i].name);
      out.append(": ");
      out.append(shape.headers[i].value);
      out.append("\r\n");
    }
    out.append(decision_name_);
    out.append(decision);
    out.append("\r\n");
  }
  out.append(bytes + pos, t.head_length - pos);
  return out.size() - begin;
}

// The 405 of `path`: the persona's Allow line, in its spelling and with its
// separator, listing every method of the path (and HEAD with GET where the
// persona answers HEAD). Every route of the path points at it.
void ResponseTable::add_not_allowed(const Persona& persona, const std::string& path) {
  std::string_view allow = persona.allow_header;
  std::string_view separator = allow.find(", ") != std::string_view::npos ? ", " : ",";
  std::string line(allow.substr(0, allow.find(':') + 1));
  bool get = false, head = false;
  for (const RouteKey& r : routes_) {
    if (r.path != path) continue;
    line += fmt::format("{}{}", line.back() == ':' ? std::string_view(" ") : separator,
                        llhttp_method_name(static_cast<llhttp_method_t>(r.method)));
    get |= r.method == HTTP_GET;
    head |= r.method == HTTP_HEAD;
  }
  if (get && !head && policy_.head_allowed) line += fmt::format("{}HEAD", separator);
  line += "\r\n";
  std::string text;
  Body body = error_body(persona, 405, text);
  body.extra_headers = line;
  int set = static_cast<int>(not_allowed_.size() / kVariants);
  add(persona, 405, body, Kind::error, not_allowed_);
  for (RouteKey& r : routes_)
    if (r.path == path) r.not_allowed = set;
}

void ResponseTable::add(const Persona& persona, int status, const Body& body, Kind kind,
                        std::vector<PreparedResponse>& into) {
  HELLO_CHECK(kind != Kind::dynamic || body.framing == Framing::length);
  int timeout = keep_alive_timeout_;
  std::string extra(body.extra_headers);
  if (kind == Kind::shaped) extra += kExtraMarker;
  if (status == 405 && extra.empty()) extra = persona.allow_header;
  // 404, 405 and 417 answer a well-formed request and leave the connection
  // open; every other error closes it and must say so, even where the
  // framework's close is silent.
  bool fatal = kind == Kind::error && status != 404 && status != 405 && status != 417;
  for (int i = 0; i < kVariants; ++i) {
    Variant v = static_cast<Variant>(i);
    bool http10 = v == Variant::keep_alive_10 || v == Variant::close_10;
    // HTTP/1.0 has no chunked coding (RFC 9112 section 7): a client of it
    // learns the end of a body without a length from the close.
    Framing framing = kind == Kind::shaped                         ? Framing::length
                      : body.framing == Framing::chunked && http10 ? Framing::close
                                                                   : body.framing;
    bool ended_by_close = framing == Framing::close && kind != Kind::head_only;
    std::string_view connection = connection_line(persona.connection, v);
    if (fatal)
      connection = http10 && !persona.connection.close_10.empty() ? persona.connection.close_10
                                                                  : persona.connection.close_11;
    else if (ended_by_close)
      connection = connection_line(persona.connection, variant_of(!http10, false));
    std::string_view version = http10 && persona.echo_version ? "HTTP/1.0" : "HTTP/1.1";
    bool templated = kind == Kind::dynamic || kind == Kind::shaped;
    std::string length = templated                    ? std::string(kLengthMarker)
                         : framing == Framing::length ? std::to_string(body.content.size())
                                                      : std::string(kFramingMarker);
    std::string head =
        fmt::format(fmt::runtime(persona.head), fmt::arg("date", kDateMarker),
                    fmt::arg("type", body.content_type.empty() ? kTypeMarker : body.content_type),
                    fmt::arg("length", length), fmt::arg("extra", extra),
                    fmt::arg("connection",
                             fmt::format(fmt::runtime(connection), fmt::arg("timeout", timeout))));
    if (body.content_type.empty()) replace_line(head, kTypeMarker, {});
    if (framing != Framing::length)
      replace_line(head, kFramingMarker,
                   framing == Framing::chunked && kind != Kind::head_only ? persona.chunked_header
                                                                          : std::string_view());
    PreparedResponse r;
    r.bytes = fmt::format("{} {} {}\r\n{}\r\n", version, status,
                          reason_in_style(status, persona.reasons), head);
    size_t extra_at = std::string::npos;
    if (kind == Kind::shaped) {
      extra_at = r.bytes.find(kExtraMarker);
      HELLO_CHECK(extra_at != std::string::npos);  // every persona head has {extra}
      r.bytes.erase(extra_at, kExtraMarker.size());
    }
    if (templated) {
      size_t at = r.bytes.find(kLengthMarker);
      HELLO_CHECK(at != std::string::npos);  // every persona head has {length}
      r.bytes.erase(at, kLengthMarker.size());
      r.length_offset = static_cast<int32_t>(at);
      if (extra_at != std::string::npos && extra_at > at) extra_at -= kLengthMarker.size();
    }
    if (kind == Kind::shaped) {
      size_t at = static_cast<size_t>(r.length_offset);
      r.extra_offset = static_cast<int32_t>(extra_at);
      r.status_end = static_cast<uint32_t>(r.bytes.find("\r\n") + 2);
      r.length_line = static_cast<uint32_t>(r.bytes.rfind('\n', at) + 1);
      r.length_line_end = static_cast<uint32_t>(r.bytes.find("\r\n", at) + 2);
    }
    r.head_length = static_cast<uint32_t>(r.bytes.size());
    if (kind != Kind::head_only)
      r.bytes += framing == Framing::chunked ? in_chunks(body.content) : std::string(body.content);
    size_t at = r.bytes.find(kDateMarker);
    r.date_offset = at == std::string::npos ? -1 : static_cast<int32_t>(at);
    r.status = status;
    r.closes = fatal || ended_by_close;
    into.push_back(std::move(r));
  }
}

int ResponseTable::find_route(std::string_view path) const {
  for (size_t i = 0; i < routes_.size(); ++i)
    if (routes_[i].path == path) return static_cast<int>(i);
  return -1;
}

const PreparedResponse& ResponseTable::error(int status, Variant v) const {
  size_t slot = 0;
  while (slot < kErrorStatuses.size() && kErrorStatuses[slot] != status) ++slot;
  if (slot == kErrorStatuses.size()) slot = 0;  // 400
  return responses_[(routes_.size() + slot) * kVariants + static_cast<int>(v)];
}

void ResponseTable::set_date(time_t now) {
  char date[kHttpDateLength];
  format_http_date(now, date);
  for (auto* list : {&responses_, &bad_request_, &not_allowed_, &heads_, &shaped_})
    for (PreparedResponse& r : *list)
      if (r.date_offset >= 0) memcpy(r.bytes.data() + r.date_offset, date, kHttpDateLength);
  if (ws_ != nullptr) ws_->set_date(date);
}

}  // namespace hello
