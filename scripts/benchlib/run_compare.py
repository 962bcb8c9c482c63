"""scripts/bench --compare: an A/B of two builds of one persona, beside
hello-floor and the persona with its access log, in alternating rounds."""
import os
import shutil
import tempfile

from . import plan, targets
from .measure import run_plan, start_plan


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--compare", metavar="BUILD_DIR",
                       help="an A/B of two builds of one persona (default sanic), 1 worker each, started at once: "
                            "the one in --build-dir (after) against the one in BUILD_DIR (before, e.g. a build of "
                            "the commit before a change), under wrk -c64 keep-alive and 16-deep pipelining and "
                            "ab -c100 one request per connection, with hello-floor and the persona with "
                            "--access-log from both builds beside them (keep-alive and pipelining), in "
                            "alternating rounds (--repeat, at least 5). The ratios of server CPU per request, "
                            "after / before, and for each build against the floor and log on against off, "
                            "go in report.md")


def configure(p, args, explicit):
    """--compare's persona, jobs and rounds; the older build must be a directory."""
    if not os.path.isdir(args.compare):
        p.error(f"--compare {args.compare}: not a directory")
    if args.requests:
        p.error("--compare runs for a --duration")
    if len(args.targets) > 1 or targets.CALIBRATION in args.targets:
        p.error(f"--compare measures one persona that parses (default sanic; not {targets.CALIBRATION})")
    args.targets = args.targets or ["sanic"]
    args.compare = os.path.abspath(args.compare)
    args.peers = None
    args.workers, args.access_log_pair = "1", False
    args.repeat = max(args.repeat, 5)
    args.jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64), ("ab", "close", 100)]
    args.log_jobs = args.jobs[:2]
    args.tool, args.mode = "wrk,ab", "keepalive,pipeline,close"


def compare_run(args, split, runs, cells, meta):
    """--compare: one persona from two builds, and beside it hello-floor and
    the persona with the access log on from both, all started at once and
    run in alternating rounds (measure_interleaved), so that the ratios the
    --performance targets judge (against the floor, log on against off) are
    read for both builds in the same run."""
    name, cpus = args.targets[0], plan.cpu_text(split.server)
    log_dir = tempfile.mkdtemp(prefix="bench-log-")
    items = []
    for variant, build in (("before", args.compare), ("after", args.build_dir)):
        items.append((targets.Persona(name, build, cpus=cpus), args.jobs, variant))
        items.append((targets.Persona(targets.CALIBRATION, build, cpus=cpus), args.log_jobs, variant))
        with_log = targets.Persona(name, build, cpus=cpus, extra=[f"--access-log={log_dir}/{variant}.log"])
        with_log.log_path = f"{log_dir}/{variant}.log"
        items.append((with_log, args.log_jobs, f"{variant}-log"))
    meta["compare"] = {"persona": name, "floor": targets.CALIBRATION, "before": args.compare,
                       "after": args.build_dir, "rounds": args.repeat}
    start_plan(items, args)
    try:
        run_plan(items, args, split, runs, cells, alternate=True)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
