// The entry point of every binary: servers/NAME.cc describes a persona and
// ends with HELLO_MAIN(kPersona), whose main() hands that description to
// run().
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

// main() of hello-NAME. Compiled into hello-family, every persona in one
// binary (HELLO_MULTI_CALL names each persona's function; see
// servers/multi_call.cc.in), it is instead the function that returns the
// persona, and that binary's main() picks one by the name it runs under.
#ifdef HELLO_MULTI_CALL
#define HELLO_MAIN(persona)                  \
  const hello::Persona& HELLO_MULTI_CALL() { \
    return persona;                          \
  }
#else
#define HELLO_MAIN(persona)                 \
  int main(int argc, char** argv) {         \
    return hello::run(persona, argc, argv); \
  }
#endif
