// The values of the flags that take a number or one of a few words, parsed
// by us rather than by CLI11, so that a bad one is said in plain words:
// "--port: 'abc' is not a number", "--header-timeout must be more than 0
// seconds (got 0)", and the same under the variable's name when the
// environment gave it (server/environment.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hello {

// A bad value: thrown by a flag's conversion while CLI11 parses the command
// line or apply_environment sets a variable's value; a CLI11 error, so the
// parse stops there.
class FlagValueError : public CLI::ValidationError {
 public:
  // `why` says what is allowed ("must be from 1 to 1024"), or, with
  // `of_value`, what the value is ("not a number").
  FlagValueError(std::string flag, std::string value, std::string why, bool of_value);

  // "--port: 'abc' is not a number", "--workers must be from 1 to 1024 (got 0)".
  std::string for_flag() const { return what(); }
  // For "HELLO_PORT=\"abc\": ...": "not a number", "must be from 1 to 1024".
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

// The allowed range of a number flag. `unit` is said after the bounds
// ("seconds", "bytes") or is empty; `above_min`: the minimum itself is
// not allowed (more than 0 seconds).
struct NumberRule {
  long double min = 0;
  long double max = 0;
  std::string_view unit;
  bool above_min = false;
  bool whole = true;          // an integer, no fraction
  std::string_view max_text;  // how to say `max` where its digits would be many ("1 TiB")
};

// A whole number from `min` to `max`.
constexpr NumberRule whole(long double min, long double max, std::string_view unit = {},
                           std::string_view max_text = {}) {
  return NumberRule{min, max, unit, false, true, max_text};
}

// Seconds, fractions allowed: more than `min` (`above_min`), or from it.
constexpr NumberRule seconds(long double min, long double max, bool above_min) {
  return NumberRule{min, max, "seconds", above_min, false, {}};
}

// `text` as a number within `rule`, or FlagValueError naming `flag`. Long
// double: a 64-bit integer fits it exactly.
long double parse_number(const std::string& flag, const std::string& text, const NumberRule& rule);

// A default as --help shows it: 10, 0.5, 5001.
std::string number_text(long double value);

// Adds the option `names` ("-p,--port") that stores a number within `rule`
// into `target` (an integer type or double), its default the target's value.
template <class T>
CLI::Option* add_number(CLI::App& app, const char* group, const std::string& names, T& target,
                        NumberRule rule, const std::string& help);

// Adds the option that stores one of `choices` into `target`.
CLI::Option* add_choice(CLI::App& app, const std::string& names, std::string& target,
                        std::vector<std::string> choices, const std::string& help);

// A value as an error line repeats it: cut after 12 characters, so that no
// line carries a run of more digits than a reader takes in.
std::string shown_value(const std::string& value);

// The first long name of `names`: "-p,--port" → "--port".
std::string long_flag(const std::string& names);

template <class T>
CLI::Option* add_number(CLI::App& app, const char* group, const std::string& names, T& target,
                        NumberRule rule, const std::string& help) {
  std::string flag = long_flag(names);
  auto store = [&target, rule, flag](const CLI::results_t& results) {
    target = static_cast<T>(parse_number(flag, results.back(), rule));
    return true;
  };
  return app.add_option(names, CLI::callback_t(store), help)
      ->default_str(number_text(target))
      ->expected(1)
      ->type_name(rule.unit == "bytes"     ? "BYTES"
                  : rule.unit == "seconds" ? "SECONDS"
                                           : "N")
      ->group(group);
}

}  // namespace hello
