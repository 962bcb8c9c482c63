// One pass after CLI11 has parsed the command line: CLI11's own envname()
// would report a bad value under the flag's name, which the user never
// typed. Here each value goes through the option's own validators and
// conversion (add_result, run_callback), and an error names the variable.
#include "server/environment.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "server/flag_value.h"
#include "server/options.h"

namespace hello {

namespace {

// 1, true, yes, on → 1; 0, false, no, off → 0; anything else → -1.
int boolean_value(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"1", "true", "yes", "on"})
    if (value == yes) return 1;
  for (const char* no : {"0", "false", "no", "off"})
    if (value == no) return 0;
  return -1;
}

// The error line: "hello-NAME: HELLO_X="value": why".
void env_error(const Options& opt, const std::string& var, const std::string& value,
               std::string_view why) {
  fmt::print(stderr, "{}: {}=\"{}\": {} (from the environment; see --help)\n", opt.name, var,
             shown_value(value), why);
}

// The option's results from the variable's text; false if a boolean is none.
bool add_results(CLI::Option& o, const std::string& value, bool& set) {
  const std::string& name = o.get_lnames()[0];
  bool flag = o.get_expected_max() == 0;
  if (flag || name == "access-log") {
    int b = boolean_value(value);
    if (name == "access-log" && (b == -1 || value == "-")) {
      o.add_result(value == "-" ? "" : value);  // a path, or stdout
      set = true;
      return true;
    }
    if (b == -1) return false;
    if (b == 1) o.add_result(flag ? "true" : "");
    set = b == 1;
    return true;
  }
  if (o.get_expected_max() > 1) {  // repeatable: a comma-separated list
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = std::min(value.find(',', start), value.size());
      if (comma > start) o.add_result(value.substr(start, comma - start));
      start = comma + 1;
    }
  } else {
    o.add_result(value);
  }
  set = true;
  return true;
}

// Whether an option `o` excludes was given: on the command line (then the
// variable gives way) or by the environment too (then `other` names it).
bool excluded(const CLI::Option& o, const std::vector<CLI::Option*>& from_env,
              const CLI::Option*& other) {
  for (const CLI::Option* x : o.get_excludes()) {
    if (x->count() == 0) continue;
    other = std::find(from_env.begin(), from_env.end(), x) != from_env.end() ? x : nullptr;
    return true;
  }
  return false;
}

}  // namespace

bool has_variable(const std::string& long_name) {
  return long_name != "help" && long_name != "version" && long_name != "probe";
}

std::string env_name(std::string_view long_name) {
  std::string var = "HELLO_";
  for (char c : long_name)
    var += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

void describe_environment(CLI::App& app) {
  app.footer(
      "Environment: each option's variable is named under it (Env:); an option given "
      "beats its variable, a variable beats the default, an empty one counts as unset. "
      "A flag's variable takes 1, true, yes or on (or 0, false, no, off); HELLO_STALL a "
      "comma-separated list; HELLO_ACCESS_LOG a path, or - for stdout. A bad value is one "
      "line naming the variable, and exit status 2.");
}

bool apply_environment(CLI::App& app, Options& opt) {
  std::vector<CLI::Option*> from_env;
  for (CLI::Option* o : app.get_options()) {
    if (o->get_lnames().empty() || o->count() > 0) continue;
    const std::string& name = o->get_lnames()[0];
    if (!has_variable(name)) continue;
    std::string var = env_name(name);
    const char* text = std::getenv(var.c_str());
    if ((text == nullptr || *text == '\0') && name == "port") {
      var = "PORT";
      text = std::getenv("PORT");
    }
    if (text == nullptr || *text == '\0') continue;
    std::string value = text;
    if (o->get_expected_max() == 0 && boolean_value(value) == 0) continue;  // the default
    const CLI::Option* other = nullptr;
    if (excluded(*o, from_env, other)) {
      if (other == nullptr) continue;  // the command line's flag wins
      env_error(opt, var, value,
                fmt::format("cannot be set with {}", env_name(other->get_lnames()[0])));
      return false;
    }
    bool set = false;
    try {
      if (!add_results(*o, value, set)) {
        env_error(opt, var, value, "1, true, yes or on, or 0, false, no or off expected");
        return false;
      }
      if (set) o->run_callback();
    } catch (const FlagValueError& e) {
      env_error(opt, var, value, e.why());
      return false;
    } catch (const CLI::Error& e) {
      // CLI11's text starts with the flag's name: the variable replaces it.
      std::string why = e.what();
      std::string prefix = "--" + name + ": ";
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
      env_error(opt, var, value, why);
      return false;
    }
    if (!set) continue;
    from_env.push_back(o);
    opt.from_environment.push_back({"--" + name, var});
  }
  return true;
}

std::string given_as(const Options& opt, std::string_view flag) {
  for (const auto& [f, var] : opt.from_environment)
    if (f == flag) return var;
  return std::string(flag);
}

}  // namespace hello
