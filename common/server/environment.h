// Configuration from the environment (docs/containers.md): every long flag
// --foo-bar also reads HELLO_FOO_BAR, and PORT stands for --port where
// HELLO_PORT is not set, as container platforms set it. A flag given on the
// command line beats its variable, a variable beats the default; an empty
// variable counts as unset.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace hello {

struct Options;

// The variable of a long flag's name: "shape-default" → "HELLO_SHAPE_DEFAULT".
std::string env_name(std::string_view long_name);

// Whether the flag `long_name` ("port") has a variable: all but help,
// version and probe, which are modes, not settings.
bool has_variable(const std::string& long_name);

// The footer of --help on the variables: precedence, booleans and lists.
void describe_environment(CLI::App& app);

// Gives each flag the command line left out its variable's value, checked
// as the flag's would be. A boolean takes 1, true, yes or on, or 0, false,
// no or off; --stall's variable a comma-separated list; --access-log's a
// path, or "-" or a true boolean for stdout. Records what it set in
// opt.from_environment. False after one line on stderr naming the variable.
bool apply_environment(CLI::App& app, Options& opt);

// How the user gave `flag` ("--tls-min"): "HELLO_TLS_MIN" if the
// environment set it, else the flag itself. For the later checks' errors.
std::string given_as(const Options& opt, std::string_view flag);

}  // namespace hello
