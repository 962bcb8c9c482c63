// The entry point of every binary: servers/NAME.cc describes a persona and
// its main() hands that description to run().
#pragma once

#include "persona/persona.h"

namespace hello {

// Usage errors exit 2, like getopt-based tools; startup failures exit 1.
inline constexpr int kExitUsage = 2;
inline constexpr int kExitStartup = 1;

// Parses the command line, then serves `persona` until SIGINT or SIGTERM.
// Returns the process exit status: 0, kExitUsage or kExitStartup.
int run(const Persona& persona, int argc, char** argv);

}  // namespace hello
