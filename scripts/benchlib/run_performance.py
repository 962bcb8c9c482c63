"""scripts/bench --performance: the targets of docs/performance.md, measured
interleaved, then the measures that are not load runs."""
import shutil
import sys
import tempfile

from . import extras, plan, targets
from .measure import run_plan, start_plan
from .run_h2 import PERFORMANCE_H2_JOBS


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--performance", action="store_true",
                       help="the performance targets (docs/performance.md): hello-floor, sanic, tornado and nginx "
                            "(and beside them h2o, Go net/http and Node http) "
                            "under wrk -c64 keep-alive and 16-deep pipelining and ab -c100 one request per "
                            "connection; HTTP/2 in clear (h2c) of the first persona, h2o and nginx under h2load "
                            "-c100 -m1 and -m100; the access log on and off; RSS per idle connection; the heart's "
                            "micro-benchmark; the allocation count. Ratios against the targets go in report.md")


def configure(p, args, explicit):
    """--performance's targets, jobs and rounds."""
    args.targets = args.targets or [targets.CALIBRATION, "sanic", "tornado"]
    args.peers = args.peers or "nginx"
    args.workers, args.requests, args.access_log_pair = "1", None, True
    args.repeat = max(args.repeat, 5)
    args.jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64), ("ab", "close", 100)]
    args.log_jobs = args.jobs[:2]
    args.tool, args.mode = "wrk,ab", "keepalive,pipeline,close"


def performance_run(args, split, runs, cells, meta):
    """The --performance matrix, interleaved, then the measures that are not load runs."""
    names, cpus = args.targets, plan.cpu_text(split.server)
    items = [(targets.Persona(n, args.build_dir, cpus=cpus), args.jobs, None) for n in names]
    items += [(t, args.jobs, None) for t in targets.fast_peers(cpus=cpus)]
    log_dir = tempfile.mkdtemp(prefix="bench-log-")
    logged = next((n for n in names if n != targets.CALIBRATION), None)
    if logged:
        items.append((targets.Persona(logged, args.build_dir, cpus=cpus), args.log_jobs, "log-off"))
        with_log = targets.Persona(logged, args.build_dir, cpus=cpus, extra=[f"--access-log={log_dir}/access.log"])
        with_log.log_path = f"{log_dir}/access.log"
        items.append((with_log, args.log_jobs, "log-on"))
        # The JSON log (--access-log-format json), held to the same ratio.
        with_json = targets.Persona(logged, args.build_dir, cpus=cpus,
                                    extra=[f"--access-log={log_dir}/access.json", "--access-log-format", "json"])
        with_json.log_path = f"{log_dir}/access.json"
        items.append((with_json, args.log_jobs, "log-json"))
        # HTTP/2 in clear beside h2o and nginx, against --h2's targets.
        items += [(t, PERFORMANCE_H2_JOBS, "h2c") for t in (
            targets.Persona(logged, args.build_dir, cpus=cpus, http2=True),
            targets.H2o("h2o", path="/", cpus=cpus, http2=True),
            targets.Nginx("nginx", path="/", cpus=cpus, http2=True))]
    start_plan(items, args)
    try:
        run_plan(items, args, split, runs, cells)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    print("  idle connections, heart micro-benchmark, allocations", file=sys.stderr)
    meta["performance"] = {
        "idle_rss": [extras.idle_rss(t, args.idle_connections)
                     for t in (targets.Persona("sanic", args.build_dir, cpus=cpus, admin=False,
                                               extra=["--keepalive-timeout", "75"]),
                               targets.Nginx("nginx", path="/", cpus=cpus))],
        "micro_benchmark": extras.micro_benchmark(args.build_dir, str(split.server[0])),
        "allocations": extras.allocations(args.build_dir),
    }
