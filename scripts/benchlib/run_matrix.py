"""scripts/bench's default run, and --quick's: the targets named, one at a
time, for each worker count, with every tool, mode and connection count;
then the access-log pair."""
import os
import sys
import tempfile

from . import plan, targets, tools
from .measure import measure, new_cell, planned_runs, start_progress, summarize

PERSONAS = targets.PERSONAS


def matrix_run(args, split, runs, cells):
    """The targets named, one at a time, for each worker count: every tool,
    mode and connection count (measure); then the access-log pair."""
    names, cpus = args.targets or PERSONAS, plan.cpu_text(split.server)
    # The echo mode's route, beside each persona's own (which it leaves alone).
    routes = ["--routes", tools.ECHO_ROUTES] if "echo" in plan.listing(args.mode) else []
    chosen = [targets.Persona(n, args.build_dir, cpus=cpus, extra=routes) for n in names]
    if args.peers:
        wanted = None if args.peers == "all" else set(plan.listing(args.peers))
        chosen += [t for t in targets.peers(cpus=cpus) if wanted is None or t.name in wanted]
    logged = next((n for n in names if n != targets.CALIBRATION), names[0])
    pair = [targets.Persona(logged, args.build_dir, cpus=cpus)] * 3 if args.access_log_pair else []
    start_progress(args, sum(planned_runs(t, args.jobs, args) for w in args.workers_list for t in chosen
                             if t.supports_workers(w))
                   + sum(planned_runs(t, args.log_jobs or args.jobs, args) for t in pair))
    for workers in args.workers_list:
        if plan.oversubscribed(workers, len(split.server)):
            print(f"  {workers} workers on {len(split.server)} server CPU{'s' if len(split.server) > 1 else ''} "
                  f"({cpus}): oversubscribed, some workers share a CPU", file=sys.stderr)
        for target in chosen:
            target.workers = workers
            if not target.supports_workers(workers):
                print(f"  skip {target.label} with {workers} workers: it runs one process", file=sys.stderr)
                continue
            try:
                target.start()
            except targets.StartError as e:
                print(f"  {e}", file=sys.stderr)
                args.progress.skip(planned_runs(target, args.jobs, args))
                for tool, mode, conns in args.jobs:
                    cells.append(summarize(new_cell(target, tool, mode, conns, None), [{"error": str(e)}]))
                continue
            try:
                measure(target, args, split, runs, cells)
            finally:
                target.stop()
    if args.access_log_pair:
        # The first persona that parses (hello-floor writes no log lines).
        log_dir = tempfile.mkdtemp(prefix="bench-log-")
        for variant, extra in (("log-off", []), ("log-on", [f"--access-log={log_dir}/access.log"]),
                               ("log-json", [f"--access-log={log_dir}/access.log", "--access-log-format", "json"])):
            target = targets.Persona(logged, args.build_dir, cpus=cpus, extra=extra)
            target.workers = 1
            try:
                target.start()
                measure(target, args, split, runs, cells, variant=variant, jobs=args.log_jobs)
            except targets.StartError as e:
                print(f"  {e}", file=sys.stderr)
                args.progress.skip(planned_runs(target, args.log_jobs or args.jobs, args))
            finally:
                target.stop()
                if os.path.exists(f"{log_dir}/access.log"):
                    os.remove(f"{log_dir}/access.log")
        os.rmdir(log_dir)
