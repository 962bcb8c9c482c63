"""scripts/bench --ws: server CPU per echoed WebSocket message and messages
per second, with 1 and with 16 messages in flight per connection, the
personas beside the real frameworks' echo apps, gorilla/websocket and
Node's ws (benchlib.ws_targets), and the personas' own HTTP/1.1 keep-alive
request beside, in alternating rounds; each WebSocket server first asked
to echo one message; then RSS per idle WebSocket connection (and per idle
HTTP/1.1 one of the personas)."""
import sys

from . import extras, plan, targets, tools, websocket, ws_targets
from .measure import new_cell, planned_runs, run_plan, start_plan, summarize

# Each persona's WebSocket echo route.
WS_PATHS = {"sanic": "/feed"}
# --ws's jobs: ws_load with 100 connections and 1 or 16 messages in flight
# on each; the personas' HTTP/1.1 keep-alive request, with as many
# connections, is the reference of the first.
WS_CONNECTIONS = 100
WS_JOBS = [("ws_load", "ws1", WS_CONNECTIONS), ("ws_load", "ws16", WS_CONNECTIONS)]
HTTP_JOB = ("wrk", "keepalive", WS_CONNECTIONS)
# The variants of the cells: a WebSocket echo, and the personas' HTTP/1.1.
WS, HTTP1 = "ws", "http1"
# The idle measure's connections (each one upgraded), by default.
WS_IDLE_CONNECTIONS = 2000
# --ws --quick: a check that every target starts and is measured.
WS_QUICK_DURATION, WS_QUICK_REPEAT, WS_QUICK_IDLE = 2, 1, 200
# The personas' flags in the idle measure, WebSocket and HTTP/1.1 alike:
# kept 75 s (nginx's keepalive_timeout), where sanic's own 5 s could close
# the first connections before the last are open.
IDLE_FLAGS = ("--keepalive-timeout", "75")
# The peers whose idle RSS is not measured, and why.
IDLE_SKIPPED = {"tomcat": "not measured: a JVM's RSS follows its heap, not its connections"}


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--ws", action="store_true",
                       help="WebSocket: the personas (default sanic, its echo at /feed) beside the real frameworks' "
                            "echo apps (Tornado, aiohttp, Starlette on uvicorn with wsproto, Tomcat 10.1's JSR 356 "
                            "endpoint), gorilla/websocket (Go) and Node's ws, 1 worker each, all started at once, each "
                            "first asked to echo one message, and run in alternating rounds (--repeat, at least 5) "
                            f"under build/tests/ws_load with {WS_CONNECTIONS} connections, 16-byte text messages, 1 "
                            "and 16 in flight per connection; beside them the personas' HTTP/1.1 keep-alive request "
                            f"(wrk -c{WS_CONNECTIONS}); then RSS per idle WebSocket connection (--idle-connections, "
                            f"default {WS_IDLE_CONNECTIONS}) and the personas' per idle HTTP/1.1 one. Server CPU per "
                            "message against the cheapest peer's and the persona's own HTTP/1.1 request go in "
                            "report.md. About 9 minutes. With --quick: every target and job "
                            f"{WS_QUICK_REPEAT} time for {WS_QUICK_DURATION} s and {WS_QUICK_IDLE} idle connections, a "
                            "check that everything starts and is measured, not a measurement")


def configure(p, args, explicit):
    """--ws's personas, rounds and jobs (--quick's duration, rounds and
    idle connections are set by options.parse_args)."""
    if args.requests:
        p.error("--ws runs for a --duration")
    if explicit or args.peers or args.access_log_pair:
        p.error("--ws runs its own jobs, 1 worker, beside its own peers: no --workers, --tool, --mode, "
                "--connections, --peers or --access-log-pair")
    args.targets = args.targets or list(WS_PATHS)
    for name in args.targets:
        if name not in WS_PATHS:
            p.error(f"--ws measures personas with a WebSocket echo route ({', '.join(WS_PATHS)}), not {name}")
    if not args.quick:
        args.repeat = max(args.repeat, 5)
    # ws_load and its modes are no --tool or --mode: the jobs are --ws's own.
    args.jobs = WS_JOBS + [HTTP_JOB]


def ws_items(args, split):
    """--ws's (target, jobs, variant), all with 1 worker: the personas at
    their echo route and the peers under WS_JOBS, then the personas again
    at / under HTTP_JOB."""
    cpus = plan.cpu_text(split.server)
    items = [(targets.Persona(n, args.build_dir, admin=False, cpus=cpus, path=WS_PATHS[n]), WS_JOBS, WS)
             for n in args.targets]
    items += [(peer, WS_JOBS, WS) for peer in ws_targets.ws_peers(cpus=cpus)]
    items += [(targets.Persona(n, args.build_dir, cpus=cpus), [HTTP_JOB], HTTP1) for n in args.targets]
    return items


def probe_started(items, args, cells, meta):
    """run_plan's `before`: asks every started WebSocket target to echo one
    message (benchlib.websocket.probe); one that does not is stopped and
    taken out of the rounds, its cells saying why (a persona built without
    WebSocket answers its route otherwise)."""
    def before(started):
        meta["ws"]["probe"] = []
        for entry in list(started):
            target, jobs, variant = entry
            if variant != WS:
                continue
            problem = websocket.probe(target.port, target.path)
            meta["ws"]["probe"].append({"target": target.label, "name": target.name, "kind": target.kind,
                                        "path": target.path, "error": problem})
            if problem is None:
                continue
            why = f"{target.label} did not echo a WebSocket message at {target.path}: {problem}"
            print(f"  {why}: not measured", file=sys.stderr)
            started.remove(entry)
            target.stop()
            if getattr(args, "progress", None):
                args.progress.skip(planned_runs(target, jobs, args))
            for tool, mode, conns in jobs:
                cells.append(summarize(new_cell(target, tool, mode, conns, variant), [{"error": why}]))
    return before


def idle_targets(args, split):
    """(target, ws_path, protocol) of the idle measure: each persona, with
    IDLE_FLAGS, upgraded at its route and over HTTP/1.1; each peer but
    those of IDLE_SKIPPED upgraded at its path."""
    cpus = plan.cpu_text(split.server)
    out = []
    for n in args.targets:
        for path, ws_path, protocol in ((WS_PATHS[n], WS_PATHS[n], WS), ("/", None, HTTP1)):
            persona = targets.Persona(n, args.build_dir, admin=False, cpus=cpus, path=path, extra=IDLE_FLAGS)
            out.append((persona, ws_path, protocol))
    out += [(peer, peer.path, WS) for peer in ws_targets.ws_peers(cpus=cpus) if peer.name not in IDLE_SKIPPED]
    return out


def ws_run(args, split, runs, cells, meta):
    """--ws: every target of ws_items started at once, probed, and run in
    alternating rounds (measure_interleaved); then the idle measure of
    idle_targets."""
    tools.use_build_dir(args.build_dir)
    items = ws_items(args, split)
    meta["ws"] = {"personas": args.targets, "paths": {n: WS_PATHS[n] for n in args.targets}, "rounds": args.repeat,
                  "quick": args.quick, "connections": WS_CONNECTIONS, "size": tools.WS_MESSAGE_SIZE,
                  "in_flight": dict(tools.WS_IN_FLIGHT), "warmup": tools.WS_WARMUP,
                  "uvicorn_ws": ws_targets.UVICORN_WS, "node_ws": ws_targets.node_ws_version(),
                  "http_job": list(HTTP_JOB), "idle_connections": args.idle_connections,
                  "peers": {t.name: t.label for t, _, _ in items if t.kind == "peer"},
                  "peer_paths": {t.name: t.path for t, _, _ in items if t.kind == "peer"}}
    start_plan(items, args)
    run_plan(items, args, split, runs, cells, alternate=True, before=probe_started(items, args, cells, meta))
    print(f"  idle WebSocket connections ({args.idle_connections:,} to each)", file=sys.stderr)
    idle = []
    for target, path, protocol in idle_targets(args, split):
        r = dict(extras.idle_rss(target, args.idle_connections, ws_path=path), protocol=protocol)
        shown = f"{r['bytes_per_connection']:,.0f} bytes" if r.get("bytes_per_connection") else r.get("error")
        print(f"  {r['target']} ({protocol}): {shown}", file=sys.stderr)
        idle.append(r)
    idle += [{"target": label, "name": name, "kind": "peer", "protocol": WS, "connections": args.idle_connections,
              "error": IDLE_SKIPPED[name]} for name, label in meta["ws"]["peers"].items() if name in IDLE_SKIPPED]
    meta["ws"]["idle_rss"] = idle
