// Shaping: what a request may ask of its answer, in fortio's syntax
// (docs/shaping.md). "delay=150us:10,2ms:5&status=503:5&size=1024&close=5"
// parses into a Shape, once at startup for --shape-default and a route's
// "shape", or per request from its query string and X-Hello-Shape header;
// a Dice then decides, per request, what is applied. Parsing and deciding
// allocate nothing: a Shape is fixed arrays and views into the parsed text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace hello {

// A request's shaping text (its query and X-Hello-Shape values, joined by
// '&') may be this long, whatever its protocol; beyond it 400.
inline constexpr size_t kMaxShapeText = 4096;

// Shares are parts per million: 100% is kAllShares.
inline constexpr uint32_t kAllShares = 1000000;

// One parameter's values and the share each is chosen with; the rest of
// the time none is (the default applies). fortio's "VALUE:PERCENT,...".
template <typename T>
struct Mix {
  static constexpr size_t kMaxValues = 16;

  T values[kMaxValues];
  uint32_t below[kMaxValues];  // value i is chosen for a draw under below[i]
  uint8_t count = 0;

  bool given() const { return count > 0; }
  // The value for `draw` (in [0, kAllShares)), or null for the default.
  const T* pick(uint32_t draw) const {
    for (uint8_t i = 0; i < count; ++i)
      if (draw < below[i]) return &values[i];
    return nullptr;
  }
};

struct ShapeHeader {
  std::string_view name;
  std::string_view value;
};

struct Shape {
  static constexpr size_t kMaxHeaders = 16;

  Mix<uint64_t> delay;  // microseconds
  Mix<uint16_t> status;
  Mix<uint64_t> size;  // body bytes
  uint32_t close = 0;  // share of answers after which the connection closes
  uint32_t reset = 0;  // share of requests answered by a TCP reset
  bool has_close = false;
  bool has_reset = false;
  bool has_drip = false;
  uint64_t drip_us = 0;  // the body is spread over this long
  ShapeHeader headers[kMaxHeaders];
  uint8_t header_count = 0;

  // Forgets every parameter (the arrays' contents are left as they are).
  void clear() {
    delay.count = status.count = size.count = header_count = 0;
    close = reset = 0;
    has_close = has_reset = has_drip = false;
    drip_us = 0;
  }
  // True if any parameter was given (a text of unknown ones gives none).
  bool any() const {
    return delay.given() || status.given() || size.given() || has_close || has_reset || has_drip ||
           header_count > 0;
  }
};

// What a parameter is checked against: the caps (--max-delay, --max-size)
// and the headers a `header` may not add because the persona's answers
// have them already (in lower case; see reserved_headers() in
// response_table.h). The headers the server sends itself (kServerHeaders
// in http/field_syntax.h: framing, connection, Date, the shaping decision)
// are refused whatever the list.
struct ShapeLimits {
  uint64_t max_delay_us = 60000000;
  uint64_t max_size = 16 << 20;
  const std::vector<std::string>* reserved = nullptr;
};

// Why a text was refused: one line naming the parameter, without CR or LF.
struct ShapeError {
  char text[192];
  size_t length = 0;

  std::string_view view() const { return {text, length}; }
};

// Parses `text` (a query string, or an X-Hello-Shape value: "k=v&k=v"),
// percent-decoding keys and values in place (so `text` must outlive
// `shape`, whose headers point into it), and adds what it gives to `shape`:
// a parameter given again replaces the earlier one, except `header`, which
// adds. Parameters it does not know are ignored, as fortio ignores them.
// On a bad one returns false with `error` set.
bool parse_shape(char* text, size_t length, const ShapeLimits& limits, Shape& shape,
                 ShapeError& error);

// What is applied to one answer.
struct Decision {
  uint64_t delay_us = 0;
  uint64_t size = 0;
  uint64_t drip_us = 0;
  uint16_t status = 0;   // 0: the route's own
  bool delayed = false;  // `delay` chose a value (else the route's own applies)
  bool sized = false;    // `size` replaces the route's body
  bool close = false;
  bool reset = false;
};

// A worker's seeded source of decisions: the same seed and the same
// requests in the same order give the same decisions.
class Dice {
 public:
  explicit Dice(uint64_t seed) : engine_(seed) {}

  // A draw in [0, kAllShares).
  uint32_t draw() {
    return static_cast<uint32_t>(((engine_() >> 32) * uint64_t{kAllShares}) >> 32);
  }
  // One draw per parameter the shape has, in a fixed order: delay, status,
  // size, close, reset.
  Decision decide(const Shape& shape);

 private:
  std::mt19937_64 engine_;  // specified exactly by the standard: the same everywhere
};

// Writes "delay=2ms status=503 ..." into `out` (kDecisionText bytes): each
// parameter the shape has, with what was applied (`status` and `size` are
// the answer's, whether decided or the route's own); "headers" if the shape
// has headers alone. Returns its length.
inline constexpr size_t kDecisionText = 160;
size_t format_decision(const Shape& shape, const Decision& decision, uint16_t status, uint64_t size,
                       char* out);
// A decision's text as format_decision() wrote it: the header's value,
// kept for the access log.
struct DecisionText {
  char bytes[kDecisionText];
  size_t length = 0;
  std::string_view view() const { return {bytes, length}; }
};

// The body of a `size` answer: byte i is kPatternAlphabet[i % 64].
inline constexpr std::string_view kPatternAlphabet =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";
// The pattern laid out once, kPatternBytes long (a multiple of 64): a body
// of any size is sent as pieces of it, never copied per request.
inline constexpr size_t kPatternBytes = 64 * 1024;
const char* pattern_bytes();

}  // namespace hello
