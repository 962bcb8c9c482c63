#include "server/flag_value.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace hello {

namespace {

// "-12", "+3", "4096": an optional sign and digits only.
bool whole_syntax(const std::string& text) {
  size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

// "more than 0 seconds", "from 1 to 1024", "at most 1 TiB".
std::string bound(const NumberRule& rule, long double value) {
  // A maximum said in words ("1 TiB") carries its unit.
  std::string unit =
      rule.unit.empty() || !rule.max_text.empty() ? "" : fmt::format(" {}", rule.unit);
  std::string max = rule.max_text.empty() ? number_text(rule.max) : std::string(rule.max_text);
  if (rule.above_min) {
    if (value <= rule.min)
      return fmt::format("must be more than {}{}", number_text(rule.min), unit);
    return fmt::format("must be at most {}{}", max, unit);
  }
  return fmt::format("must be from {} to {}{}", number_text(rule.min), max, unit);
}

}  // namespace

FlagValueError::FlagValueError(std::string flag, std::string value, std::string why, bool of_value)
    : CLI::ValidationError(of_value ? fmt::format("{}: '{}' is {}", flag, shown_value(value), why)
                                    : fmt::format("{} {} (got {})", flag, why, shown_value(value))),
      why_(std::move(why)) {}

long double parse_number(const std::string& flag, const std::string& text, const NumberRule& rule) {
  if (text.empty()) throw FlagValueError(flag, text, "not a number", true);
  errno = 0;
  char* end = nullptr;
  long double value = std::strtold(text.c_str(), &end);
  bool number = end == text.c_str() + text.size() && std::isfinite(value) && errno != ERANGE &&
                !std::isspace(static_cast<unsigned char>(text[0]));
  if (!number) throw FlagValueError(flag, text, "not a number", true);
  if (rule.whole && !whole_syntax(text))
    throw FlagValueError(flag, text, "not a whole number", true);
  bool low = rule.above_min ? value <= rule.min : value < rule.min;
  if (low || value > rule.max) throw FlagValueError(flag, text, bound(rule, value), false);
  return value;
}

std::string number_text(long double value) {
  // Whole numbers as integers (2^64 - 1 too); fractions in the shortest
  // form a double reads back.
  if (value >= 0 && value == std::floor(value) && value < 18446744073709551616.0L)
    return std::to_string(static_cast<unsigned long long>(value));
  if (value < 0 && value == std::floor(value) && value > -9.2e18L)
    return std::to_string(static_cast<long long>(value));
  return fmt::format("{}", static_cast<double>(value));
}

CLI::Option* add_choice(CLI::App& app, const std::string& names, std::string& target,
                        std::vector<std::string> choices, const std::string& help) {
  std::string flag = long_flag(names);
  std::string allowed;
  for (size_t i = 0; i < choices.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  auto store = [&target, choices, allowed, flag](const CLI::results_t& results) {
    const std::string& value = results.back();
    for (const std::string& c : choices)
      if (value == c) {
        target = value;
        return true;
      }
    throw FlagValueError(flag, value, "must be " + allowed, false);
  };
  return app.add_option(names, CLI::callback_t(store), help)->default_str(target)->expected(1);
}

std::string shown_value(const std::string& value) {
  constexpr size_t kShown = 12;
  return value.size() <= kShown ? value : value.substr(0, kShown) + "...";
}

std::string long_flag(const std::string& names) {
  size_t at = names.find("--");
  return at == std::string::npos ? names : names.substr(at, names.find(',', at) - at);
}

}  // namespace hello
