"""scripts/bench --live-page: one persona started once, each job's runs
alternating between the live page closed and open (benchlib.livepage)."""
import sys

from . import livepage, plan, targets
from .measure import new_cell, run_once, start_plan, summarize


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--live-page", action="store_true",
                       help="the live page's cost (docs/observability.md): one persona (default sanic; --workers: "
                            "the first count), started once with --admin, under wrk -c64 keep-alive and 16-deep "
                            "pipelining, each job's runs alternating without the admin port's page and with it open "
                            "in a headless Chromium on the tool CPUs (or, without Chromium, a poller of /stats once "
                            "a second), --repeat rounds (at least 5). The ratio of server CPU per request, page on "
                            "over off, against its 2%% goes in report.md")


def configure(p, args, explicit):
    """--live-page's persona, worker count, jobs and rounds."""
    if args.requests:
        p.error("--live-page runs wrk, which runs for a --duration")
    if len(args.targets) > 1:
        p.error("--live-page measures one persona (default sanic)")
    args.targets = args.targets or ["sanic"]
    args.peers, args.access_log_pair = None, False
    args.workers = plan.listing(args.workers)[0] if plan.listing(args.workers) else "1"
    args.repeat = max(args.repeat, 5)
    if not explicit & {"tool", "mode", "connections"}:
        args.jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)]
        args.tool, args.mode = "wrk", "keepalive,pipeline"


def live_page_run(args, split, runs, cells, meta):
    """--live-page: one persona started once; each job's runs alternate
    between the live page closed and open (benchlib.livepage)."""
    name, cpus = args.targets[0], plan.cpu_text(split.server)
    target = targets.Persona(name, args.build_dir, cpus=cpus)
    target.workers = args.workers_list[0]
    page_kind = livepage.Page(0, "").kind
    meta["live_page"] = {"persona": name, "workers": target.workers, "rounds": args.repeat, "page": page_kind,
                         "modes": [m for _, m, _ in args.jobs], "connections": args.jobs[0][2]}
    start_plan([(target, args.jobs * 2, None)], args)
    try:
        target.start()
    except targets.StartError as e:
        sys.exit(f"scripts/bench --live-page: {e}")
    try:
        for tool, mode, conns in args.jobs:
            slots = {v: (new_cell(target, tool, mode, conns, v), []) for v in livepage.VARIANTS}
            for i, order in enumerate(livepage.rounds(args.repeat)):
                for variant in order:
                    page = livepage.Page(target.admin_port, plan.cpu_text(split.tool))
                    if variant == "page-on":
                        page.start()
                    try:
                        cell, done = slots[variant]
                        done.append(run_once(target, tool, mode, conns, i, args, split, cell))
                    finally:
                        page.stop()
            for cell, done in slots.values():
                runs.extend(done)
                cells.append(summarize(cell, done))
    finally:
        target.stop()
