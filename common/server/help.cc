#include "server/help.h"

#include <fmt/format.h>

#include "server/environment.h"

namespace hello {

namespace {

// The column an option's text starts at, under its names.
constexpr size_t kTextIndent = 8;

// "-p, --port PORT", "--access-log[=PATH]", "--json".
std::string names_of(const CLI::Option& o) {
  std::string names;
  for (const std::string& s : o.get_snames()) names += "-" + s + ", ";
  names += "--" + o.get_lnames()[0];
  if (o.get_expected_max() == 0) return names;
  std::string type = o.get_type_name();
  return names + (type.rfind("[=", 0) == 0 ? type : " " + type);
}

// The sentence ends with a full stop unless it ends in one already.
std::string sentence(std::string text) {
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

}  // namespace

std::string wrap(const std::string& text, size_t indent) {
  std::string out, line(indent, ' ');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (line.size() > indent && line.size() + 1 + word.size() > kHelpWidth) {
      out += line + "\n";
      line.assign(indent, ' ');
    }
    line += (line.size() > indent ? " " : "") + word;
  }
  if (line.size() > indent) out += line + "\n";
  return out;
}

std::string HelpFormatter::default_of(const CLI::Option& o) const {
  const std::string& name = o.get_lnames()[0];
  if (name == "help" || name == "version") return "";
  if (auto it = defaults_.find("--" + name); it != defaults_.end()) return it->second;
  if (!o.get_default_str().empty()) return o.get_default_str();
  return o.get_expected_max() == 0 ? "off" : "none";
}

std::string HelpFormatter::option_block(const CLI::Option& o) const {
  std::string out = "  " + names_of(o) + "\n";
  out += wrap(sentence(o.get_description()), kTextIndent);
  std::string shown = default_of(o);
  if (shown.empty()) return out;
  std::string indent(kTextIndent, ' ');
  out += fmt::format("{}Default: {}.", indent, shown);
  if (!has_variable(o.get_lnames()[0])) return out + "\n";
  std::string var = env_name(o.get_lnames()[0]);
  std::string env = fmt::format("Env: {}{}.", var, var == "HELLO_PORT" ? " or PORT" : "");
  // Both on one line where they fit, as h2load does; else one under the other.
  size_t line = out.size() - out.rfind('\n') - 1;
  return out + (line + 2 + env.size() <= kHelpWidth ? "  " : "\n" + indent) + env + "\n";
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const {
  // The description's lines are wrapped each on its own (the persona's
  // line, then its WebSocket path where it has one).
  std::string out;
  const std::string description = app->get_description();
  std::string_view about = description;
  while (!about.empty()) {
    size_t eol = about.find('\n');
    out += wrap(std::string(about.substr(0, eol)), 0);
    about.remove_prefix(eol == std::string_view::npos ? about.size() : eol + 1);
  }
  out += fmt::format("\nUsage: {} [OPTIONS]\n", app->get_name());
  // The sections in the order their first option was added; help and
  // version, added first by CLI11, last.
  const std::string last = app->get_help_ptr()->get_group();
  std::vector<std::string> groups = app->get_groups();
  std::erase(groups, last);
  groups.push_back(last);
  for (const std::string& group : groups) {
    out += "\n" + group + ":\n";
    for (const CLI::Option* o : app->get_options())
      if (o->get_group() == group) out += option_block(*o);
  }
  if (!app->get_footer().empty()) out += "\n" + wrap(app->get_footer(), 0);
  return out;
}

}  // namespace hello
