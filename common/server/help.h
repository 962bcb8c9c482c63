// --help as h2load and curl write theirs: the options in sections, each
// option's text wrapped to 80 columns under it, then one line with its
// default and its variable ("Default: 5001.  Env: HELLO_PORT or PORT.").
// A CLI11 formatter, so that --help and every binary's parse stay CLI11's.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

namespace hello {

// The width --help is wrapped to, the terminal's classic one.
inline constexpr size_t kHelpWidth = 80;

class HelpFormatter final : public CLI::Formatter {
 public:
  // The default --help states for `flag` ("--seed": "random") where the
  // option holds none of its own (a path, a list, a mode that is off).
  void default_text(const std::string& flag, std::string text) {
    defaults_[flag] = std::move(text);
  }

  // The default --help states for `o`: its own value, the text given for
  // it, "off" for a flag, else "none"; empty for --help and --version.
  std::string default_of(const CLI::Option& o) const;

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;

 private:
  std::string option_block(const CLI::Option& o) const;

  std::map<std::string, std::string> defaults_;
};

// `text` wrapped to kHelpWidth, each line starting with `indent` spaces.
std::string wrap(const std::string& text, size_t indent);

}  // namespace hello
