"""The --ws section of report.md: each persona's server CPU per echoed
WebSocket message against the cheapest peer's and against its own HTTP/1.1
keep-alive request, its RSS per idle WebSocket connection against its idle
HTTP/1.1 one, and every server's figures."""
from .report_cells import _fmt, _rps_text, with_legend
from .report_tls_h2 import ratio_result

# --ws's jobs in the report (benchlib.run_ws.WS_JOBS, HTTP_JOB).
WS_JOBS = (("ws1", "1 message in flight"), ("ws16", "16 messages in flight"))
HTTP_JOB = ("wrk", "keepalive")
# The targets (issue 37): a persona's CPU per message over the cheapest
# peer's, with 1 and with 16 in flight, at most these; with 1 in flight
# over its own HTTP/1.1 keep-alive request's, at most WS_HTTP_TARGET; its
# RSS per idle WebSocket connection at most its idle HTTP/1.1 one's plus
# WS_IDLE_MARGIN bytes.
WS_PEER_TARGETS = (("ws1", 0.60), ("ws16", 0.20))
WS_HTTP_TARGET = 1.20
WS_IDLE_MARGIN = 512


def _row(*fields):
    return "| " + " | ".join(fields) + " |"


def _cell(cells, name, kind, tool, mode, variant):
    return next((c for c in cells if (c["name"], c["kind"], c["tool"], c["mode"], c.get("variant"))
                 == (name, kind, tool, mode, variant)), None)


def _cpu(cell):
    return cell.get("cpu_us_per_request") if cell else None


def _problem(*cells):
    return next((c["error"] for c in cells if c and c.get("error")), None) or "not measured"


def ws_cell(cells, name, kind, mode):
    """The WebSocket cell of `name` (a persona or peer) under `mode` ("ws1", "ws16")."""
    return _cell(cells, name, kind, "ws_load", mode, "ws")


def cheapest_peer(cells, mode):
    """The peer's cell with the least server CPU per message under `mode`, or None."""
    measured = [c for c in cells if c["kind"] == "peer" and c["tool"] == "ws_load" and c["mode"] == mode
                and c.get("variant") == "ws" and _cpu(c)]
    return min(measured, key=_cpu, default=None)


def peer_result(cells, persona, mode, limit):
    """The result and verdict of hello-`persona`'s CPU per message over the
    cheapest peer's under `mode`, against `limit`."""
    mine, theirs = ws_cell(cells, persona, "persona", mode), cheapest_peer(cells, mode)
    if not _cpu(mine) or not theirs:
        return _problem(mine) if not _cpu(mine) else "no peer measured", "not measured"
    return ratio_result(persona, theirs["target"], mine, theirs, _cpu(mine) / _cpu(theirs), limit)


def http_result(cells, persona, limit=WS_HTTP_TARGET):
    """The result and verdict of hello-`persona`'s CPU per message with 1
    in flight over its own HTTP/1.1 keep-alive request's."""
    mine = ws_cell(cells, persona, "persona", "ws1")
    http = _cell(cells, persona, "persona", *HTTP_JOB, "http1")
    if not _cpu(mine) or not _cpu(http):
        return _problem(mine, http), "not measured"
    return ratio_result(persona, "its HTTP/1.1 request", mine, http, _cpu(mine) / _cpu(http), limit)


def idle_result(idle, persona, margin=WS_IDLE_MARGIN):
    """The result and verdict of hello-`persona`'s RSS per idle WebSocket
    connection against its idle HTTP/1.1 one's plus `margin` bytes; `idle`
    is meta["ws"]["idle_rss"]."""
    ws, http = ({r.get("protocol"): r for r in idle if (r.get("name"), r.get("kind")) == (persona, "persona")}
                .get(p, {}) for p in ("ws", "http1"))
    a, b = ws.get("bytes_per_connection"), http.get("bytes_per_connection")
    if a is None or b is None:
        return "; ".join(f"{who}: {r.get('error') or 'not measured'}" for who, r, x in (
            ("WebSocket", ws, a), ("HTTP/1.1", http, b)) if x is None), "not measured"
    result = (f"WebSocket {a:,.0f} bytes, HTTP/1.1 {b:,.0f} bytes ({ws['connections']:,} connections each): "
              f"{a - b:+,.0f} bytes")
    return result, "yes" if a <= b + margin else "**no**"


def _idle_of(idle, name, kind):
    r = next((r for r in idle if (r.get("name"), r.get("kind"), r.get("protocol")) == (name, kind, "ws")), None)
    if not r:
        return "-"
    return f"{r['bytes_per_connection']:,.0f}" if r.get("bytes_per_connection") is not None else r.get("error", "-")


def servers_table(run, cells):
    """Every WebSocket server: its CPU per message and messages per second
    with 1 and 16 in flight (the first persona's ratio to each peer beside
    a peer's CPU), its RSS per idle WebSocket connection, its problems."""
    personas, idle = run.get("personas", []), run.get("idle_rss", [])
    first = personas[0] if personas else None
    servers = [(p, "persona", f"hello-{p}", run.get("paths", {}).get(p, "-")) for p in personas]
    servers += [(name, "peer", label, run.get("peer_paths", {}).get(name, "-")) for name, label in
                run.get("peers", {}).items()]
    head = ["server", "path"]
    for _, job in WS_JOBS:
        head += [f"{job}: CPU µs/message" + (f" (hello-{first} / it)" if first else ""), f"{job}: messages/s"]
    head += ["RSS bytes per idle WebSocket connection", "runs", "problems"]
    rows = [_row(*head), _row(*["---"] * len(head))]
    for name, kind, label, path in servers:
        shown, problems, runs = [], [], []
        for mode, _ in WS_JOBS:
            c = ws_cell(cells, name, kind, mode)
            mine = _cpu(ws_cell(cells, first, "persona", mode)) if first else None
            cpu = _cpu(c)
            text = _fmt(cpu, 2)
            if cpu and mine and kind == "peer":
                text += f" ({mine / cpu:.3f})"
            shown += [text, _rps_text(c) if c else "-"]
            runs.append(f"{c.get('clean_runs', 0)}/{c.get('runs', 0)}" if c else "-")
            if c and c.get("error") and c["error"] not in problems:
                problems.append(c["error"])
        rows.append(_row(label, f"`{path}`", *shown, _idle_of(idle, name, kind), ", ".join(runs), "; ".join(problems)))
    return "\n".join(rows)


def http_lines(run, cells):
    """Each persona's HTTP/1.1 keep-alive reference, in one line each."""
    lines = []
    for p in run.get("personas", []):
        c = _cell(cells, p, "persona", *HTTP_JOB, "http1")
        if c:
            lines.append(f"- hello-{p} HTTP/1.1 keep-alive (wrk -c{c.get('connections', '-')}, `/`): "
                         f"{_fmt(_cpu(c), 2)} µs per request, {_rps_text(c)} requests/s"
                         + (f"; {c['error']}" if c.get("error") else ""))
    return "\n".join(lines)


def ws_table(meta, cells):
    """--ws: each persona's targets (CPU per message over the cheapest
    peer's with 1 and 16 in flight, over its own HTTP/1.1 request's; idle
    RSS over its HTTP/1.1 one's), every server's figures, the HTTP/1.1
    references, and the servers that did not echo the probe."""
    run = meta.get("ws")
    if not run:
        return ""
    jobs = dict(WS_JOBS)
    rows = [_row("measure", "target", "result", "met?"), _row(*["---"] * 4)]
    for persona in run.get("personas", []):
        for mode, limit in WS_PEER_TARGETS:
            rows.append(_row(f"CPU/message, {jobs[mode]}, hello-{persona} vs the cheapest peer", f"≤ {limit:.2f}",
                             *peer_result(cells, persona, mode, limit)))
        rows.append(_row(f"CPU/message, {jobs['ws1']}, hello-{persona} vs its HTTP/1.1 keep-alive request",
                         f"≤ {WS_HTTP_TARGET:.2f}", *http_result(cells, persona)))
        rows.append(_row(f"RSS per idle WebSocket connection, hello-{persona} vs its idle HTTP/1.1 connection",
                         f"≤ HTTP/1.1 + {WS_IDLE_MARGIN} bytes", *idle_result(run.get("idle_rss", []), persona)))
    parts = [with_legend(rows), servers_table(run, cells)]
    http = http_lines(run, cells)
    if http:
        parts.append("The personas' HTTP/1.1 reference, in the same rounds:\n\n" + http)
    failed = [r for r in run.get("probe") or [] if r.get("error")]
    if failed:
        parts.append("Not measured, the probe before the rounds having failed:\n\n" + "\n".join(
            f"- {r['target']} at `{r.get('path')}`: {r['error']}" for r in failed))
    return "\n\n".join(parts)


def ws_text(meta):
    """What the WebSocket section measured, before its table."""
    run = meta["ws"]
    personas = ", ".join(f"hello-{p} (`{run.get('paths', {}).get(p, '-')}`)" for p in run.get("personas", []))
    in_flight = " and ".join(str(k) for k in (run.get("in_flight") or {}).values())
    text = (f"{personas} beside {', '.join((run.get('peers') or {}).values())}, 1 worker each (Tomcat 10 request "
            "threads, Spring Boot's at start), all started at once; each WebSocket server first asked to echo one "
            f"message. build/tests/ws_load opens {run.get('connections', '-')} connections, upgrades them (no "
            f"extension offered, so none negotiates permessage-deflate) and keeps {in_flight} text messages of "
            f"{run.get('size', '-')} bytes in flight on each, for the run's duration ({meta.get('load', '-')}, "
            f"warm-up {run.get('warmup', 0)} s: the server's CPU time from `/proc` is read over the whole run and "
            "divided by the messages echoed in it). Starlette runs on uvicorn's "
            f"`{run.get('uvicorn_ws', '-')}` WebSocket protocol (`UVICORN_WS`); Node's ws is "
            f"{run.get('node_ws', '-')} from npm, without its optional native add-ons. Beside them, in the same "
            f"rounds, each persona's HTTP/1.1 keep-alive request at `/` (wrk -c{run.get('connections', '-')}). "
            "Rounds alternate (each job on every target in turn, every second round in reverse order), "
            f"{run.get('rounds', '-')} rounds; each ratio divides two medians of this run, and the rounds' own "
            f"ratios are shown beside it. RSS per idle WebSocket connection: {run.get('idle_connections', 0):,} "
            "connections, each upgraded and then idle (Tomcat's not measured: a JVM's RSS follows its heap); the "
            "personas' idle HTTP/1.1 connections likewise, one keep-alive request each (the personas started with "
            "`--keepalive-timeout 75` for both). A figure that is missing reads \"not measured\".")
    if run.get("quick"):
        text = (f"**`--quick`: every target and job in {run.get('rounds', '-')} round(s) of {meta.get('load', '-')}: a "
                "check that everything starts and is measured, not a measurement.** " + text)
    return text
