"""scripts/bench --compare: an A/B of two builds of one persona, beside
hello-floor and the persona with its access log, in alternating rounds."""
import os
import shutil
import subprocess
import tempfile

from . import plan, targets
from .measure import run_plan, start_plan
from .run_h2 import PERFORMANCE_H2_JOBS


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--compare", metavar="BUILD_DIR",
                       help="an A/B of two builds of one persona (default sanic), 1 worker each, started at once: "
                            "the one in --build-dir (after) against the one in BUILD_DIR (before, e.g. a build of "
                            "the commit before a change), under wrk -c64 keep-alive and 16-deep pipelining and "
                            "ab -c100 one request per connection, with hello-floor and the persona with "
                            "--access-log from both builds beside them (keep-alive and pipelining); and, where "
                            "both builds speak HTTP/2, the persona with --h2 in clear (h2c) under h2load -c100 "
                            "-m1 and -m100; in alternating rounds (--repeat, at least 5). The ratios of server CPU per request, "
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
    args.h2_jobs = list(PERFORMANCE_H2_JOBS)
    args.tool, args.mode = "wrk,ab", "keepalive,pipeline,close"


def speaks_h2(build, name):
    """Whether `build`'s hello-NAME takes --h2 (builds before HTTP/2 do not)."""
    try:
        out = subprocess.run([os.path.join(build, f"hello-{name}"), "--help"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "--h2" in out.stdout


def compare_run(args, split, runs, cells, meta):
    """--compare: one persona from two builds, and beside it hello-floor and
    the persona with the access log on from both, all started at once and
    run in alternating rounds (measure_interleaved), so that the ratios the
    --performance targets judge (against the floor, log on against off) are
    read for both builds in the same run."""
    name, cpus = args.targets[0], plan.cpu_text(split.server)
    log_dir = tempfile.mkdtemp(prefix="bench-log-")
    items = []
    builds = (("before", args.compare), ("after", args.build_dir))
    h2c = all(speaks_h2(build, name) for _, build in builds)
    for variant, build in builds:
        items.append((targets.Persona(name, build, cpus=cpus), args.jobs, variant))
        items.append((targets.Persona(targets.CALIBRATION, build, cpus=cpus), args.log_jobs, variant))
        with_log = targets.Persona(name, build, cpus=cpus, extra=[f"--access-log={log_dir}/{variant}.log"])
        with_log.log_path = f"{log_dir}/{variant}.log"
        items.append((with_log, args.log_jobs, f"{variant}-log"))
        if h2c:
            items.append((targets.Persona(name, build, cpus=cpus, http2=True), args.h2_jobs, f"{variant}-h2c"))
    meta["compare"] = {"persona": name, "floor": targets.CALIBRATION, "before": args.compare,
                       "after": args.build_dir, "rounds": args.repeat, "h2c": h2c}
    start_plan(items, args)
    try:
        run_plan(items, args, split, runs, cells, alternate=True)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
