// Start-up: the listening addresses, the access log, the workers and the
// control loop over them. Each failure is one line on stderr and an exit
// status; a started process serves until the control loop ends.
#pragma once

#include <memory>
#include <vector>

#include "observe/access_log.h"
#include "persona/persona.h"
#include "server/control.h"
#include "server/options.h"
#include "server/worker.h"

namespace hello {

// What start-up makes and the exit report reads. The members end in reverse
// order: the control loop, then the workers, then the writer they log to.
struct Process {
  // The control loop's stats interval and shutdown timeout come from `opt`.
  explicit Process(const Options& opt)
      : control(workers, opt.stats_interval, opt.shutdown_timeout) {}

  std::unique_ptr<LogWriter> log_writer;  // null without --access-log
  std::unique_ptr<TlsContext> tls;        // null without --tls
  std::vector<std::unique_ptr<Worker>> workers;
  Control control;
};

// Resolves the addresses, opens the access log, makes the workers and binds
// them, starts the control loop and the workers' threads, and says where it
// listens. Returns 0, or the status to exit with after the error line.
int start_up(const Persona& persona, Options& opt, Process& process);

}  // namespace hello
