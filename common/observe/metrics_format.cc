#include "observe/metrics_format.h"

#include <optional>

#include "http/field_syntax.h"

namespace hello {

namespace {

constexpr bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// The part of `rest` before the first `sep` outside a quoted-string (RFC
// 9110 section 5.6.4, backslash escapes included), which it removes from
// `rest` with the separator.
std::string_view next_part(std::string_view& rest, char sep) {
  bool quoted = false;
  size_t i = 0;
  for (; i < rest.size(); ++i) {
    char c = rest[i];
    if (quoted && c == '\\')
      ++i;
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == sep)
      break;
  }
  std::string_view part = rest.substr(0, i);
  rest.remove_prefix(i < rest.size() ? i + 1 : rest.size());
  return part;
}

// A qvalue in thousandths: "0" ["." 0*3DIGIT] or "1" ["." 0*3"0"].
std::optional<uint16_t> parse_qvalue(std::string_view s) {
  if (s.empty() || (s[0] != '0' && s[0] != '1')) return std::nullopt;
  uint16_t q = s[0] == '1' ? 1000 : 0;
  if (s.size() == 1) return q;
  if (s[1] != '.' || s.size() > 5) return std::nullopt;
  uint16_t scale = 100;
  for (char c : s.substr(2)) {
    if (c < '0' || c > '9' || (q == 1000 && c != '0')) return std::nullopt;
    q = static_cast<uint16_t>(q + (c - '0') * scale);
    scale /= 10;
  }
  return q;
}

// One element of an Accept header: a media range, its version parameter
// and its weight.
struct MediaRange {
  std::string_view type;
  std::string_view subtype;
  std::optional<std::string_view> version;
  uint16_t q = 1000;
};

// Parses `element`, one media range with its parameters; false if it is
// not one.
bool parse_range(std::string_view element, MediaRange& r) {
  std::string_view rest = element;
  std::string_view media = trim(next_part(rest, ';'));
  size_t slash = media.find('/');
  if (slash == std::string_view::npos) return false;
  r.type = media.substr(0, slash);
  r.subtype = media.substr(slash + 1);
  if (!is_token(r.type) || !is_token(r.subtype) || (r.type == "*" && r.subtype != "*"))
    return false;
  while (!rest.empty()) {
    std::string_view param = trim(next_part(rest, ';'));
    if (param.empty()) continue;  // "parameters = *( OWS ";" OWS [ parameter ] )"
    size_t eq = param.find('=');
    if (eq == std::string_view::npos || !is_token(param.substr(0, eq))) return false;
    std::string_view name = param.substr(0, eq);
    std::string_view value = param.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (equals_nocase(name, "q")) {
      std::optional<uint16_t> q = parse_qvalue(value);
      if (!q) return false;
      r.q = *q;
      return true;  // what follows the weight are extensions, not the type's parameters
    }
    if (equals_nocase(name, "version")) r.version = value;
  }
  return true;
}

// How specifically `r` names type/subtype in `version`: 3 with that
// version, 2 with none, 1 as type/*, 0 as */*; -1 if it does not.
int specificity(const MediaRange& r, std::string_view type, std::string_view subtype,
                std::string_view version) {
  if (r.type == "*") return 0;
  if (!equals_nocase(r.type, type)) return -1;
  if (r.subtype == "*") return 1;
  if (!equals_nocase(r.subtype, subtype)) return -1;
  if (!r.version) return 2;
  return *r.version == version ? 3 : -1;
}

// The weight of the most specific range seen so far.
struct Best {
  int specificity = -1;
  uint16_t q = 0;
  void offer(int s, uint16_t range_q) {
    if (s < 0) return;
    if (s > specificity || (s == specificity && range_q > q)) q = range_q;
    if (s > specificity) specificity = s;
  }
};

}  // namespace

AcceptWeights accept_weights(std::string_view accept) {
  Best openmetrics, text;
  while (!accept.empty()) {
    std::string_view element = trim(next_part(accept, ','));
    MediaRange r;
    if (element.empty() || !parse_range(element, r)) continue;
    int om = specificity(r, "application", "openmetrics-text", "1.0.0");
    if (om >= 2) openmetrics.offer(om, r.q);
    text.offer(specificity(r, "text", "plain", "0.0.4"), r.q);
  }
  return {openmetrics.q, text.q};
}

MetricsFormat negotiate_metrics_format(std::string_view accept) {
  AcceptWeights w = accept_weights(accept);
  return w.openmetrics > 0 && w.openmetrics >= w.prometheus_text ? MetricsFormat::openmetrics
                                                                 : MetricsFormat::prometheus_text;
}

}  // namespace hello
