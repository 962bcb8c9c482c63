#include "http2/h2_answers.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "base/check.h"

namespace hello {

namespace {

bool connection_specific(std::string_view lower) {
  for (std::string_view n :
       {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
    if (lower == n) return true;
  return false;
}

// The body of a chunked HTTP/1.1 message: the chunks' data, in order.
std::string dechunk(std::string_view in) {
  std::string out;
  while (!in.empty()) {
    size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) break;
    size_t n = std::strtoul(std::string(in.substr(0, eol)).c_str(), nullptr, 16);
    if (n == 0) break;
    out.append(in.substr(eol + 2, n));
    in.remove_prefix(std::min(in.size(), eol + 2 + n + 2));
  }
  return out;
}

nghttp2_nv field(const std::string& name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

}  // namespace

// Calls `field(name, value)` for each header line of an HTTP/1.1 head
// (past its status line, to its blank line), the value without leading
// spaces; returns the position past the last line read.
template <typename Field>
size_t each_field(std::string_view head, Field field) {
  size_t at = head.find("\r\n") + 2;  // past the status line
  while (at < head.size()) {
    size_t eol = head.find("\r\n", at);
    if (eol == at || eol == std::string_view::npos) break;
    size_t line = at;
    at = eol + 2;
    size_t colon = head.find(':', line);
    if (colon == std::string_view::npos || colon > eol) continue;
    size_t value = colon + 1;
    while (value < eol && (head[value] == ' ' || head[value] == '\t')) ++value;
    field(line, colon - line, value, eol - value);
  }
  return at;
}

H2Answer H2Answers::convert(const PreparedResponse& r) {
  H2Answer a;
  if (r.length_offset >= 0 || r.extra_offset >= 0) return a;  // made per request
  std::string_view bytes = r.bytes;
  std::string_view head = bytes.substr(0, r.head_length);
  a.ready = true;
  a.status = r.status;
  a.status_text = std::to_string(r.status);
  bool chunked = false;
  each_field(head, [&](size_t name_at, size_t name_len, size_t value_at, size_t value_len) {
    std::string name(head.substr(name_at, name_len));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = head.substr(value_at, value_len);
    if (name == "transfer-encoding" && value.find("chunked") != std::string_view::npos)
      chunked = true;
    if (connection_specific(name)) return;
    a.names.push_back(std::move(name));
    a.values.push_back(value);
  });
  std::string_view body = bytes.substr(std::min<size_t>(r.head_length, bytes.size()));
  a.body = chunked ? dechunk(body) : std::string(body);
  return a;
}

size_t h2_fields_of_head(std::string& head, nghttp2_nv* fields, size_t max) {
  static const std::string kStatus = ":status";
  HELLO_CHECK(head.size() > 12 && max > 0);
  fields[0] = field(kStatus, std::string_view(head).substr(9, 3));  // "HTTP/1.1 200 ..."
  size_t n = 1;
  char* bytes = head.data();
  each_field(head, [&](size_t name_at, size_t name_len, size_t value_at, size_t value_len) {
    for (size_t i = name_at; i < name_at + name_len; ++i)
      bytes[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(bytes[i])));
    if (connection_specific({bytes + name_at, name_len})) return;
    HELLO_CHECK(n < max);
    fields[n++] = {reinterpret_cast<uint8_t*>(bytes + name_at),
                   reinterpret_cast<uint8_t*>(bytes + value_at), name_len, value_len,
                   NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
  });
  return n;
}

void H2Answer::bind() {
  static const std::string kStatus = ":status";
  fields.clear();
  if (!ready) return;
  fields.reserve(names.size() + 1);
  fields.push_back(field(kStatus, status_text));
  for (size_t i = 0; i < names.size(); ++i) fields.push_back(field(names[i], values[i]));
}

H2Answers::H2Answers(const ResponseTable& table) {
  size_t n = table.route_count();
  routes_.resize(n);
  not_allowed_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int r = static_cast<int>(i);
    if (!table.echo(r)) routes_[i] = convert(table.route(r, Variant::keep_alive_11));
    not_allowed_[i] = convert(table.not_allowed(r, Variant::keep_alive_11));
  }
  not_found_ = convert(table.error(404, Variant::keep_alive_11));
  too_large_ = convert(table.error(413, Variant::keep_alive_11));
  for (H2Answer& a : routes_) a.bind();
  for (H2Answer& a : not_allowed_) a.bind();
  not_found_.bind();
  too_large_.bind();
}

}  // namespace hello
