// The entry point of every binary: servers/NAME.cc describes a persona and
// its main() hands that description to run().
#pragma once

#include "persona/persona.h"

namespace hello {

// Parses the command line, then serves `persona` until SIGINT or SIGTERM.
// Returns the process exit status.
int run(const Persona& persona, int argc, char** argv);

}  // namespace hello
