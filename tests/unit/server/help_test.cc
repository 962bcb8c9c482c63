// --help (server/help.h): every option of the parser in its section with
// its default and its variable, no line over 80 columns, none of CLI11's
// type notes; and a number flag's error in plain words (server/flag_value.h).
#include "server/help.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "server/environment.h"
#include "server/flag_value.h"
#include "server/options.h"
#include "test_persona.h"

namespace hello {
namespace {

using test::kTestPersona;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  return lines;
}

// The lines of `o`'s block in --help: its names line and the text under it.
std::string block_of(const std::string& help, const CLI::Option& o) {
  std::string names = "--" + o.get_lnames()[0];
  std::vector<std::string> lines = lines_of(help);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    size_t at = l.find(names);
    if (l.rfind("  -", 0) != 0 || at == std::string::npos) continue;
    char after = at + names.size() < l.size() ? l[at + names.size()] : '\0';
    if (after != '\0' && after != ' ' && after != '[') continue;  // --tls in --tls-cert
    std::string block = l + "\n";
    for (size_t j = i + 1; j < lines.size() && lines[j].rfind("        ", 0) == 0; ++j)
      block += lines[j] + "\n";
    return block;
  }
  return "";
}

TEST(Help, NoLineIsWiderThan80Columns) {
  Options opt;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  std::string help = app->help();
  for (const std::string& line : lines_of(help)) EXPECT_LE(line.size(), kHelpWidth) << line;
}

TEST(Help, TheOptionsAreInTheirSections) {
  Options opt;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  std::string help = app->help();
  std::vector<std::string> lines = lines_of(help);
  size_t previous = 0;
  for (const char* section :
       {"Listening and workers:", "Logs, stats and admin:", "Limits and timeouts:",
        "Routes and shaping:", "TLS:", "HTTP/2:", "Probe:", "Help:"}) {
    auto it = std::find(lines.begin(), lines.end(), section);
    ASSERT_NE(it, lines.end()) << section << " missing:\n" << help;
    size_t at = static_cast<size_t>(it - lines.begin());
    EXPECT_GT(at, previous) << section << " out of order";
    previous = at;
  }
  EXPECT_NE(block_of(help, *app->get_option("--h2-max-streams")), "");
  size_t h2 = help.find("\nHTTP/2:\n");
  EXPECT_GT(help.find("  --h2-max-streams N\n"), h2) << "in the HTTP/2 section";
}

TEST(Help, EveryOptionOfTheParserIsThereWithItsDefaultAndVariable) {
  Options opt;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  std::string help = app->help();
  int options = 0;
  for (const CLI::Option* o : app->get_options()) {
    const std::string& name = o->get_lnames()[0];
    std::string block = block_of(help, *o);
    ASSERT_NE(block, "") << "--" << name << " is not in --help:\n" << help;
    ++options;
    if (name == "help" || name == "version") continue;
    std::string shown = o->get_default_str();
    EXPECT_NE(block.find("Default: "), std::string::npos) << block;
    if (!shown.empty()) {
      EXPECT_NE(block.find("Default: " + shown + "."), std::string::npos) << shown << "\n" << block;
    }
    if (has_variable(name)) {
      EXPECT_NE(block.find("Env: " + env_name(name)), std::string::npos) << block;
    }
  }
  EXPECT_GT(options, 40);
  EXPECT_NE(
      help.find("Default: " + std::to_string(kTestPersona.port) + ".  Env: HELLO_PORT or PORT."),
      std::string::npos)
      << "the persona's port, and PORT";
}

TEST(Help, NoneOfCli11sTypeNotes) {
  Options opt;
  std::unique_ptr<CLI::App> app = make_app(kTestPersona, opt);
  std::string help = app->help();
  for (const char* noise : {"\\bINT\\b", "\\bUINT\\b", "\\bFLOAT\\b", "\\bTEXT\\b", "Excludes",
                            " in \\[", "\\[\\$HELLO"})
    EXPECT_FALSE(std::regex_search(help, std::regex(noise))) << noise << " in:\n" << help;
}

TEST(Help, WrapBreaksBetweenWordsAtTheWidth) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "word ";
  std::string wrapped = wrap(text, 8);
  for (const std::string& line : lines_of(wrapped)) {
    EXPECT_LE(line.size(), kHelpWidth) << line;
    EXPECT_EQ(line.rfind("        word", 0), 0u) << line;
  }
  EXPECT_EQ(lines_of(wrapped).size(), 3u);  // 9 words of 5 columns a line after the indent
}

TEST(FlagValue, ANumberOutOfRangeSaysWhatIsAllowedAndWhatWasGiven) {
  EXPECT_EQ(parse_number("--workers", "8", whole(1, 1024)), 8);
  EXPECT_EQ(parse_number("--header-timeout", "0.25", seconds(0, 86400, true)), 0.25L);
  try {
    parse_number("--header-timeout", "0", seconds(0, 86400, true));
    FAIL() << "0 taken";
  } catch (const FlagValueError& e) {
    EXPECT_STREQ(e.what(), "--header-timeout must be more than 0 seconds (got 0)");
    EXPECT_EQ(e.why(), "must be more than 0 seconds");
  }
  try {
    parse_number("--port", "abc", whole(0, 65535));
    FAIL() << "abc taken";
  } catch (const FlagValueError& e) {
    EXPECT_STREQ(e.what(), "--port: 'abc' is not a number");
  }
  try {
    parse_number("--seed", "18446744073709551616",
                 whole(0, 18446744073709551615.0L, "", "2^64 - 1"));
    FAIL() << "2^64 taken";
  } catch (const FlagValueError& e) {
    EXPECT_STREQ(e.what(), "--seed must be from 0 to 2^64 - 1 (got 184467440737...)");
  }
  EXPECT_EQ(parse_number("--seed", "18446744073709551615",
                         whole(0, 18446744073709551615.0L, "", "2^64 - 1")),
            18446744073709551615.0L)
      << "2^64 - 1 exactly";
  for (const char* bad : {"nan", "inf", "1e400", "", " 1", "1 ", "0x"})
    EXPECT_THROW(parse_number("--send-timeout", bad, seconds(0, 86400, true)), FlagValueError)
        << "'" << bad << "'";
}

}  // namespace
}  // namespace hello
