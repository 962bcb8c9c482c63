#!/usr/bin/python3
"""Benchmarks personas, the real frameworks, Tomcat, nginx, h2o, Go, Node and nghttpd with ab,
wrk, h2load, locust and ws_load, pinned to disjoint CPUs, and writes tables and charts.

  scripts/bench --quick                          a small matrix, under two minutes
  scripts/bench --performance                    every target of docs/performance.md, about 19 minutes
  scripts/bench --shaping                        --shape on against off, no parameters, about 3 minutes
  scripts/bench --live-page                      the admin port's live page open against not, about 2 minutes
  scripts/bench --compare OLD_BUILD_DIR          this build against an older one, alternated, about 4 minutes
  scripts/bench --scaling                        1, 2, 4 ... workers up to the server CPUs, beside nginx and h2o
  scripts/bench --tls                            HTTPS beside nginx and h2o, ECDSA, RSA and all on AES-256-GCM,
                                                 about 15 minutes
  scripts/bench --h2                             HTTP/2, h2c and h2, beside h2o, nginx, nghttpd, Go and Tomcat,
                                                 about 17 minutes (--quick: a check that all runs, about 3)
  scripts/bench --ws                             WebSocket echo, 1 and 16 messages in flight, beside Tornado,
                                                 aiohttp, Starlette, Tomcat, gorilla/websocket and Node's ws,
                                                 about 9 minutes (--quick: a check that all runs, about 2)
  scripts/bench sanic --workers 1,2,4 --server-cpus 4-7 --tool-cpus 0-3
  scripts/bench sanic tornado --workers 1,2 --tool wrk --mode keepalive,pipeline
  scripts/bench --peers --tool ab --mode close --requests 20000 --connections 100
  scripts/bench sanic --tool locust --locust-workers 2   one locust process, and a master with 2 workers
  scripts/bench --url http://HOST:PORT/ --tool wrk   load only, a target elsewhere

Output goes to bench-results/DATE/ (results.json, results.csv, report.md,
PNG charts). See docs/benchmarks.md.
"""
import datetime
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import needs, options, plan, provenance, report, targets  # noqa: E402
# Each run kind's module (benchlib/run_*.py); the names tests/bench use are read from here.
from benchlib.measure import (measure, measure_interleaved, planned_runs, repeats, run_once,  # noqa: E402,F401
                              start_progress, summarize, unsupported)
from benchlib.options import PEERS, PERSONAS  # noqa: E402,F401
from benchlib.run_compare import compare_run  # noqa: E402
from benchlib.run_h2 import PERFORMANCE_H2_JOBS, h2_idle_targets, h2_items, h2_run  # noqa: E402,F401
from benchlib.run_live_page import live_page_run  # noqa: E402
from benchlib.run_matrix import matrix_run  # noqa: E402
from benchlib.run_performance import performance_run  # noqa: E402
from benchlib.run_scaling import SCALING_PERSONAS, scaling_run  # noqa: E402,F401
from benchlib.run_shaping import shaping_run  # noqa: E402
from benchlib.run_tls import tls_items, tls_run  # noqa: E402,F401
from benchlib.run_ws import ws_items, ws_run  # noqa: E402,F401

ROOT = targets.ROOT
# Each run kind's function, by its flag (benchlib.needs.kind_of); without
# one, the matrix of personas, tools and modes.
RUNS = {"performance": performance_run, "shaping": shaping_run, "live_page": live_page_run,
        "compare": compare_run, "scaling": scaling_run, "tls": tls_run, "h2": h2_run, "ws": ws_run}


def parse_args(argv, available=None):
    """The options of `argv` (benchlib.options); `available` is the CPUs
    this process may run on (default: its affinity)."""
    return options.parse_args(argv, available, __doc__)


def rewrite_report(out):
    import json
    with open(os.path.join(out, "results.json")) as f:
        data = json.load(f)
    made = report.charts(out, data["cells"], data["meta"])
    report.write_markdown(out, data["meta"], data["cells"], made)
    print(f"rewrote {out}/report.md{''.join(', ' + m for m in made)}", file=sys.stderr)
    return 0


def main(argv):
    args = parse_args(argv)
    if args.report:
        return rewrite_report(args.report)
    split = args.split
    started = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    out = args.out or os.path.join(ROOT, "bench-results", started)
    os.makedirs(out, exist_ok=True)
    load = f"{args.duration} s" if args.duration else f"{args.requests} requests"
    # The commit, the build and the machine (benchlib.provenance); the
    # tools' versions are added once the cells say which were used.
    meta = dict(provenance.describe(args.build_dir), started=started, server_cpus=plan.cpu_text(split.server),
                tool_cpus=plan.cpu_text(split.tool), repeat=args.repeat, load=load, connections=args.connections,
                command="scripts/bench " + shlex.join(argv))
    print(f"  server on CPU {meta['server_cpus']}, load on CPU {meta['tool_cpus']}"
          + (f" (shared: {plan.cpu_text(split.shared)})" if split.shared else ""), file=sys.stderr)
    runs, cells = [], []

    if args.url:
        remote = targets.Target(args.url, path="")
        remote.kind = "remote"
        start_progress(args, planned_runs(remote, args.jobs, args))
        measure(remote, args, split, runs, cells)
    elif not args.no_setup:
        # Installs what the run uses (its load tools and peers, matplotlib) if missing, and builds.
        needs.install(args, ROOT)
    kind = needs.kind_of(args)
    if kind in RUNS and not (kind == "performance" and args.url):
        RUNS[kind](args, split, runs, cells, meta)
    elif not args.url:
        matrix_run(args, split, runs, cells)

    for c in cells:
        c["oversubscribed"] = c["kind"] != "remote" and plan.oversubscribed(c["workers"], len(split.server))
    extra = ["chromium"] if args.live_page else ["uvicorn", "wsproto"] if args.ws else []
    meta["tool_versions"] = provenance.tool_versions(cells, extra=extra)
    report.write_json(out, meta, runs, cells)
    report.write_csv(out, cells)
    made = report.charts(out, cells, meta)
    report.write_markdown(out, meta, cells, made)
    bad = [c for c in cells if c.get("error")]
    bound = report.tool_bound_cells(cells)
    measured = [c for c in cells if c.get("tool_busy") is not None or c.get("tool_cpus_busy") is not None]
    print(f"wrote {out}/ (results.json, results.csv, report.md{''.join(', ' + m for m in made)})"
          + (f"; {len(bad)} cells with problems, listed in report.md" if bad else "")
          + f"; {len(bound)} of {len(measured)} cells tool-bound (the load tool, not the server, was the limit)",
          file=sys.stderr)
    return 1 if bad and len(bad) == len(cells) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
