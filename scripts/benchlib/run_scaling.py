"""scripts/bench --scaling: worker counts 1, 2, 4 ... up to the server CPUs,
the personas beside nginx and h2o."""
import sys

from . import plan, targets
from .measure import planned_runs, run_plan, start_progress

# --scaling's personas when none is named; nginx and h2o run beside them.
SCALING_PERSONAS = ["sanic", "tornado"]


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--scaling", action="store_true",
                       help="worker counts 1, 2, 4 ... up to the server CPUs, under wrk keep-alive and one request "
                            "per connection (Connection: close), with 32 connections per server CPU (at least 64): "
                            f"the personas (default {', '.join(SCALING_PERSONAS)}) beside nginx and h2o with as many "
                            "workers, all started at once for each count. report.md gets a scaling table: requests "
                            "per second, per server CPU, CPU per request, efficiency rps(N) / (N x rps(1)), each "
                            "worker's share of the requests, and who was the limit")


def configure(p, args, explicit):
    """--scaling's personas, worker counts, connections and jobs."""
    if args.requests:
        p.error("--scaling runs wrk, which runs for a --duration")
    args.targets = args.targets or SCALING_PERSONAS
    if args.peers:
        p.error("--scaling runs nginx and h2o beside the personas: no --peers")
    if explicit & {"tool", "mode"} or args.access_log_pair:
        p.error("--scaling runs wrk keep-alive and one request per connection: no --tool, --mode or "
                "--access-log-pair")
    server = len(args.split.server)
    if "workers" not in explicit:
        args.workers = ",".join(map(str, plan.scaling_workers(server)))
    if "connections" not in explicit:
        args.connections = str(plan.scaling_connections(server))
    if not args.connections.isdigit() or int(args.connections) < 1:
        p.error("--scaling takes one --connections count, a number")
    args.jobs = [("wrk", "keepalive", int(args.connections)), ("wrk", "close", int(args.connections))]
    args.tool, args.mode, args.access_log_pair = "wrk", "keepalive,close", False


def scaling_items(args, split):
    """One worker count's targets for --scaling: the personas, nginx and h2o."""
    cpus = plan.cpu_text(split.server)
    return ([(targets.Persona(n, args.build_dir, cpus=cpus), args.jobs, None) for n in args.targets]
            + [(targets.Nginx("nginx", path="/", cpus=cpus), args.jobs, None),
               (targets.H2o("h2o", path="/", cpus=cpus), args.jobs, None)])


def scaling_run(args, split, runs, cells, meta):
    """--scaling: for each worker count, every target started at once with
    that many workers and run in turn, repeat by repeat (measure_interleaved)."""
    meta["scaling"] = {"workers": args.workers_list, "server_cpus": len(split.server),
                       "connections": args.jobs[0][2]}
    if len(split.server) == 1:
        print("  one server CPU: this run can show no scaling (it measures 1 worker)", file=sys.stderr)
    start_progress(args, len(args.workers_list) * sum(planned_runs(t, jobs, args)
                                                      for t, jobs, _ in scaling_items(args, split)))
    for workers in args.workers_list:
        print(f"  {workers} worker{'s' if workers > 1 else ''}", file=sys.stderr)
        run_plan(scaling_items(args, split), args, split, runs, cells, workers=workers)
