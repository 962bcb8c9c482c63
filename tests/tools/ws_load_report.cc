// ws_load's summary: see ws_load_report.h.
#include "ws_load_report.h"

#include <cerrno>
#include <cstring>
#include <string_view>

namespace ws_load {
namespace {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

const char* boolean(bool b) {
  return b ? "true" : "false";
}

}  // namespace

double tool_busy(const Result& r) {
  return r.seconds > 0 ? r.tool_cpu_s / r.seconds : 0;
}

void print_summary(const Options& opt, const Result& r) {
  fmt::print(
      "ws_load: {}{}{}, {} connection{} x {} in flight, {} B {}{}: {} messages in {:.3f} s, "
      "{:.1f}/s; errors {}, handshake failures {}; tool cpu {:.3f} s, busy {:.2f}\n",
      opt.tls ? "wss://" : "ws://", opt.host_header, opt.path, opt.connections,
      opt.connections == 1 ? "" : "s", opt.in_flight, opt.size, opt.binary ? "binary" : "text",
      opt.deflate ? fmt::format(", deflate on {}", r.deflated) : std::string(), r.messages,
      r.seconds, r.rate, r.errors, r.handshake_failures, r.tool_cpu_s, tool_busy(r));
}

void print_failures(const Result& r) {
  for (const auto& [why, count] : r.reasons)
    fmt::print(stderr, "ws_load: {} connection{}: {}\n", count, count == 1 ? "" : "s", why);
}

std::string json(const Options& opt, const Result& r) {
  std::string failures;
  for (const auto& [why, count] : r.reasons)
    failures += fmt::format("{}{}: {}", failures.empty() ? "" : ", ", json_string(why), count);
  return fmt::format(
      "{{\"connections\": {}, \"in_flight\": {}, \"size\": {}, \"binary\": {}, \"tls\": {}, "
      "\"seconds\": {:.6f}, \"messages\": {}, \"rate\": {:.1f}, \"errors\": {}, "
      "\"handshake_failures\": {}, \"tool_cpu_s\": {:.6f}, \"tool_busy\": {:.4f}, "
      "\"deflate\": {}, \"deflated\": {}, \"failures\": {{{}}}}}\n",
      opt.connections, opt.in_flight, opt.size, boolean(opt.binary), boolean(opt.tls), r.seconds,
      r.messages, r.rate, r.errors, r.handshake_failures, r.tool_cpu_s, tool_busy(r),
      boolean(opt.deflate), r.deflated, failures);
}

bool write_json(std::FILE* file, const std::string& path, const std::string& text) {
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok) fmt::print(stderr, "ws_load: --json: cannot write {}: {}\n", path, strerror(errno));
  return ok;
}

}  // namespace ws_load
