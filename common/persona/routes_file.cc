#include "persona/routes_file.h"

#include <fmt/format.h>
#include <llhttp.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/duration.h"
#include "http/field_syntax.h"
#include "http/route_path.h"

namespace hello {

namespace {

using simdjson::ondemand::json_type;

// Where a byte of the file is, as "line:column" (both from 1).
std::string position(std::string_view text, const char* at) {
  size_t offset = std::min(static_cast<size_t>(at - text.data()), text.size());
  size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  size_t start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  size_t column = offset == 0 || start == std::string_view::npos ? offset + 1 : offset - start;
  return fmt::format("{}:{}", line, column);
}

// True if the header template `head` has a line named `name` (any case).
bool sends(std::string_view head, std::string_view name) {
  size_t start = 0;
  while (start < head.size()) {
    size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(start, end - start);
    // A slot such as {extra} or {connection} may stand first on a line.
    while (!line.empty() && line[0] == '{') {
      size_t close = line.find('}');
      if (close == std::string_view::npos) break;
      line.remove_prefix(close + 1);
    }
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && equals_nocase(line.substr(0, colon), name)) return true;
    start = end + 2;
  }
  return false;
}

// Reads every value of `v`, On-Demand validating as it goes; false at the
// first error.
bool walk(simdjson::ondemand::value v, int depth) {
  json_type type;
  if (depth > 1024 || v.type().get(type) != simdjson::SUCCESS) return false;
  switch (type) {
    case json_type::object: {
      simdjson::ondemand::object o;
      if (v.get_object().get(o) != simdjson::SUCCESS) return false;
      for (auto item : o) {
        simdjson::ondemand::field field;
        if (std::move(item).get(field) != simdjson::SUCCESS || !walk(field.value(), depth + 1))
          return false;
      }
      return true;
    }
    case json_type::array: {
      simdjson::ondemand::array a;
      if (v.get_array().get(a) != simdjson::SUCCESS) return false;
      for (auto element : a) {
        simdjson::ondemand::value child;
        if (element.get(child) != simdjson::SUCCESS || !walk(child, depth + 1)) return false;
      }
      return true;
    }
    case json_type::number:
      return v.get_number().error() == simdjson::SUCCESS;
    case json_type::string:
      return v.get_string().error() == simdjson::SUCCESS;
    case json_type::boolean:
      return v.get_bool().error() == simdjson::SUCCESS;
    case json_type::null:
      return v.is_null().error() == simdjson::SUCCESS;
  }
  return false;
}

// A syntax error found by the DOM parser has no position; walking the text
// with On-Demand, which stops where it fails, gives one.
const char* locate_syntax_error(simdjson::padded_string& json) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(json).get(doc) != simdjson::SUCCESS) return nullptr;

  simdjson::ondemand::value root;
  if (doc.get_value().get(root) == simdjson::SUCCESS) walk(root, 0);
  // A whole value followed by more text fails only as a document: the
  // walk then stops short of the end, where current_location() points.
  const char* at = nullptr;
  if (doc.current_location().get(at) != simdjson::SUCCESS) at = nullptr;
  return at;
}

// Errors of simdjson's first stage (strings, UTF-8) stop On-Demand before it
// has a position; the text itself shows where. Anything else without a
// position is where the text ran out (an unclosed array or object).
const char* locate_by_scanning(std::string_view text, simdjson::error_code err) {
  const char* p = text.data();
  const char* end = p + text.size();
  if (err == simdjson::UNCLOSED_STRING || err == simdjson::UNESCAPED_CHARS) {
    const char* open = nullptr;  // the quote of the string being read
    for (; p < end; ++p) {
      if (open == nullptr) {
        if (*p == '"') open = p;
      } else if (*p == '\\') {
        ++p;
      } else if (*p == '"') {
        open = nullptr;
      } else if (static_cast<unsigned char>(*p) < 0x20 && err == simdjson::UNESCAPED_CHARS) {
        return p;
      }
    }
    if (open != nullptr) return open;
  } else if (err == simdjson::UTF8_ERROR) {
    // The first byte that does not start a well-formed sequence.
    while (p < end) {
      auto c = static_cast<unsigned char>(*p);
      size_t n = c < 0x80                 ? 1
                 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
      if (n == 0 || static_cast<size_t>(end - p) < n) return p;
      for (size_t i = 1; i < n; ++i)
        if ((static_cast<unsigned char>(p[i]) & 0xc0) != 0x80) return p;
      p += n;
    }
  }
  const char* last = text.data() + text.size();
  while (last > text.data() && std::isspace(static_cast<unsigned char>(last[-1]))) --last;
  return last;
}

// The key of `field` as written in the file (escapes not undone: no valid
// key contains one), and where it starts.
std::string_view key_text(simdjson::ondemand::field& field, const char** at) {
  const char* raw = field.key().raw();
  const char* end = raw;
  while (*end != '"') end += *end == '\\' ? 2 : 1;
  *at = raw - 1;
  return {raw, static_cast<size_t>(end - raw)};
}

class Loader {
 public:
  Loader(const std::string& file, simdjson::padded_string& json, simdjson::dom::element dom,
         std::string_view default_type, std::string_view persona_head, const ShapeLimits& limits)
      : file_(file),
        text_(json),
        dom_(dom),
        default_type_(default_type),
        persona_head_(persona_head),
        max_delay_us_(limits.max_delay_us),
        shape_limits_(limits) {}

  bool load(simdjson::ondemand::document& doc, std::vector<FileRoute>& routes) {
    simdjson::ondemand::object root;
    if (doc.get_object().get(root) != simdjson::SUCCESS)
      return fail(text_.data(), "the file must hold a JSON object: {\"routes\": [...]}");
    bool seen = false;
    for (auto item : root) {
      simdjson::ondemand::field field;
      std::string_view key;
      const char* at = nullptr;
      if (!open_field(std::move(item), doc, field, key, at)) return false;
      if (key != "routes")
        return fail(at, fmt::format("unknown key \"{}\" (the only key is \"routes\")", key));
      if (seen) return fail(at, "key \"routes\" given twice");
      simdjson::ondemand::array list;
      if (field.value().get_array().get(list) != simdjson::SUCCESS)
        return fail(at, "\"routes\" must be an array of route objects");
      seen = true;
      size_t index = 0;
      for (auto element : list) {
        simdjson::ondemand::object object;
        const char* where = current(doc);
        if (element.get_object().get(object) != simdjson::SUCCESS)
          return fail(where, fmt::format("routes[{}] must be an object", index));
        FileRoute route;
        if (!load_route(doc, object, where, index, route)) return false;
        for (const FileRoute& other : routes)
          if (other.method == route.method && other.path == route.path)
            return fail(where,
                        fmt::format("duplicate route {} {}",
                                    llhttp_method_name(static_cast<llhttp_method_t>(route.method)),
                                    route.path));
        routes.push_back(std::move(route));
        ++index;
      }
    }
    if (!seen) return fail(text_.data(), "missing key \"routes\"");
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  const char* current(simdjson::ondemand::document& doc) {
    const char* at = text_.data();
    if (doc.current_location().get(at) != simdjson::SUCCESS) at = text_.data();
    return at;
  }

  // Takes the field of an object's `item` and its key as written; false (with
  // the error set) if it cannot be read.
  template <typename Item>
  bool open_field(Item&& item, simdjson::ondemand::document& doc, simdjson::ondemand::field& field,
                  std::string_view& key, const char*& at) {
    if (std::forward<Item>(item).get(field) != simdjson::SUCCESS)
      return fail(current(doc), "unreadable key");
    key = key_text(field, &at);
    return true;
  }

  bool fail(const char* at, std::string message) {
    error_ = fmt::format("{}:{}: {}", file_, position({text_.data(), text_.size()}, at), message);
    return false;
  }

  bool load_route(simdjson::ondemand::document& doc, simdjson::ondemand::object& object,
                  const char* where, size_t index, FileRoute& route) {
    int contents = 0;
    std::vector<std::string_view> keys;  // a key given twice is a mistake, not an override
    auto has = [&keys](std::string_view key) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    for (auto item : object) {
      simdjson::ondemand::field field;
      std::string_view key;
      const char* at = nullptr;
      if (!open_field(std::move(item), doc, field, key, at)) return false;
      if (has(key))
        return fail(at, fmt::format("key \"{}\" given twice in routes[{}]", key, index));
      keys.push_back(key);
      simdjson::ondemand::value value = field.value();
      std::string_view s;
      if (key == "method") {
        if (value.get_string().get(s) != simdjson::SUCCESS ||
            (route.method = http_method_of(s)) < 0)
          return fail(at,
                      "\"method\" must be an HTTP method in capitals, such as \"GET\" or \"POST\"");
      } else if (key == "path") {
        if (!load_path(value, at, route)) return false;
      } else if (key == "status") {
        int64_t status;
        if (value.get_int64().get(status) != simdjson::SUCCESS)
          return fail(at, "\"status\" must be an integer");
        // Statuses without a body (1xx, 204, 304) do not fit a response
        // that always carries Content-Length and a body.
        if (status < 200 || status > 599 || status == 204 || status == 304)
          return fail(at, fmt::format("bad status {}: 200 to 599, and not 204 or 304", status));
        route.status = static_cast<int>(status);
      } else if (key == "headers") {
        if (!load_headers(value, at, route)) return false;
      } else if (key == "body") {
        if (value.get_string().get(s) != simdjson::SUCCESS)
          return fail(at, "\"body\" must be a string");
        route.kind = FileRoute::Kind::body;
        route.content = s;
        ++contents;
      } else if (key == "json") {
        // The same value in the DOM tree, which validated the whole file,
        // minified once, here.
        simdjson::dom::element json;
        if (dom_["routes"].at(index)["json"].get(json) != simdjson::SUCCESS)
          return fail(at, "unreadable \"json\" value");
        route.content = simdjson::minify(json);
        route.kind = FileRoute::Kind::json;
        ++contents;
      } else if (key == "delay") {
        std::string why;
        if (value.get_string().get(s) != simdjson::SUCCESS)
          return fail(at, "\"delay\" must be a string such as \"250us\", \"10ms\" or \"1.5s\"");
        if (!parse_duration(s, route.delay_us, why))
          return fail(at, fmt::format("bad \"delay\" \"{}\": {}", s, why));
        if (route.delay_us > max_delay_us_)
          return fail(at, fmt::format("\"delay\" {} is over --max-delay {}", s,
                                      format_duration(max_delay_us_)));
      } else if (key == "shape") {
        if (value.get_string().get(s) != simdjson::SUCCESS)
          return fail(at, "\"shape\" must be a string such as \"delay=1ms:50&status=503:1\"");
        route.shape = std::string(s);
        std::string text = route.shape;  // parsing decodes in place
        Shape shape;
        ShapeError shape_error;
        if (!parse_shape(text.data(), text.size(), shape_limits_, shape, shape_error))
          return fail(at, fmt::format("bad \"shape\": {}", shape_error.view()));
      } else if (key == "echo") {
        if (value.get_string().get(s) != simdjson::SUCCESS || (s != "json" && s != "websocket"))
          return fail(at, "\"echo\" must be \"json\" or \"websocket\"");
        route.kind = s == "json" ? FileRoute::Kind::echo : FileRoute::Kind::websocket;
        ++contents;
      } else {
        return fail(at, fmt::format("unknown key \"{}\" in routes[{}] (known: method, path, "
                                    "status, headers, body, json, echo, delay, shape)",
                                    key, index));
      }
    }
    if (!has("method"))
      return fail(where, fmt::format("routes[{}]: missing key \"method\"", index));
    if (!has("path")) return fail(where, fmt::format("routes[{}]: missing key \"path\"", index));
    if (contents != 1)
      return fail(
          where,
          fmt::format("routes[{}] needs exactly one of \"body\", \"json\" and \"echo\"", index));
    bool http_only = has("status") || has("headers") || has("delay") || has("shape");
    if (!check_echo(route, http_only, where, index)) return false;
    // A Content-Type of the file's own is among the headers, in its place.
    bool own_type = std::any_of(route.headers.begin(), route.headers.end(), [](const auto& h) {
      return equals_nocase(h.first, "content-type");
    });
    if (!own_type)
      route.content_type = route.kind == FileRoute::Kind::body ? default_type_ : "application/json";
    return true;
  }

  // An echo's method: a JSON echo takes a body; a WebSocket echo is a GET
  // with nothing of an HTTP answer (`http_only`: status, headers, delay, shape).
  bool check_echo(const FileRoute& route, bool http_only, const char* where, size_t index) {
    if (route.kind == FileRoute::Kind::websocket && (route.method != HTTP_GET || http_only))
      return fail(where, fmt::format("routes[{}]: a WebSocket echo is a GET with no status, "
                                     "headers, delay or shape",
                                     index));
    if (route.kind == FileRoute::Kind::echo && route.method != HTTP_POST &&
        route.method != HTTP_PUT && route.method != HTTP_PATCH)
      return fail(where,
                  fmt::format("routes[{}]: an echo route takes a body: POST, PUT or PATCH", index));
    return true;
  }

  bool load_path(simdjson::ondemand::value& value, const char* at, FileRoute& route) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS)
      return fail(at, "\"path\" must be a string");
    if (s.empty() || s[0] != '/') return fail(at, "\"path\" must start with '/'");
    if (s.size() > kMaxPath)
      return fail(at, fmt::format("\"path\" is longer than {} bytes", kMaxPath));
    for (unsigned char c : s)
      if (c <= ' ' || c == '?' || c == '#' || c >= 0x7f)
        return fail(
            at, "\"path\" must be a plain path: no query, fragment, space or control character");
    route.path = s;
    return true;
  }

  bool load_headers(simdjson::ondemand::value& value, const char* at, FileRoute& route) {
    simdjson::ondemand::array list;
    if (value.get_array().get(list) != simdjson::SUCCESS)
      return fail(at, "\"headers\" must be a list of [name, value] pairs");
    for (auto element : list) {
      simdjson::ondemand::array pair;
      if (element.get_array().get(pair) != simdjson::SUCCESS)
        return fail(at, "\"headers\" must be a list of [name, value] pairs");
      std::string_view parts[2];
      size_t n = 0;
      for (auto part : pair) {
        std::string_view s;
        if (n == 2 || part.get_string().get(s) != simdjson::SUCCESS)
          return fail(at, "each header is a pair of two strings: [name, value]");
        parts[n++] = s;
      }
      if (n != 2) return fail(at, "each header is a pair of two strings: [name, value]");
      std::string_view name = parts[0], content = parts[1];
      if (!is_token(name)) return fail(at, fmt::format("bad header name \"{}\"", name));
      size_t control = find_control(content);
      if (control != std::string_view::npos &&
          (content[control] == '\r' || content[control] == '\n'))
        return fail(at, fmt::format("header \"{}\" has CR or LF in its value", name));
      if (control != std::string_view::npos)
        return fail(at, fmt::format("header \"{}\" has a control character in its value", name));
      if (is_server_header(name))
        return fail(at, fmt::format("header \"{}\" is the server's to send", name));
      // The persona sends Content-Type too, but one given here replaces it.
      if (!equals_nocase(name, "content-type") && sends(persona_head_, name))
        return fail(at, fmt::format("header \"{}\" is one the persona already sends", name));
      for (const auto& [other, _] : route.headers)
        if (equals_nocase(name, other))
          return fail(at, fmt::format("header \"{}\" given twice", name));
      route.headers.emplace_back(name, content);
    }
    return true;
  }

  const std::string& file_;
  simdjson::padded_string& text_;
  simdjson::dom::element dom_;  // the same file, validated whole
  std::string_view default_type_;
  std::string_view persona_head_;
  uint64_t max_delay_us_;
  ShapeLimits shape_limits_;
  std::string error_;
};

}  // namespace

namespace {

struct Method {
  int number;
  std::string_view name;
};
#define HELLO_METHOD(number, name, string) {number, #string},
constexpr Method kMethods[] = {HTTP_METHOD_MAP(HELLO_METHOD)};
#undef HELLO_METHOD

}  // namespace

int http_method_of(std::string_view name) {
  for (const Method& m : kMethods)
    if (m.name == name) return m.number;
  return -1;
}

std::string_view http_method_name(int number) {
  for (const Method& m : kMethods)
    if (m.number == number) return m.name;
  return "-";
}

bool load_routes(const std::string& path, std::string_view default_type,
                 std::string_view persona_head, std::vector<FileRoute>& routes, std::string& error,
                 const ShapeLimits& limits) {
  simdjson::padded_string json;
  errno = 0;
  if (simdjson::padded_string::load(path).get(json) != simdjson::SUCCESS) {
    error = fmt::format("{}: cannot read: {}", path, errno != 0 ? strerror(errno) : "I/O error");
    return false;
  }
  if (json.size() >= 3 && memcmp(json.data(), "\xef\xbb\xbf", 3) == 0) {
    error = fmt::format("{}:1:1: the file starts with a UTF-8 byte order mark; save it without one",
                        path);
    return false;
  }
  // The DOM parser validates the whole text, which On-Demand alone would not.
  simdjson::dom::parser dom;
  simdjson::dom::element tree;
  simdjson::error_code err = dom.parse(json).get(tree);
  if (err != simdjson::SUCCESS) {
    std::string_view text(json.data(), json.size());
    const char* at = locate_syntax_error(json);
    if (at == nullptr) at = locate_by_scanning(text, err);
    error = fmt::format("{}:{}: {}", path, position(text, at), simdjson::error_message(err));
    return false;
  }
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(json).get(doc) != simdjson::SUCCESS) {
    error = fmt::format("{}: cannot parse", path);
    return false;
  }
  Loader loader(path, json, tree, default_type, persona_head, limits);
  routes.clear();
  if (!loader.load(doc, routes)) {
    error = loader.error();
    return false;
  }
  return true;
}

}  // namespace hello
