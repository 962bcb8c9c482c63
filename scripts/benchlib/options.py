"""scripts/bench's options, in the groups --help shows, and the checks that
make them one plan: the run kind (each in its module run_*.py adds its
option and sets its targets, jobs and rounds), the lists of targets, tools,
modes, worker and connection counts, and the CPU split."""
import argparse
import itertools
import os

from . import plan, run_compare, run_h2, run_live_page, run_performance, run_scaling, run_shaping, run_tls, run_ws
from . import targets, tools

PERSONAS = targets.PERSONAS
PEERS = [t.name for t in targets.peers()]
# The runs of their own, in the order their options are checked and applied.
KINDS = (("performance", run_performance), ("shaping", run_shaping), ("live_page", run_live_page),
         ("compare", run_compare), ("scaling", run_scaling), ("tls", run_tls), ("h2", run_h2), ("ws", run_ws))
# Connections of the idle RSS measure of --performance and --tls (--h2: run_h2's).
IDLE_CONNECTIONS = 10000


def build_parser(doc):
    """scripts/bench's parser; `doc` (scripts/bench's docstring) gives its
    description and its examples."""
    p = argparse.ArgumentParser(prog="scripts/bench", description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(doc.split("\n")[2:]))
    p.add_argument("targets", nargs="*", help=f"personas to run (default: all of {', '.join(PERSONAS)})")
    group = p.add_argument_group("servers and load")
    group.add_argument("--peers", nargs="?", const="all", default=None,
                       help=f"also the real frameworks, Tomcat (Spring's engine), nginx, h2o, Go and Node (all, or a "
                            f"list: {','.join(PEERS)}; "
                            "put persona names before it, or write --peers=LIST)")
    group.add_argument("--workers", help="worker counts, e.g. 1,2 (default 1; with --scaling, 1, 2, 4 ... up to "
                                          "the server CPUs)")
    group.add_argument("--tool", help="ab,wrk,h2load,locust (default wrk)")
    group.add_argument("--locust-workers", type=int, default=None, metavar="N",
                       help="also run locust distributed: a master and N worker processes, on the tool CPUs, "
                            "beside one locust process in the same run; its results are labeled locust-wN "
                            "(default: with more than one tool CPU, only distributed, one worker per tool CPU; "
                            "0: one process only)")
    group.add_argument("--mode",
                       help="close,keepalive,pipeline,echo (default keepalive; echo POSTs ~1 KiB of JSON "
                            "to a JSON echo route, wrk only)")
    group.add_argument("--connections", help="concurrent connections, e.g. 32,64 (default 64); wrk and h2load "
                                              "round them up to a multiple of their threads")
    group = p.add_argument_group("CPUs")
    group.add_argument("--server-cpus", metavar="LIST",
                       help="the CPUs the servers run on, as taskset takes them, e.g. 4-7 (default: the upper half "
                            "of this process's CPUs, or the ones --tool-cpus leaves)")
    group.add_argument("--tool-cpus", metavar="LIST",
                       help="the CPUs the load tool runs on, e.g. 0-3 (default: the lower half, or the ones "
                            "--server-cpus leaves); wrk and h2load run one thread per CPU, locust one worker "
                            "process per CPU")
    group = p.add_argument_group("each run")
    load = group.add_mutually_exclusive_group()
    load.add_argument("--duration", type=int, help="seconds per run (default 5)")
    load.add_argument("--requests", type=int, help="requests per run (ab, h2load)")
    group.add_argument("--repeat", type=int, default=3, help="runs per cell; the median is reported (default 3)")
    group.add_argument("--access-log-pair", action="store_true",
                       help="also run the first persona with --access-log to a file, in CLF and in JSON, "
                            "beside the same run without")
    group = p.add_argument_group("kinds of run (one at a time)")
    group.add_argument("--quick", action="store_true", help="a small matrix that finishes in under two minutes")
    for module in (run_performance, run_compare, run_shaping, run_live_page, run_scaling, run_tls, run_h2, run_ws):
        module.add_option(group)
    group.add_argument("--idle-connections", type=int, default=None,
                       help=f"connections for the idle RSS measure of --performance and --tls (default "
                            f"{IDLE_CONNECTIONS}), of --h2 (default {run_h2.H2_IDLE_CONNECTIONS}) and of --ws "
                            f"(default {run_ws.WS_IDLE_CONNECTIONS})")
    group = p.add_argument_group("input and output")
    group.add_argument("--url", help="only run the load against this URL (a target on another host)")
    group.add_argument("--build-dir", default=os.path.join(targets.ROOT, "build"),
                       help="where the hello-* binaries are")
    group.add_argument("--out", help="output directory (default bench-results/DATE)")
    group.add_argument("--report", metavar="DIR",
                       help="only write report.md and the charts again from DIR/results.json")
    group.add_argument("--no-setup", action="store_true",
                       help="do not install what the run uses or build first (scripts/setup; missing tools are "
                            "then reported)")
    return p


def parse_args(argv, available=None, doc=""):
    """The options of `argv`; `available` is the CPUs this process may run
    on (default: its affinity), which the CPU split is made of."""
    p = build_parser(doc)
    args = p.parse_args(argv)
    try:
        args.split = plan.split_cpus(available or os.sched_getaffinity(0),
                                     plan.parse_cpus(args.server_cpus) if args.server_cpus else None,
                                     plan.parse_cpus(args.tool_cpus) if args.tool_cpus else None)
    except plan.PlanError as e:
        p.error(str(e))
    explicit = {k for k in ("workers", "tool", "mode", "connections") if getattr(args, k) is not None}
    args.workers, args.tool = args.workers or "1", args.tool or "wrk"
    args.mode, args.connections = args.mode or "keepalive", args.connections or "64"
    if args.quick and not args.h2 and not args.ws:
        args.targets = args.targets or ["sanic", "tornado", "spring"]
        args.workers, args.tool, args.mode, args.connections = "1,2", "wrk", "keepalive", "64"
        args.duration, args.requests, args.repeat, args.access_log_pair = 2, None, 3, True
    _check_alone(p, args)
    if args.h2 and args.quick:
        if args.duration or args.requests or args.idle_connections:
            p.error("--h2 --quick sets its own --duration and --idle-connections")
        args.duration, args.repeat = run_h2.H2_QUICK_DURATION, run_h2.H2_QUICK_REPEAT
        args.idle_connections = run_h2.H2_QUICK_IDLE
    if args.ws and args.quick:
        if args.duration or args.requests or args.idle_connections:
            p.error("--ws --quick sets its own --duration and --idle-connections")
        args.duration, args.repeat = run_ws.WS_QUICK_DURATION, run_ws.WS_QUICK_REPEAT
        args.idle_connections = run_ws.WS_QUICK_IDLE
    if args.idle_connections is None:
        args.idle_connections = (run_h2.H2_IDLE_CONNECTIONS if args.h2 else run_ws.WS_IDLE_CONNECTIONS if args.ws
                                 else IDLE_CONNECTIONS)
    if args.duration is None and args.requests is None:
        args.duration = 5
    # The load runs: every tool, mode and connection count, or a fixed list.
    args.jobs = None
    args.log_jobs = None
    for flag, module in KINDS:
        if getattr(args, flag):
            module.configure(p, args, explicit)
    _check_lists(p, args)
    return args


def _check_alone(p, args):
    """A run kind of its own is not combined with another."""
    if args.shaping and (args.performance or args.quick or args.url or args.report):
        p.error("--shaping is a run of its own: not with --performance, --quick, --url or --report")
    if args.live_page and (args.performance or args.shaping or args.compare or args.scaling or args.tls
                           or args.h2 or args.quick or args.url or args.report):
        p.error("--live-page is a run of its own: not with --performance, --shaping, --compare, --scaling, "
                "--tls, --h2, --quick, --url or --report")
    if args.compare and (args.performance or args.shaping or args.quick or args.url or args.report):
        p.error("--compare is a run of its own: not with --performance, --shaping, --quick, --url or --report")
    if args.scaling and (args.performance or args.shaping or args.compare or args.quick or args.url or args.report):
        p.error("--scaling is a run of its own: not with --performance, --shaping, --compare, --quick, --url "
                "or --report")
    if args.tls and (args.performance or args.shaping or args.compare or args.scaling or args.quick or args.url
                     or args.report):
        p.error("--tls is a run of its own: not with --performance, --shaping, --compare, --scaling, --quick, "
                "--url or --report")
    if args.h2 and (args.performance or args.shaping or args.compare or args.scaling or args.tls or args.url
                    or args.report):
        p.error("--h2 is a run of its own (h2c and h2 over TLS): not with --performance, --shaping, --compare, "
                "--scaling, --tls, --url or --report")
    if args.ws and (args.performance or args.shaping or args.live_page or args.compare or args.scaling or args.tls
                    or args.h2 or args.url or args.report):
        p.error("--ws is a run of its own: not with --performance, --shaping, --live-page, --compare, --scaling, "
                "--tls, --h2, --url or --report")


def _check_lists(p, args):
    """The targets, peers, tools, modes and counts; the jobs of a matrix run."""
    for name in args.targets:
        if name not in PERSONAS:
            p.error(f"unknown persona '{name}' (one of: {', '.join(PERSONAS)})")
    if args.peers and args.peers != "all" and not set(plan.listing(args.peers)) <= set(PEERS):
        p.error(f"unknown peer in '{args.peers}' (known: {', '.join(sorted(PEERS))})")
    for t in plan.listing(args.tool):
        if t not in tools.LOAD_TOOLS:
            p.error(f"unknown tool '{t}' (one of: {', '.join(tools.LOAD_TOOLS)})")
    if args.locust_workers is not None and args.locust_workers < 0:
        p.error("--locust-workers must be 0 (one locust process) or more")
    if args.locust_workers and "locust" not in plan.listing(args.tool):
        p.error("--locust-workers needs --tool locust")
    # locust with workers is a tool of its own in the results, locust-w2:
    # asked for, it runs beside one locust process so that one report
    # compares them; by default, with more than one tool CPU, it runs alone
    # with one worker per tool CPU.
    if args.locust_workers is None:
        many = len(args.split.tool)
        args.tool = ",".join(tools.label(t, many) if t == "locust" and many > 1 else t
                             for t in plan.listing(args.tool))
    elif args.locust_workers:
        args.tool = ",".join(f"{t},{tools.label(t, args.locust_workers)}" if t == "locust" else t
                             for t in plan.listing(args.tool))
    for m in plan.listing(args.mode):
        if m not in tools.MODES:
            p.error(f"unknown mode '{m}' (one of: {', '.join(tools.MODES)})")
    try:
        args.workers_list = [int(w) for w in plan.listing(args.workers)]
        args.connections_list = [int(c) for c in plan.listing(args.connections)]
    except ValueError:
        p.error("--workers and --connections take numbers, e.g. 1,2")
    if args.repeat < 1 or min(args.workers_list + args.connections_list, default=0) < 1:
        p.error("--repeat, --workers and --connections must be at least 1")
    if args.idle_connections < 2:
        p.error("--idle-connections must be at least 2")
    if args.jobs is None:
        args.jobs = list(itertools.product(plan.listing(args.tool), plan.listing(args.mode), args.connections_list))
    else:
        args.connections = ", ".join(f"{c} ({t} {m})" for t, m, c in args.jobs)
