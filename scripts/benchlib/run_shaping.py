"""scripts/bench --shaping: the same persona without --shape, with it, and with
it and one parameter in every request, in alternating rounds."""
from . import plan, targets
from .measure import run_plan, start_plan

# --shaping's informational path: one parameter that changes nothing heavy
# (the query is parsed and a decision header added to the answer).
SHAPING_PARAM_PATH = "/?status=200"


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--shaping", action="store_true",
                       help="shaping's fast path (docs/performance.md): hello-sanic, 1 worker, started three "
                            "times at once (without --shape; with --shape; with --shape and requests to "
                            f"{SHAPING_PARAM_PATH}), under wrk -c64 keep-alive and 16-deep pipelining, in "
                            "alternating rounds (--repeat, at least 5). The ratio of --shape on to off "
                            "against its target goes in report.md")


def configure(p, args, explicit):
    """--shaping's persona, jobs and rounds; `p.error` on what it cannot run."""
    if args.requests:
        p.error("--shaping runs wrk, which runs for a --duration")
    if len(args.targets) > 1 or targets.CALIBRATION in args.targets:
        p.error(f"--shaping measures one persona that parses (default sanic; not {targets.CALIBRATION})")
    args.targets = args.targets or ["sanic"]
    args.peers = None
    args.workers, args.access_log_pair = "1", False
    args.repeat = max(args.repeat, 5)
    args.jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)]
    args.tool, args.mode = "wrk", "keepalive,pipeline"


def shaping_run(args, split, runs, cells, meta):
    """--shaping: the same persona without --shape, with it, and with it and
    one parameter in every request, all started at once and run in
    alternating rounds (measure_interleaved)."""
    name, cpus = args.targets[0], plan.cpu_text(split.server)
    items = [(targets.Persona(name, args.build_dir, cpus=cpus), args.jobs, "shape-off"),
             (targets.Persona(name, args.build_dir, cpus=cpus, extra=["--shape"]), args.jobs, "shape-on"),
             (targets.Persona(name, args.build_dir, cpus=cpus, extra=["--shape"], path=SHAPING_PARAM_PATH),
              args.jobs, "shape-param")]
    meta["shaping"] = {"persona": name, "param_path": SHAPING_PARAM_PATH, "rounds": args.repeat}
    start_plan(items, args)
    run_plan(items, args, split, runs, cells, alternate=True)
