#include "http2/h2_answer_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "base/check.h"
#include "http/field_syntax.h"
#include "http2/h2_stream.h"

namespace hello {

namespace {

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

nghttp2_nv field(std::string_view name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

// Calls `field(name_at, name_len, value_at, value_len)` for each header
// line of an HTTP/1.1 head (past its status line, to its blank line), the
// value without leading spaces. Only at startup: an answer is never
// turned from an HTTP/1 head into fields per request.
template <typename Field>
void each_field(std::string_view head, Field field) {
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
}

// nghttp2's HPACK encoder with a table of 0 bytes: it indexes nothing.
// The first block it makes says so (a size update to 0, once); it is made
// and dropped here, so every block after stands alone. One a thread, on
// the thread's recycled memory.
class Deflater {
 public:
  Deflater() {
    HELLO_CHECK(nghttp2_hd_deflate_new2(&d_, 0, h2_memory()) == 0);
    uint8_t first[4];
    HELLO_CHECK(nghttp2_hd_deflate_hd(d_, first, sizeof first, nullptr, 0) == 1 &&
                first[0] == 0x20);
  }
  ~Deflater() { nghttp2_hd_deflate_del(d_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  nghttp2_hd_deflater* get() const { return d_; }

 private:
  nghttp2_hd_deflater* d_ = nullptr;
};

// The Date as a literal without indexing of the static table's name 33
// (RFC 7541 appendix A), its value raw (no Huffman) so its bytes can be
// replaced in place: 0x0f 0x12 is index 33 in a 4-bit prefix, 0x1d the
// length 29.
constexpr std::string_view kDateLiteral = "\x0f\x12\x1d";
constexpr size_t kDateLength = 29;

size_t append_number(std::string& out, uint64_t n) {
  char digits[20];
  size_t length =
      static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, n).ptr - digits);
  out.append(digits, length);
  return length;
}

}  // namespace

H2Answer H2Answers::convert(const PreparedResponse& r) {
  H2Answer a;
  std::string_view bytes = r.bytes;
  std::string_view head = bytes.substr(0, r.head_length);
  bool templated = r.length_offset >= 0;
  a.ready = !templated;
  a.status = r.status;
  a.status_text = std::to_string(r.status);
  if (r.extra_offset >= 0) a.extra_at = 0;
  bool chunked = false;
  each_field(head, [&](size_t name_at, size_t name_len, size_t value_at, size_t value_len) {
    std::string name(head.substr(name_at, name_len));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = head.substr(value_at, value_len);
    if (name == "transfer-encoding" && value.find("chunked") != std::string_view::npos)
      chunked = true;
    if (is_connection_specific(name)) return;
    // A template's length is made per request where its value would be.
    if (templated && value_at == static_cast<size_t>(r.length_offset))
      a.length_field = static_cast<int>(a.names.size());
    a.names.push_back(std::move(name));
    a.values.push_back(value);
    // A shape's fields go where the persona puts extra lines.
    if (r.extra_offset >= 0 && name_at < static_cast<size_t>(r.extra_offset))
      a.extra_at = a.names.size();
  });
  HELLO_CHECK(!templated || a.length_field >= 0);
  std::string_view body = bytes.substr(std::min<size_t>(r.head_length, bytes.size()));
  a.body = chunked ? dechunk(body) : std::string(body);
  return a;
}

size_t make_fields(const H2Answer& t, const H2Made& made, std::string& bytes, nghttp2_nv* fields,
                   size_t max) {
  static const std::string kStatus = ":status";
  static const std::string kDecision = "x-hello-shape-decision";
  HELLO_CHECK(t.length_field >= 0 && (made.shape == nullptr || t.extra_at <= t.names.size()));
  // The bytes first, then the fields that point into them: once written,
  // `bytes` no longer moves.
  bytes.clear();
  size_t status_length = append_number(bytes, made.status);
  size_t length_length = append_number(bytes, made.length);
  size_t shape_at = bytes.size();
  if (made.shape != nullptr) {
    for (uint8_t i = 0; i < made.shape->header_count; ++i) {
      const ShapeHeader& h = made.shape->headers[i];
      for (char c : h.name)
        bytes.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      bytes.append(h.value);
    }
    bytes.append(made.decision);
  }
  const char* b = bytes.data();
  size_t n = 0;
  auto put = [&](std::string_view name, std::string_view value) {
    HELLO_CHECK(n < max);
    fields[n++] = field(name, value);
  };
  auto put_shape = [&] {
    if (made.shape == nullptr) return;
    const char* at = b + shape_at;
    for (uint8_t i = 0; i < made.shape->header_count; ++i) {
      const ShapeHeader& h = made.shape->headers[i];
      put({at, h.name.size()}, {at + h.name.size(), h.value.size()});
      at += h.name.size() + h.value.size();
    }
    put(kDecision, {at, made.decision.size()});
  };
  put(kStatus, {b, status_length});
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (i == t.extra_at) put_shape();
    if (static_cast<int>(i) != t.length_field)
      put(t.names[i], t.values[i]);
    else if (made.has_length)
      put(t.names[i], {b + status_length, length_length});
  }
  if (t.extra_at == t.names.size()) put_shape();
  return n;
}

void encode_fields(const nghttp2_nv* fields, size_t n, std::string& block) {
  thread_local Deflater deflater;
  size_t bound = nghttp2_hd_deflate_bound(deflater.get(), fields, n);
  block.resize(bound);
  ssize_t used = nghttp2_hd_deflate_hd(deflater.get(), reinterpret_cast<uint8_t*>(block.data()),
                                       bound, fields, n);
  HELLO_CHECK(used >= 0);
  block.resize(static_cast<size_t>(used));
}

void H2Answer::bind() {
  static const std::string kStatus = ":status";
  fields.clear();
  block.clear();
  date_at = -1;
  if (!ready) return;
  fields.reserve(names.size() + 1);
  fields.push_back(field(kStatus, status_text));
  for (size_t i = 0; i < names.size(); ++i) fields.push_back(field(names[i], values[i]));
  std::string piece;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0 && names[i - 1] == "date" && values[i - 1].size() == kDateLength) {
      block.append(kDateLiteral);
      date_at = static_cast<int>(block.size());
      date = values[i - 1];
      block.append(date);
      continue;
    }
    encode_fields(&fields[i], 1, piece);
    block.append(piece);
  }
}

std::string_view H2Answer::current_block() const {
  if (date_at >= 0) memcpy(block.data() + date_at, date.data(), kDateLength);
  return block;
}

H2Answers::H2Answers(const ResponseTable& table) {
  constexpr Variant kKeepAlive = Variant::keep_alive_11;
  size_t n = table.route_count();
  routes_.resize(n);
  not_allowed_.resize(n);
  if (table.shaping()) shaped_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int r = static_cast<int>(i);
    routes_[i] = convert(table.route(r, kKeepAlive));  // an echo route's: a template
    not_allowed_[i] = convert(table.not_allowed(r, kKeepAlive));
    if (table.shaping()) shaped_[i] = convert(table.shaped(r, kKeepAlive));
  }
  not_found_ = convert(table.error(404, kKeepAlive));
  too_large_ = convert(table.error(413, kKeepAlive));
  bad_request_ = convert(table.bad_request(kKeepAlive));
  for (H2Answer& a : routes_) a.bind();
  for (H2Answer& a : not_allowed_) a.bind();
  not_found_.bind();
  too_large_.bind();
}

}  // namespace hello
