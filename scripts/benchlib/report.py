"""results.json, results.csv, report.md and the charts of one bench run."""
import csv
import json
import os
import statistics

from . import livepage, plan
from .targets import CALIBRATION

# Published figures of the articles (shared/articles), for the rows of
# frameworks that cannot run here (Sanic) and for side-by-side tables.
ARTICLES = {
    "ab-close": [
        {"framework": "Flask", "persona": "flask", "peer": "flask", "rps": 534.07, "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Flask + gunicorn", "persona": "gunicorn", "peer": "gunicorn", "rps": 4319.60,
         "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Sanic (fast=True, access_log=False)", "persona": "sanic", "peer": None, "rps": 6221.97,
         "source": "000: ab -n 20000 -c 1000"},
        # Spring Boot is not packaged for Debian: live, its engine (Tomcat 10.1) with a servlet.
        {"framework": "Spring (here: Tomcat 10.1 servlet, without Spring MVC)", "persona": "spring",
         "peer": "tomcat", "rps": 5477.01, "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Tornado 6.0.2 (2 processes)", "persona": "tornado", "peer": "tornado", "rps": 1215.33,
         "source": "001: ab -c 30 -n 100000"},
        {"framework": "aiohttp", "persona": "aiohttp", "peer": "aiohttp", "rps": 1455,
         "source": "002: locust, 10 users, not ab"},
        {"framework": "Starlette (uvicorn)", "persona": "starlette", "peer": "starlette", "rps": 1539,
         "source": "002: locust, 10 users, not ab"},
    ],
    "locust-keepalive": [
        {"framework": "Flask", "persona": "flask", "peer": "flask", "rps": 463, "source": "002: locust, 10 users"},
        {"framework": "aiohttp", "persona": "aiohttp", "peer": "aiohttp", "rps": 1455, "source": "002: locust, 10 users"},
        {"framework": "Starlette (uvicorn)", "persona": "starlette", "peer": "starlette", "rps": 1539,
         "source": "002: locust, 10 users"},
    ],
}

CELL_FIELDS = ["target", "kind", "workers", "tool", "mode", "connections", "runs", "clean_runs", "rps", "p50_ms",
               "p90_ms", "p99_ms", "cpu_us_per_request", "peak_rss_kib", "requests", "failed", "non2xx",
               "bytes", "error", "server_p50_ms", "server_p90_ms", "server_p99_ms", "server_p99_9_ms",
               "server_max_ms", "server_count", "server_problems", "tool_threads", "tool_connections", "tool_busy",
               "tool_cpus_busy", "server_busy", "limit", "tool_bound_runs", "oversubscribed"]


def _fmt(value, digits=0):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def write_json(out, meta, runs, cells):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "cells": cells, "runs": runs}, f, indent=2)


def write_csv(out, cells):
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CELL_FIELDS, extrasaction="ignore")
        w.writeheader()
        for c in cells:
            w.writerow(c)


def _reference(cells, cell, name, kind):
    """The CPU per request of `name` measured like `cell`, in the same run."""
    for c in cells:
        if (c["name"], c["kind"]) == (name, kind) and not c.get("variant") and all(
                c[k] == cell[k] for k in ("tool", "mode", "workers", "connections")):
            return c.get("cpu_us_per_request")
    return None


def _ratio(value, reference):
    return f"{value / reference:.2f}" if value and reference else "-"


def server_cpu_count(meta):
    """How many CPUs served in the run of `meta`."""
    try:
        return len(plan.parse_cpus(str(meta.get("server_cpus", ""))))
    except plan.PlanError:
        return None


def _oversubscribed(cell, meta):
    if "oversubscribed" in cell:
        return cell["oversubscribed"]
    n = server_cpu_count(meta)  # a results.json written before the flag existed
    return bool(n) and cell.get("kind") != "remote" and plan.oversubscribed(cell["workers"], n)


def _pct(value):
    return f"{value:.0%}" if value is not None else "-"


def limit_text(cell):
    """Who was the limit of a cell: its busy figures and the verdict."""
    tool = cell.get("tool_busy")
    if tool is None and cell.get("tool_cpus_busy") is None:
        return "-"
    shown = f"tool {_pct(tool)}"
    if cell.get("tool_cpus_busy") is not None and (cell["tool_cpus_busy"] - (tool or 0)) >= 0.2:
        shown += f" (its CPUs {_pct(cell['tool_cpus_busy'])})"
    shown += f" / server {_pct(cell.get('server_busy'))}"
    verdict = {"tool": "**tool-bound**", "server": "server", "both": "both"}.get(cell.get("limit"))
    return f"{shown}: {verdict}" if verdict else shown


def _workers_text(cell, meta):
    return f"{cell['workers']} (oversubscribed)" if _oversubscribed(cell, meta) else str(cell["workers"])


def _rps_text(cell):
    rps = _fmt(cell.get("rps"))
    return f"{rps} (tool-bound)" if cell.get("rps") and cell.get("limit") == "tool" else rps


def tool_bound_cells(cells):
    return [c for c in cells if c.get("limit") == "tool"]


def cell_table(cells, meta=None):
    meta = meta or {}
    lines = ["| target | workers | tool | mode | req/s (median) | p50 / p90 / p99 ms | CPU µs/req | CPU vs hello-floor | "
             "CPU vs nginx | peak RSS KiB | tool / server CPU busy | runs | problems |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        lat = " / ".join(_fmt(c.get(k), 2) for k in ("p50_ms", "p90_ms", "p99_ms"))
        cpu = c.get("cpu_us_per_request")
        tool = f"{c['tool']} -t{_fmt(c['tool_threads'])}" if c.get("tool_threads") and c["tool"] in (
            "wrk", "h2load") else c["tool"]
        lines.append(f"| {c['target']} | {_workers_text(c, meta)} | {tool} | {c['mode']} | {_rps_text(c)} | {lat} | "
                     f"{_fmt(cpu, 1)} | {_ratio(cpu, _reference(cells, c, CALIBRATION, 'persona'))} | "
                     f"{_ratio(cpu, _reference(cells, c, 'nginx', 'peer'))} | {_fmt(c.get('peak_rss_kib'))} | "
                     f"{limit_text(c)} | {c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n".join(lines)


# --scaling's targets (docs/benchmarks.md): keep-alive efficiency of our
# personas at these worker counts, and req/s per server CPU against these peers.
SCALING_EFFICIENCY = ((4, 0.9), (8, 0.8))
SCALING_PEERS = (("nginx", "nginx"), ("h2o", "h2o 2.2.5 (static file)"))
SCALING_PERSONA = "sanic"


def scaling_rows(cells, meta):
    """The cells of a worker-count comparison, grouped per (target, tool,
    mode) with 1 worker among them, each with its figures: req/s per
    server CPU (the CPUs its workers could use), efficiency rps(N) / (N x
    rps(1)). Returns {(target, name, kind, tool, mode, connections):
    [(cell, figures)]}."""
    n_cpus = server_cpu_count(meta) or 1
    groups = {}
    for c in cells:
        if not c.get("variant"):
            groups.setdefault((c["target"], c["name"], c["kind"], c["tool"], c["mode"], c["connections"]),
                              []).append(c)
    out = {}
    for key, group in groups.items():
        group.sort(key=lambda c: c["workers"])
        one = next((c.get("rps") for c in group if c["workers"] == 1), None)
        if len(group) < 2 and not meta.get("scaling"):
            continue
        rows = []
        for c in group:
            rps = c.get("rps")
            cpus = min(c["workers"], n_cpus)
            rows.append((c, {"per_cpu": rps / cpus if rps else None,
                             "efficiency": rps / (c["workers"] * one) if rps and one else None}))
        out[key] = rows
    return out


def _share_text(shares):
    if not shares or len(shares) < 2:
        return "-"
    return f"{min(shares):.0%} to {max(shares):.0%} (even: {1 / len(shares):.0%})"


def scaling_table(meta, cells):
    """Requests per second, per server CPU, CPU per request, efficiency and
    each worker's share per worker count; "" without worker counts to compare."""
    rows = scaling_rows(cells, meta)
    if not rows:
        return ""
    lines = ["| target | tool | mode | connections | workers | req/s | req/s per server CPU | CPU µs/req | "
             "efficiency | workers' shares of the requests | tool / server CPU busy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (target, _, _, tool, mode, _), group in rows.items():
        for c, f in group:
            eff = f"{f['efficiency']:.2f}" if f["efficiency"] is not None else "-"
            lines.append(f"| {target} | {tool} | {mode} | {_connections_text(c)} | {_workers_text(c, meta)} | "
                         f"{_rps_text(c)} | "
                         f"{_fmt(f['per_cpu'])} | {_fmt(c.get('cpu_us_per_request'), 1)} | {eff} | "
                         f"{_share_text(c.get('worker_shares'))} | {limit_text(c)} |")
    return "\n".join(lines)


def _connections_text(cell):
    opened = cell.get("tool_connections")
    return f"{cell['connections']} ({opened} opened)" if opened and opened != cell["connections"] else str(
        cell["connections"])


def _verdict(values, bound, passed):
    """A target's verdict: "not measured" if a value is missing, "tool-bound"
    if a cell judged was (its rate is the tool's), else yes or **no**."""
    if any(v is None for v in values):
        return "not measured"
    if bound:
        return "tool-bound: not judged"
    return "yes" if passed else "**no**"


def scaling_targets(meta, cells):
    """--scaling's targets, for the worker counts this run measured. A
    tool-bound cell is not judged: its requests per second are the tool's."""
    if not meta.get("scaling"):
        return ""
    rows = scaling_rows(cells, meta)
    keepalive = {k: g for k, g in rows.items() if k[3:5] == ("wrk", "keepalive")}
    out = []
    for workers, floor in SCALING_EFFICIENCY:
        for (target, name, kind, *_), group in keepalive.items():
            if kind != "persona":
                continue
            at = [(c, f) for c, f in group if c["workers"] in (1, workers)]
            f = next((f for c, f in at if c["workers"] == workers), None)
            if f is None:
                continue
            e = f["efficiency"]
            met = _verdict([e], any(c.get("limit") == "tool" for c, _ in at), e is not None and e >= floor)
            out.append(f"| keep-alive efficiency at {workers} workers, {target} | ≥ {floor} | "
                       f"{'-' if e is None else f'{e:.2f}'} | {met} |")
    mine = next((g for k, g in keepalive.items() if k[1:3] == (SCALING_PERSONA, "persona")), None)
    for name, label in SCALING_PEERS:
        theirs = next((g for k, g in keepalive.items() if k[1:3] == (name, "peer")), None)
        if not mine or not theirs:
            continue
        per = {c["workers"]: (f["per_cpu"], c) for c, f in theirs}
        pairs = [(c["workers"], f["per_cpu"], per.get(c["workers"], (None, {}))[0],
                  c.get("limit") == "tool" or per.get(c["workers"], (None, {}))[1].get("limit") == "tool")
                 for c, f in mine]
        shown = ", ".join(f"{w}: {a / b:.2f}" + (" (tool-bound)" if bound else "") if a and b else f"{w}: -"
                          for w, a, b, bound in pairs)
        met = _verdict([x for _, a, b, _ in pairs for x in (a, b)], any(p[3] for p in pairs),
                       all(a and b and a > b for _, a, b, _ in pairs))
        out.append(f"| keep-alive req/s per server CPU, hello-{SCALING_PERSONA} over {label}, per worker count | "
                   f"> 1 at every count | {shown} | {met} |")
    if not out:
        return ""
    return "\n".join(["| measure | target | result | met? |", "| --- | --- | --- | --- |"] + out)


def _ms(value):
    """A latency in ms: three significant digits below 1 ms (the server's
    own times are microseconds), two decimals above."""
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 1 else f"{value:,.2f}"


def _server_cells(cells):
    """The cells of our personas that read the admin port, or tried to."""
    return [c for c in cells if c.get("kind") == "persona" and (
        c.get("server_p99_ms") is not None or c.get("server_problems"))]


def server_latency_table(cells):
    """The load tool's percentiles beside the server's own service time
    (--admin /stats), per target, tool and mode; "" if no cell has them."""
    rows = _server_cells(cells)
    if not rows:
        return ""
    lines = ["| target | workers | tool | mode | connections | client p50 / p90 / p99 ms | "
             "server p50 / p90 / p99 ms | server p99.9 / max ms | client requests | server timed | runs | problems |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in rows:
        client = " / ".join(_ms(c.get(k)) for k in ("p50_ms", "p90_ms", "p99_ms"))
        server = " / ".join(_ms(c.get(k)) for k in ("server_p50_ms", "server_p90_ms", "server_p99_ms"))
        tail = " / ".join(_ms(c.get(k)) for k in ("server_p99_9_ms", "server_max_ms"))
        problems = "; ".join(p for p in (c.get("error"), c.get("server_problems")) if p)
        lines.append(f"| {c['target']} | {c['workers']} | {c['tool']} | {c['mode']} | {c['connections']} | "
                     f"{client} | {server} | {tail} | {_fmt(c.get('requests'))} | {_fmt(c.get('server_count'))} | "
                     f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {problems} |")
    return "\n".join(lines)


def article_tables(cells):
    """The articles' rows beside the real framework and the persona here."""
    out = []
    for key, rows in ARTICLES.items():
        tool, mode = key.split("-")
        mine = {(c["kind"], c["name"]): c for c in cells
                if c["tool"] == tool and c["mode"] == mode and c["workers"] == 1 and not c.get("variant")}
        if not any(k[0] == "persona" for k in mine):
            continue
        out.append(f"### {tool}, {mode}\n")
        out.append("| framework | article req/s (their machine) | real framework here | persona here | persona / real |")
        out.append("| --- | --- | --- | --- | --- |")
        for r in rows:
            real = mine.get(("peer", r["peer"])) if r["peer"] else None
            persona = mine.get(("persona", r["persona"]))
            real_rps = real.get("rps") if real else None
            persona_rps = persona.get("rps") if persona else None
            if r["peer"] is None:
                real_text = "cannot run here: the article's figure is the only one"
            elif real is None:
                real_text = "not run"
            else:
                real_text = _fmt(real_rps) if real_rps else f"failed: {real.get('error')}"
            ratio = f"{persona_rps / real_rps:,.1f} x" if persona_rps and real_rps else "-"
            out.append(f"| {r['framework']} | {r['rps']:,.2f} ({r['source']}) | {real_text} | "
                       f"{_fmt(persona_rps) if persona else 'not run'} | {ratio} |")
        out.append("")
    return "\n".join(out)


def access_log_table(cells):
    pairs = {}
    for c in cells:
        if c.get("variant") in ("log-off", "log-on", "log-json"):
            pairs.setdefault((c["name"], c["tool"], c["mode"], c["workers"]), {})[c["variant"]] = c
    if not pairs:
        return ""
    lines = ["| persona | tool | mode | log | req/s | CPU µs/req | CPU ratio (on / off) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for (name, tool, mode, _), p in pairs.items():
        off = p.get("log-off")
        for label, variant in (("off", "log-off"), ("on (to a file)", "log-on"), ("JSON (to a file)", "log-json")):
            c = p.get(variant)
            if not c:
                continue
            ratio = ""
            if variant != "log-off":
                ratio = "-"
                if off and off.get("cpu_us_per_request") and c.get("cpu_us_per_request"):
                    ratio = f"{c['cpu_us_per_request'] / off['cpu_us_per_request']:.3f}"
            lines.append(f"| hello-{name} | {tool} | {mode} | {label} | {_fmt(c.get('rps'))} | "
                         f"{_fmt(c.get('cpu_us_per_request'), 2)} | {ratio} |")
    return "\n".join(lines)


def _cpu(cells, name, kind, tool, mode, variant=None):
    for c in cells:
        if (c["name"], c["kind"], c["tool"], c["mode"], c["workers"], c.get("variant")) == (
                name, kind, tool, mode, 1, variant):
            return c.get("cpu_us_per_request")
    return None


# The peers --performance runs beside nginx (targets.fast_peers). The
# targets are against the cheapest of them all, and for one request per
# connection against nginx and h2o; the other ratios are shown, not judged.
OTHER_PEERS = (("h2o", "h2o 2.2.5 (static file)"), ("go", "Go 1.19 net/http"), ("node", "Node 20 http"))
FAST_PEERS = (("nginx", "nginx"),) + OTHER_PEERS
PERFORMANCE_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)"), ("wrk", "pipeline", "16-deep pipelining (wrk -c64)"),
                    ("ab", "close", "HTTP/1.0 one request per connection (ab -c100)"))


def performance_table(meta, cells):
    """The targets of docs/performance.md against what this run measured."""
    perf = meta.get("performance")
    if not perf:
        return ""
    personas = sorted({c["name"] for c in cells if c["kind"] == "persona" and c["name"] != CALIBRATION
                       and not c.get("variant")})
    rows = []

    def row(measure, target, limit, results, strict=False):
        values = [v for _, v in results if v is not None]
        if limit is None:
            met = "-" if values else "not measured"
        elif not values:
            met = "not measured"
        else:
            ok = all((v < limit) if strict else (v <= limit) for v in values) and len(values) == len(results)
            met = "yes" if ok else "**no**"
        shown = ", ".join(f"{label} {_fmt(v, 2) if v is not None else '-'}" for label, v in results)
        rows.append(f"| {measure} | {target} | {shown} | {met} |")

    def ratios(tool, mode, name, kind):
        out = []
        for p in personas:
            mine, ref = _cpu(cells, p, "persona", tool, mode), _cpu(cells, name, kind, tool, mode)
            out.append((f"hello-{p}", mine / ref if mine and ref else None))
        return out

    def cheapest_peer(tool, mode):
        """The peer that spent the least CPU per request, as (name, label), or
        None if no peer was measured."""
        measured = [(_cpu(cells, name, "peer", tool, mode), name, label) for name, label in FAST_PEERS]
        measured = [m for m in measured if m[0]]
        return min(measured)[1:] if measured else None

    row("CPU/request, keep-alive (wrk -c64), vs hello-floor", "≤ 1.03", 1.03,
        ratios("wrk", "keepalive", CALIBRATION, "persona"))
    row("CPU/request, keep-alive (wrk -c64), vs nginx", "≤ 1.0", 1.0, ratios("wrk", "keepalive", "nginx", "peer"))
    row("CPU/request, 16-deep pipelining (wrk -c64), vs hello-floor", "≤ 1.15", 1.15,
        ratios("wrk", "pipeline", CALIBRATION, "persona"))
    row("CPU/request, 16-deep pipelining (wrk -c64), vs nginx", "≤ 0.15", 0.15,
        ratios("wrk", "pipeline", "nginx", "peer"))
    row("CPU/request, HTTP/1.0 one request per connection (ab -c100), vs nginx", "≤ 0.90", 0.90,
        ratios("ab", "close", "nginx", "peer"))
    targeted = {("ab", "close", "h2o")}
    if any((c["name"], c["kind"]) == ("h2o", "peer") for c in cells):
        row("CPU/request, HTTP/1.0 one request per connection (ab -c100), vs h2o 2.2.5 (static file)", "≤ 0.95",
            0.95, ratios("ab", "close", "h2o", "peer"))
    for tool, mode, job, limit in (("wrk", "keepalive", "keep-alive (wrk -c64)", 1.0),
                                   ("wrk", "pipeline", "16-deep pipelining (wrk -c64)", 0.10)):
        best = cheapest_peer(tool, mode)
        if best:
            row(f"CPU/request, {job}, vs the cheapest peer of nginx, h2o, Go and Node ({best[1]})",
                f"≤ {limit:.2f}", limit, ratios(tool, mode, best[0], "peer"))
    # The other servers users pick instead of us, each beside nginx.
    for name, label in OTHER_PEERS:
        if not any((c["name"], c["kind"]) == (name, "peer") for c in cells):
            continue
        for tool, mode, job in PERFORMANCE_JOBS:
            if (tool, mode, name) not in targeted:
                row(f"CPU/request, {job}, vs {label}", "-", None, ratios(tool, mode, name, "peer"))
    for mode in ("keepalive", "pipeline"):
        for variant, label in (("log-on", "access log"), ("log-json", "JSON access log")):
            results = []
            for p in sorted({c["name"] for c in cells if c.get("variant") == variant}):
                on = _cpu(cells, p, "persona", "wrk", mode, variant)
                off = _cpu(cells, p, "persona", "wrk", mode, "log-off")
                results.append((f"hello-{p}", on / off if on and off else None))
            if results:
                row(f"CPU/request, {label} to a file on vs off (wrk {mode})", "≤ 1.15", 1.15, results)
    # HTTP/2 in clear (h2c) beside h2o and nginx, against --h2's targets.
    h2_personas = sorted({c["name"] for c in cells if c["kind"] == "persona" and c.get("variant") == "h2c"})
    for mode, peer, limit in H2_TARGETS if h2_personas else ():
        theirs = _cpu(cells, peer, "peer", "h2load", mode, "h2c")
        results = [(f"hello-{p}", mine / theirs if mine and theirs else None)
                   for p, mine in ((p, _cpu(cells, p, "persona", "h2load", mode, "h2c")) for p in h2_personas)]
        row(f"CPU/request, HTTP/2 h2c ({dict((m, j) for _, m, j in H2_JOBS)[mode]}), vs {dict(H2_PEERS)[peer]}",
            f"≤ {limit:.2f}", limit, results)
    idle = {r["target"]: r for r in perf.get("idle_rss", [])}
    ours, nginx = idle.get("hello-sanic", {}), idle.get("nginx", {})
    if ours.get("bytes_per_connection") and nginx.get("bytes_per_connection"):
        ratio = ours["bytes_per_connection"] / nginx["bytes_per_connection"]
        rows.append(f"| RSS per idle keep-alive connection ({ours['connections']:,} connections), vs nginx | < 1.0 | "
                    f"hello-sanic {ours['bytes_per_connection']:,.0f} bytes, nginx "
                    f"{nginx['bytes_per_connection']:,.0f} bytes: {ratio:.2f} | {'yes' if ratio < 1 else '**no**'} |")
    else:
        rows.append(f"| RSS per idle keep-alive connection, vs nginx | < 1.0 | "
                    f"{ours.get('error') or nginx.get('error') or 'not measured'} | not measured |")
    alloc = perf.get("allocations", {})
    if alloc.get("counts"):
        total = sum(alloc["counts"].values())
        shown = ", ".join(f"{k}: {v}" for k, v in alloc["counts"].items())
        rows.append(f"| heap allocations in steady state (tests/integration/allocation_test.cc, after warm-up) | 0 | {shown} | "
                    f"{'yes' if total == 0 and alloc.get('passed') else '**no**'} |")
    else:
        rows.append(f"| heap allocations in steady state | 0 | {alloc.get('error', 'not measured')} | not measured |")
    micro = perf.get("micro_benchmark", {})
    ns = micro.get("median_ns", {})
    for depth, label in (("1", "one request"), ("16", "16 pipelined")):
        r = micro.get(f"ratio_{depth}")
        if r is None:
            rows.append(f"| micro-benchmark, heart vs llhttp_execute alone, {label} | ≤ 1.3 | "
                        f"{micro.get('error', 'not measured')} | not measured |")
            continue
        rows.append(f"| micro-benchmark, heart vs llhttp_execute alone, {label} | ≤ 1.3 | "
                    f"paired {r:.2f} (separately: {ns.get(f'heart/{depth}', 0):,.0f} ns vs "
                    f"{ns.get(f'llhttp_only/{depth}', 0):,.0f} ns) | {'yes' if r <= 1.3 else '**no**'} |")
    return "\n".join(["| measure | target | result | met? |", "| --- | --- | --- | --- |"] + rows)


# --shaping: --shape on, with requests that carry no parameters, costs at
# most this much CPU per request more than --shape off.
SHAPING_TARGET = 1.03
SHAPING_MODES = (("keepalive", "keep-alive (wrk -c64)"), ("pipeline", "16-deep pipelining (wrk -c64)"))


def paired_ratios(on_runs, off_runs):
    """Round by round, the run of `on` over the run of `off` made in the same
    round, for the rounds where both are clean (None is a run not clean)."""
    return [on / off for on, off in zip(on_runs or [], off_runs or []) if on and off]


def paired_text(on, off):
    """The rounds' own ratios of cell `on` over cell `off`, and their
    median, as a report's result goes on; "" without clean pairs."""
    pairs = paired_ratios(on.get("cpu_us_runs"), off.get("cpu_us_runs"))
    if not pairs:
        return ""
    return f"; round by round {', '.join(f'{r:.3f}' for r in pairs)} (median {statistics.median(pairs):.3f})"


def live_page_table(meta, cells):
    """--live-page's table: CPU per request with the page open over without
    it for each job, against livepage.TARGET, with the rounds' own ratios;
    "" without a --live-page run."""
    live = meta.get("live_page")
    if not live:
        return ""

    def cell(mode, variant):
        return next((c for c in cells if c.get("variant") == variant and c["mode"] == mode), None)

    rows = ["| measure | target | result | met? |", "| --- | --- | --- | --- |"]
    for mode in live["modes"]:
        off, on = cell(mode, "page-off"), cell(mode, "page-on")
        a = off.get("cpu_us_per_request") if off else None
        b = on.get("cpu_us_per_request") if on else None
        measure = f"CPU/request, page open vs not, wrk {mode} c{live['connections']}"
        target = f"within ±{livepage.TARGET:.0%}"
        if not a or not b:
            problem = (on or {}).get("error") or (off or {}).get("error") or "not measured"
            rows.append(f"| {measure} | {target} | {problem} | not measured |")
            continue
        ratio = b / a
        rps = f"; req/s {off.get('rps') or 0:,.0f} off, {on.get('rps') or 0:,.0f} on"
        met = "yes" if abs(ratio - 1) <= livepage.TARGET else "**no**"
        rows.append(f"| {measure} | {target} | off {a:.2f} µs, on {b:.2f} µs: {ratio:.3f}"
                    f"{paired_text(on, off)}{rps} | {met} |")
    return "\n".join(rows)


def _shaping_cell(cells, name, variant, mode):
    for c in cells:
        if (c["name"], c["tool"], c["mode"], c.get("variant")) == (name, "wrk", mode, variant):
            return c
    return None


# --compare: an A/B of two builds differs by less than this in CPU per request.
COMPARE_TARGET = 0.02
COMPARE_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)"), ("wrk", "pipeline", "16-deep pipelining (wrk -c64)"),
                ("ab", "close", "one request per connection (ab -c100)"))


def compare_table(meta, cells):
    """--compare: CPU per request after / before, the ratio of the medians
    against COMPARE_TARGET, the paired rounds beside it; then, for each
    build, the persona against the floor and the log on against off."""
    compare = meta.get("compare")
    if not compare:
        return ""
    name, floor = compare["persona"], compare.get("floor")

    def cell(who, tool, mode, variant):
        return next((c for c in cells if (c["name"], c["tool"], c["mode"], c.get("variant"))
                     == (who, tool, mode, variant)), None)

    def cpu(c):
        return c.get("cpu_us_per_request") if c else None

    rows = ["| measure | target | result | met? |", "| --- | --- | --- | --- |"]
    for tool, mode, label in COMPARE_JOBS:
        before, after = cell(name, tool, mode, "before"), cell(name, tool, mode, "after")
        a, b = cpu(before), cpu(after)
        measure = f"CPU/request after vs before, {label}"
        target = f"within ±{COMPARE_TARGET:.0%}"
        if not a or not b:
            problem = (after or {}).get("error") or (before or {}).get("error") or "not measured"
            rows.append(f"| {measure} | {target} | {problem} | not measured |")
            continue
        ratio = b / a
        paired = paired_text(after, before)
        met = "yes" if abs(ratio - 1) < COMPARE_TARGET else "**no**"
        rows.append(f"| {measure} | {target} | before {a:.2f} µs, after {b:.2f} µs: {ratio:.3f}{paired} | {met} |")
    for tool, mode, label in COMPARE_JOBS[:2]:
        for what, over, under in ((f"hello-{name} vs hello-{floor}", (name, ""), (floor, "")),
                                  (f"hello-{name} access log on vs off", (name, "-log"), (name, ""))):
            parts = []
            for variant in ("before", "after"):
                on, off = cpu(cell(over[0], tool, mode, variant + over[1])), cpu(cell(under[0], tool, mode,
                                                                                       variant + under[1]))
                parts.append(f"{variant} {on / off:.3f}" if on and off else f"{variant} not measured")
            rows.append(f"| CPU/request, {what}, {label} | the same for both builds | {', '.join(parts)} | - |")
    return "\n".join(rows)


def shaping_table(meta, cells):
    """--shape on against off in the same run: the ratio of the medians of
    CPU per request against SHAPING_TARGET, the paired rounds beside it,
    and the cells themselves."""
    shaping = meta.get("shaping")
    if not shaping:
        return ""
    name, param = shaping["persona"], shaping["param_path"]
    rows = ["| measure | target | result | met? |", "| --- | --- | --- | --- |"]
    cell_rows = ["| server | mode | path | req/s (median) | CPU µs/req (median) | bytes/answer (wrk, approx.) | "
                 "runs | problems |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for mode, label in SHAPING_MODES:
        off = _shaping_cell(cells, name, "shape-off", mode)
        for variant, what, targeted in (("shape-on", "no parameters", True), ("shape-param", param, False)):
            on = _shaping_cell(cells, name, variant, mode)
            measure = f"CPU/request, --shape on ({what}) vs off, {label}"
            target = f"≤ {SHAPING_TARGET:.2f}" if targeted else "none (informational)"
            a = off.get("cpu_us_per_request") if off else None
            b = on.get("cpu_us_per_request") if on else None
            if not a or not b:
                problem = (on or {}).get("error") or (off or {}).get("error") or "not measured"
                rows.append(f"| {measure} | {target} | {problem} | {'not measured' if targeted else '-'} |")
                continue
            ratio = b / a
            paired = paired_text(on, off)
            result = f"off {a:.2f} µs, on {b:.2f} µs: {ratio:.3f}{paired}"
            met = "-"
            if targeted:
                met = "yes" if ratio <= SHAPING_TARGET else "**no**"
            rows.append(f"| {measure} | {target} | {result} | {met} |")
    for mode, _ in SHAPING_MODES:
        for variant, server, path in (("shape-off", f"hello-{name}", "/"), ("shape-on", f"hello-{name} --shape", "/"),
                                      ("shape-param", f"hello-{name} --shape", param)):
            c = _shaping_cell(cells, name, variant, mode)
            if not c:
                continue
            size = c["bytes"] / c["requests"] if c.get("bytes") and c.get("requests") else None
            cell_rows.append(f"| {server} | {mode} | `{path}` | {_fmt(c.get('rps'))} | "
                             f"{_fmt(c.get('cpu_us_per_request'), 2)} | {_fmt(size, 1)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n".join(rows) + "\n\n" + "\n".join(cell_rows)


# --tls (docs/benchmarks.md): each persona's server CPU per request over a
# peer's, with the judged certificate (ECDSA P-256), at most these; the
# other key type's ratio is shown beside, not judged.
TLS_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)"), ("wrk", "pipeline", "16-deep pipelining (wrk -c64)"),
            ("ab", "close", "a full handshake per request (ab -c20)"),
            ("tls_resume", "resume", "a resumed handshake per request (tls_resume)"))
TLS_TARGETS = (("wrk", "keepalive", "nginx", 0.90), ("wrk", "keepalive", "h2o", 0.90),
               ("wrk", "pipeline", "nginx", 0.15), ("ab", "close", "nginx", 0.90), ("ab", "close", "h2o", 0.95),
               ("tls_resume", "resume", "nginx", 0.85))
TLS_PEERS = {"nginx": "nginx", "h2o": "h2o 2.2.5 (static file)"}
# RSS per idle TLS connection, a persona's over nginx's, at most this.
TLS_IDLE_TARGET = 0.75


def _variant_cell(cells, name, kind, tool, mode, variant):
    return next((c for c in cells if (c["name"], c["kind"], c["tool"], c["mode"], c.get("variant"))
                 == (name, kind, tool, mode, variant)), None)


def _variant_ratio(cells, persona, peer, tool, mode, variant):
    """(the persona's cell, the peer's, their ratio of CPU per request or None)."""
    mine = _variant_cell(cells, persona, "persona", tool, mode, variant)
    theirs = _variant_cell(cells, peer, "peer", tool, mode, variant)
    a, b = (c.get("cpu_us_per_request") if c else None for c in (mine, theirs))
    return mine, theirs, (a / b if a and b else None)


def _row(*fields):
    return "| " + " | ".join(fields) + " |"


def _problem(*cells):
    """What a figure that is missing says: the first cell's error, or "not measured"."""
    return next((c["error"] for c in cells if c and c.get("error")), None) or "not measured"


def ratio_result(persona, peer, mine, theirs, ratio, limit):
    """The result and verdict of hello-`persona`'s CPU per request over
    `peer`'s (their cells and ratio, as _variant_ratio gives them) against
    `limit`, the rounds' own ratios beside it."""
    if ratio is None:
        return _problem(mine, theirs), "not measured"
    result = (f"hello-{persona} {mine['cpu_us_per_request']:.2f} µs, {peer} {theirs['cpu_us_per_request']:.2f} µs: "
              f"{ratio:.3f}{paired_text(mine, theirs)}")
    return result, "yes" if ratio <= limit else "**no**"


def idle_result(persona, ours, peer, theirs, limit=None):
    """The result and verdict of RSS per idle connection, hello-`persona`'s
    (`ours`, an extras.idle_rss dict) over `peer`'s (`theirs`), against
    `limit` (None: informational, verdict "-")."""
    a, b = ours.get("bytes_per_connection"), theirs.get("bytes_per_connection")
    if a and b:
        result = (f"hello-{persona} {a:,.0f} bytes, {peer} {b:,.0f} bytes "
                  f"({ours['connections']:,} connections): {a / b:.2f}")
        return result, ("yes" if a / b <= limit else "**no**") if limit else "-"
    # Each side's figure or what went wrong, so that the one measured is still read.
    result = "; ".join(f"{who} {x:,.0f} bytes ({r['connections']:,} connections)" if x else
                       f"{who}: {r.get('error') or 'not measured'}"
                       for who, x, r in ((f"hello-{persona}", a, ours), (peer, b, theirs)))
    return result, "not measured" if limit else "-"


def tls_table(meta, cells):
    """--tls: each persona's CPU per request over nginx's and h2o's with the
    judged certificate, against TLS_TARGETS, the rounds' own ratios beside
    it and the other key type's ratio beside that; RSS per idle TLS
    connection against nginx's; then the cells themselves."""
    run = meta.get("tls")
    if not run:
        return ""
    keys, judged = run.get("keys", {}), run.get("judged")
    others = [k for k in keys if k != judged]
    jobs = {(tool, mode): label for tool, mode, label in TLS_JOBS}
    rows = [_row("measure", "target", f"{keys.get(judged, judged)}: result", "met?",
                 *(f"{keys.get(k, k)} (information)" for k in others)),
            _row(*["---"] * (4 + len(others)))]
    for persona in run.get("personas", []):
        for tool, mode, peer, limit in TLS_TARGETS:
            result, met = ratio_result(persona, peer, *_variant_ratio(cells, persona, peer, tool, mode, judged), limit)
            beside = []
            for kind in others:
                m, t, r = _variant_ratio(cells, persona, peer, tool, mode, kind)
                beside.append(f"{m['cpu_us_per_request']:.2f} / {t['cpu_us_per_request']:.2f} µs: {r:.3f}"
                              if r is not None else "not measured")
            rows.append(_row(f"CPU/request, {jobs[(tool, mode)]}, hello-{persona} vs {TLS_PEERS[peer]}",
                             f"≤ {limit:.2f}", result, met, *beside))
    idle = {(r.get("name"), r.get("kind")): r for r in run.get("idle_rss", [])}
    for persona in run.get("personas", []):
        ours = idle.get((persona, "persona"), {})
        for peer, limit in (("nginx", TLS_IDLE_TARGET), ("h2o", None)):
            result, met = idle_result(persona, ours, peer, idle.get((peer, "peer"), {}), limit)
            rows.append(_row(f"RSS per idle TLS connection, hello-{persona} vs {TLS_PEERS[peer]}",
                             f"≤ {limit:.2f}" if limit else "none (informational)", result, met,
                             *["-"] * len(others)))
    cell_rows = ["| server | certificate | job | req/s (median) | CPU µs/req (median) | runs | problems |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        if c.get("variant") in keys and (c["tool"], c["mode"]) in jobs:
            cell_rows.append(f"| {c['target']} | {keys[c['variant']]} | {jobs[(c['tool'], c['mode'])]} | "
                             f"{_rps_text(c)} | {_fmt(c.get('cpu_us_per_request'), 2)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n".join(rows) + "\n\n" + "\n".join(cell_rows)


def tls_text(meta):
    """What the TLS section measured, before its table."""
    run = meta["tls"]
    keys = run.get("keys", {})
    personas = ", ".join(f"hello-{p}" for p in run.get("personas", []))
    return (f"{personas} (started with `--tls --tls-cert CERT --tls-key KEY`), nginx and h2o 2.2.5, 1 worker each, "
            f"every one started once per certificate ({' and '.join(keys.values())}, self-signed for localhost, "
            "made for this run) and all at once. The clients (wrk, ab, tls_resume with `--tls-max 1.3`, Python's "
            "ssl) negotiate TLS 1.3 and send no ALPN: HTTP/1.1. nginx resumes sessions with its defaults: session tickets on, no shared session "
            "cache; h2o with its own (an internal cache and tickets), its private-key operations in its "
            "threads (`neverbleed: OFF`). Rounds alternate (each job on every target in turn, every second "
            f"round in reverse order), {run.get('rounds', '-')} rounds; each ratio divides two medians of server "
            f"CPU per request of this run, and the rounds' own ratios are shown beside it. The targets judge "
            f"{keys.get(run.get('judged'), '-')}; the other certificate's ratios are information. RSS per idle "
            "TLS connection: each connection a TLS handshake (Python's ssl) and one keep-alive request, then "
            f"idle, with the {keys.get(run.get('judged'), '-')} certificate.")


# --h2 (docs/benchmarks.md): each persona's server CPU per request over a
# peer's under h2load -c100 with -m streams at once, at most these, in
# clear (h2c) and over TLS (h2); the other ratios are shown, not judged.
H2_JOBS = (("h2load", "m1", "h2load -c100 -m1"), ("h2load", "m10", "h2load -c100 -m10"),
           ("h2load", "m100", "h2load -c100 -m100"))
H2_TARGETS = (("m100", "h2o", 0.80), ("m100", "nginx", 0.50), ("m1", "h2o", 0.90))
H2_VARIANTS = (("h2c", "h2c (prior knowledge, in clear)"), ("h2", "h2 (ALPN, TLS)"))
H2_PEERS = (("h2o", "h2o 2.2.5"), ("nginx", "nginx"), ("nghttpd", "nghttpd 1.52"), ("go", "Go 1.19 net/http"),
            ("tomcat", "Tomcat 10.1"))
# RSS per idle HTTP/2 connection, a persona's over nginx's, at most this.
H2_IDLE_TARGET = 1.0


def h2_target_row(cells, persona, mode, peer, limit, variant):
    """One judged row of H2_TARGETS: measure, target, result and verdict of
    hello-`persona`'s CPU per request over `peer`'s, `variant` ("h2c", "h2")."""
    jobs, peers, variants = {m: j for _, m, j in H2_JOBS}, dict(H2_PEERS), dict(H2_VARIANTS)
    result, met = ratio_result(persona, peer, *_variant_ratio(cells, persona, peer, "h2load", mode, variant), limit)
    return _row(f"CPU/request, {variants[variant]}, {jobs[mode]}, hello-{persona} vs {peers[peer]}",
                f"≤ {limit:.2f}", result, met)


def h2_table(meta, cells):
    """--h2: each persona's CPU per request over h2o's and nginx's against
    H2_TARGETS, h2c and h2, with the rounds' own ratios; RSS per idle
    HTTP/2 connection against nginx's; every ratio to every peer; then the
    cells themselves."""
    run = meta.get("h2")
    if not run:
        return ""
    personas = run.get("personas", [])
    rows = [_row("measure", "target", "result", "met?"), _row(*["---"] * 4)]
    for persona in personas:
        for variant, _ in H2_VARIANTS:
            rows += [h2_target_row(cells, persona, mode, peer, limit, variant) for mode, peer, limit in H2_TARGETS]
    idle = {(r.get("name"), r.get("kind"), r.get("variant")): r for r in run.get("idle_rss", [])}
    for persona in personas:
        for variant, protocol in H2_VARIANTS:
            ours = idle.get((persona, "persona", variant), {})
            for peer, label in H2_PEERS:
                theirs = idle.get((peer, "peer", variant))
                if theirs is None and peer != "nginx":
                    continue  # not measured for this peer (Tomcat) or protocol (Go in clear)
                limit = H2_IDLE_TARGET if peer == "nginx" else None
                result, met = idle_result(persona, ours, peer, theirs or {}, limit)
                rows.append(_row(f"RSS per idle HTTP/2 connection, {protocol}, hello-{persona} vs {label}",
                                 f"≤ {limit:.2f}" if limit else "none (informational)", result, met))
    peers = [(name, label) for name, label in H2_PEERS if any(c["name"] == name and c["kind"] == "peer"
                                                               for c in cells)]
    ratio_rows = [_row("protocol", "job", *(f"hello-{p} µs" for p in personas),
                       *(f"{label} µs (hello-{personas[0]} / it)" if personas else label for _, label in peers)),
                  _row(*["---"] * (2 + len(personas) + len(peers)))]
    for variant, protocol in H2_VARIANTS:
        for tool, mode, job in H2_JOBS:
            mine = [_variant_cell(cells, p, "persona", tool, mode, variant) for p in personas]
            shown = [_fmt(c.get("cpu_us_per_request"), 2) if c else "-" for c in mine]
            for name, _ in peers:
                theirs = _variant_cell(cells, name, "peer", tool, mode, variant)
                a = mine[0].get("cpu_us_per_request") if mine and mine[0] else None
                b = theirs.get("cpu_us_per_request") if theirs else None
                shown.append(f"{b:.2f} ({a / b:.3f})" if a and b else _fmt(b, 2) if b else
                             "not run" if theirs is None else "-")
            ratio_rows.append(_row(protocol, job, *shown))
    cell_rows = ["| server | protocol | job | req/s (median) | CPU µs/req (median) | runs | problems |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
    jobs, variants = {(t, m): j for t, m, j in H2_JOBS}, dict(H2_VARIANTS)
    for c in cells:
        if c.get("variant") in variants and (c["tool"], c["mode"]) in jobs:
            cell_rows.append(f"| {c['target']} | {c['variant']} | {jobs[(c['tool'], c['mode'])]} | "
                             f"{_rps_text(c)} | {_fmt(c.get('cpu_us_per_request'), 2)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n\n".join("\n".join(part) for part in (rows, ratio_rows, cell_rows))


def h2_text(meta):
    """What the HTTP/2 section measured, before its table."""
    run = meta["h2"]
    personas = ", ".join(f"hello-{p}" for p in run.get("personas", []))
    text = (f"{personas} (started with `--h2`, and over TLS `--h2 --tls --tls-cert CERT --tls-key KEY`), h2o "
            "2.2.5, nginx 1.22 (`listen ... http2`), nghttpd 1.52 (`nghttp2-server`), Go 1.19 net/http (over TLS "
            "only: its h2c needs golang.org/x/net) and Tomcat 10.1 (`Http2Protocol` on its connector), 1 worker "
            "each (Tomcat 10 request threads, Spring Boot's at start: with one, its HTTP/2 stalls), every one "
            "started once in clear (h2c by prior knowledge) and once over TLS (h2 by ALPN, "
            f"{run.get('key', '-')}, self-signed, made for this run), all at once. h2load -c100 with -m1, -m10 "
            "and -m100 streams at once on each connection, for the run's duration each. Rounds alternate (each "
            "job on every target in turn, every second round in reverse order), "
            f"{run.get('rounds', '-')} rounds; each ratio divides two medians of server CPU per request of this "
            "run (user + system time from `/proc` over the requests completed), and the rounds' own ratios are "
            f"shown beside it. RSS per idle HTTP/2 connection: {run.get('idle_connections', '-'):,} connections "
            "(python3-h2, loopback), each one request, then idle; the personas with `--keepalive-timeout 75` "
            "(nginx's keepalive_timeout) so that none closes before its RSS is read; a measure where any closed "
            "is a problem, not a figure. Tomcat's (a JVM heap) is not measured.")
    if run.get("quick"):
        text = (f"**`--quick`: every target and job {run.get('rounds', '-')} times for {meta.get('load', '-')}: a "
                "check that everything starts and is measured, not a measurement.** " + text)
    return text


def charts(out, cells, meta=None):
    """PNG charts; returns their file names (empty if matplotlib is missing).
    A tool-bound cell is marked in every chart it is in."""
    meta = meta or {}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    clean = [c for c in cells if c.get("rps") and not c.get("variant")]
    if not clean:
        return made
    # One configuration for the bars: the most common (tool, mode) at 1 worker.
    configs = {}
    for c in clean:
        if c["workers"] == 1:
            configs[(c["tool"], c["mode"])] = configs.get((c["tool"], c["mode"]), 0) + 1
    if configs:
        tool, mode = max(configs, key=configs.get)
        bars = [c for c in clean if c["workers"] == 1 and c["tool"] == tool and c["mode"] == mode]
        for field, title, name, unit in (
                ("rps", f"Requests per second ({tool}, {mode}, 1 worker, median)", "rps.png", "requests/s"),
                ("cpu_us_per_request", f"Server CPU per request ({tool}, {mode}, 1 worker, median)", "cpu.png",
                 "CPU µs per request (user + system)")):
            data = [(c["target"], c[field], c.get("limit") == "tool") for c in bars if c.get(field)]
            if not data:
                continue
            fig, ax = plt.subplots(figsize=(9, 0.5 * len(data) + 1.5))
            colors = ["tab:blue" if c.startswith("hello-") else "tab:gray" for c, _, _ in data]
            drawn = ax.barh([d[0] for d in data], [d[1] for d in data], color=colors)
            for i, (_, v, bound) in enumerate(data):
                if bound:
                    drawn[i].set_hatch("//")
                ax.text(v, i, (f" {v:,.0f}" if v >= 10 else f" {v:.1f}") + (" tool-bound" if bound else ""),
                        va="center", fontsize=8)
            ax.set_xlabel(unit)
            ax.set_title(title)
            ax.invert_yaxis()
            _save(plt, fig, out, name, made)
    # Client p99 beside server p99, grouped per target, tool, mode and worker count.
    pairs = [c for c in _server_cells(cells) if c.get("p99_ms") and c.get("server_p99_ms")]
    if pairs:
        fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(pairs) + 2), 5))
        xs = list(range(len(pairs)))
        width = 0.38
        client = [c["p99_ms"] for c in pairs]
        server = [c["server_p99_ms"] for c in pairs]
        ax.bar([x - width / 2 for x in xs], client, width, label="client p99 (load tool)", color="tab:gray")
        ax.bar([x + width / 2 for x in xs], server, width, label="server p99 (--admin /stats service time)",
               color="tab:blue")
        for x, v in zip(xs, client):
            ax.text(x - width / 2, v, f"{_ms(v)}", ha="center", va="bottom", fontsize=7)
        for x, v in zip(xs, server):
            ax.text(x + width / 2, v, f"{_ms(v)}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{c['target']}\n{c['tool']} {c['mode']}\nw{c['workers']} c{c['connections']}"
                            + (f"\n{c['variant']}" if c.get("variant") else "") for c in pairs], fontsize=8)
        top = max(client + server)
        if top / min(client + server) > 20:
            ax.set_yscale("log")
            ax.set_ylim(top=top * 8)  # room for the legend above the bars
        else:
            ax.set_ylim(top=top * 1.3)
        ax.set_ylabel("p99 latency, ms (median of the runs)")
        ax.set_title("Client-side p99 against server-side p99")
        ax.legend(fontsize=8)
        _save(plt, fig, out, "latency.png", made)
    # Requests per second against worker count, one line per target and configuration.
    series = {}
    for c in clean:
        series.setdefault((c["target"], c["tool"], c["mode"], c["connections"]), []).append((c["workers"], c["rps"], c))
    series = {k: sorted(v, key=lambda p: p[0]) for k, v in series.items() if len(v) > 1}
    n_cpus = server_cpu_count(meta)
    if series:
        fig, ax = plt.subplots(figsize=(8, 5))
        for (target, tool, mode, conns), points in sorted(series.items()):
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                    label=f"{target} ({tool}, {mode}, c{conns})")
        _mark_limits(ax, [p for v in series.values() for p in v], n_cpus)
        ax.set_xlabel("workers")
        ax.set_ylabel("requests/s (median)")
        ax.set_xticks(sorted({p[0] for v in series.values() for p in v}))
        ax.set_title("Requests per second against worker count")
        ax.legend(fontsize=8)
        _save(plt, fig, out, "workers.png", made)
    if meta.get("scaling"):
        _scaling_chart(plt, out, cells, meta, made)
    return made


def _mark_limits(ax, points, n_cpus):
    """Rings the tool-bound points (workers, rps, cell) and shades the
    worker counts beyond the server's CPUs."""
    bound = [(w, r) for w, r, c in points if c.get("limit") == "tool"]
    if bound:
        ax.scatter([b[0] for b in bound], [b[1] for b in bound], s=160, facecolors="none", edgecolors="black",
                   linewidths=2, zorder=5, label="tool-bound: the load tool was the limit")
    top = max((w for w, _, _ in points), default=0)
    if n_cpus and top > n_cpus:
        ax.axvspan(n_cpus + 0.5, top + 0.5, color="0.9", zorder=0, label=f"oversubscribed (> {n_cpus} server CPUs)")


def _scaling_chart(plt, out, cells, meta, made):
    """--scaling: req/s per server CPU and efficiency against workers, one
    column per mode, tool-bound points ringed."""
    rows = scaling_rows(cells, meta)
    modes = sorted({k[4] for k in rows}, key=lambda m: ("keepalive", "close").index(m) if m in (
        "keepalive", "close") else 9)
    if not modes:
        return
    fig, axes = plt.subplots(2, len(modes), figsize=(6 * len(modes), 8), squeeze=False)
    counts = sorted({c["workers"] for g in rows.values() for c, _ in g})
    for col, mode in enumerate(modes):
        for row, (field, ylabel) in enumerate((("per_cpu", "requests/s per server CPU (median)"),
                                                ("efficiency", "efficiency: rps(N) / (N x rps(1))"))):
            ax = axes[row][col]
            points = []
            for (target, _, _, _, m, _), group in sorted(rows.items()):
                if m != mode:
                    continue
                xs = [(c["workers"], f[field], c) for c, f in group if f[field] is not None]
                ax.plot([x[0] for x in xs], [x[1] for x in xs], marker="o", label=target)
                points += xs
            _mark_limits(ax, points, server_cpu_count(meta))
            if field == "efficiency":
                ax.axhline(1.0, color="0.5", linestyle="--", linewidth=1)
                ax.set_ylim(0, 1.2)
            else:
                ax.set_ylim(bottom=0)
            ax.set_xticks(counts)
            ax.set_xlabel("workers")
            ax.set_ylabel(ylabel)
            ax.set_title(f"wrk {mode}, {meta['scaling'].get('connections')} connections")
            ax.legend(fontsize=7)
    if server_cpu_count(meta) == 1:
        fig.suptitle("One server CPU: this run can show no scaling")
    _save(plt, fig, out, "scaling.png", made)


def _save(plt, fig, out, name, made):
    """Writes a finished chart to OUT/NAME and lists it in `made`."""
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=100)
    plt.close(fig)
    made.append(name)


def write_markdown(out, meta, cells, chart_files):
    problems = [c for c in cells if c.get("error")]
    parts = [f"# Bench run {meta['started']}", "",
             f"Machine: {meta['nproc']} CPUs, {meta['cpu_model']}, kernel {meta['kernel']}. "
             f"Server on CPU {meta['server_cpus']}, load tool on CPU {meta['tool_cpus']} (`taskset`). "
             f"Each cell is the median of {meta['repeat']} runs of {meta['load']}, {meta['connections']} connections.",
             "", f"Command: `{meta['command']}`", ""]
    if problems:
        parts += ["## Problems", "", "These cells are not clean; their medians use only the clean runs, if any.", ""]
        parts += [f"- {c['target']} ({c['tool']}, {c['mode']}, workers {c['workers']}): {c['error']}" for c in problems]
        parts.append("")
    parts += limits_section(meta, cells)
    scaling = scaling_table(meta, cells)
    if scaling:
        parts += ["## Scaling", "", scaling_text(meta), "", scaling, ""]
        judged = scaling_targets(meta, cells)
        if judged:
            parts += ["Targets of `--scaling` (docs/benchmarks.md):", "", judged, ""]
        if "scaling.png" in chart_files:
            parts += ["Chart: [scaling.png](scaling.png).", ""]
    targets = performance_table(meta, cells)
    if targets:
        parts += ["## Performance targets", "",
                  "Ratios of server CPU per request, each against a reference measured in this run "
                  "(medians). The micro-benchmark interleaves its cases at random "
                  f"({meta['performance'].get('micro_benchmark', {}).get('repetitions', '-')} repetitions, "
                  "pinned to the server CPU); its ratio is the median of the paired case, which times "
                  "short bursts of each side a fraction of a millisecond apart.", "", targets, ""]
    shaping = shaping_table(meta, cells)
    if shaping:
        parts += ["## Shaping's fast path", "",
                  f"hello-{meta['shaping']['persona']}, 1 worker, started three times at once: without "
                  "`--shape`, with it, and with it for requests to "
                  f"`{meta['shaping']['param_path']}`. Rounds alternate (each job on the three in turn, "
                  f"every second round in reverse order), {meta['shaping']['rounds']} rounds; each ratio "
                  "divides two medians of this run, and the rounds' own ratios (the runs of one round, "
                  "seconds apart) are shown beside it.", "", shaping, ""]
    live = live_page_table(meta, cells)
    if live:
        parts += ["## The live page's cost", "", livepage.text(meta), "", live, ""]
    compare = compare_table(meta, cells)
    if compare:
        parts += ["## Before and after", "",
                  f"hello-{meta['compare']['persona']}, 1 worker, from two builds started at once: before "
                  f"`{meta['compare']['before']}`, after `{meta['compare']['after']}`. Rounds alternate "
                  f"(every second round in reverse order), {meta['compare']['rounds']} rounds; each ratio "
                  "divides two medians of this run, and the rounds' own ratios are shown beside it.", "",
                  compare, ""]
    tls = tls_table(meta, cells)
    if tls:
        parts += ["## TLS", "", tls_text(meta), "", tls, ""]
    h2 = h2_table(meta, cells)
    if h2:
        parts += ["## HTTP/2", "", h2_text(meta), "", h2, ""]
    articles = article_tables(cells)
    if articles:
        parts += ["## Beside the articles", "", articles]
    log = access_log_table(cells)
    if log:
        parts += ["## Access log on and off", "", log, ""]
    server = server_latency_table(cells)
    if server:
        parts += ["## Client-side and server-side latency", "",
                  "The load tool's percentiles (time from sending a request to reading its answer, on the "
                  "tool's CPU) beside the server's own service time: `POST /stats/reset` on the persona's "
                  "`--admin` port before each run, `GET /stats` right after it, `total.service_time_us` "
                  "(first byte of a request to its answer handed to the kernel, docs/observability.md). "
                  "Medians over the clean runs. The server times every answer it wrote, a few more than "
                  "the tool read before it stopped."
                  + (" Chart: [latency.png](latency.png)." if "latency.png" in chart_files else ""), "",
                  server, ""]
    parts += ["## All cells", "", cell_table(cells, meta), ""]
    if chart_files:
        parts += ["## Charts", ""] + [f"![{name}]({name})" for name in chart_files] + [""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(parts))


def limits_section(meta, cells):
    """What the load tool was and who was the limit of each cell: how many
    cells were tool-bound, which, and the notes a reader needs first (a
    single-threaded ab, shared CPUs, more workers than server CPUs)."""
    tools_used = sorted({c["tool"] for c in cells})
    threads = sorted({c["tool_threads"] for c in cells if c.get("tool_threads") and c["tool"] in ("wrk", "h2load")})
    tool_cpus = len(plan.parse_cpus(str(meta["tool_cpus"]))) if meta.get("tool_cpus") else None
    lines = ["## Who was the limit", ""]
    about = [f"The load tool ran on {tool_cpus} CPU{'s' if tool_cpus != 1 else ''}"
             + (f" ({' and '.join(t for t in ('wrk', 'h2load') if t in tools_used)} with "
                f"{', '.join(map(str, threads))} thread{'s' if threads != [1] else ''}, "
                "connections divided evenly among them)" if threads else "") + "."]
    if "ab" in tools_used:
        about.append("ab is single-threaded: it keeps at most one CPU busy"
                     + (f", whatever the {tool_cpus} load CPUs" if tool_cpus and tool_cpus > 1 else "") + ".")
    shared = set()
    try:
        shared = set(plan.parse_cpus(str(meta["server_cpus"]))) & set(plan.parse_cpus(str(meta["tool_cpus"])))
    except (KeyError, plan.PlanError):
        pass
    if shared:
        about.append(f"**The server and the load tool shared CPU {plan.cpu_text(shared)}**: neither side's "
                     "figures are its own.")
    over = sorted({c["workers"] for c in cells if _oversubscribed(c, meta)})
    if over:
        n = server_cpu_count(meta)
        about.append(f"**Oversubscribed**: {', '.join(map(str, over))} workers on {n} server "
                     f"CPU{'s' if n != 1 else ''}; such workers share CPUs, and their cells are marked.")
    measured = [c for c in cells if c.get("tool_busy") is not None or c.get("tool_cpus_busy") is not None]
    bound = tool_bound_cells(cells)
    if not measured:
        lines += [" ".join(about), "", "This run has no CPU figures of the load tool.", ""]
        return lines
    about.append(f"**{len(bound)} of {len(measured)} cells were tool-bound**: the load tool used at least "
                 f"{plan.BUSY:.0%} of the CPUs it can keep busy (its threads, at most its CPUs; or its CPUs were "
                 "that busy counting everything that ran on them) and the server used less than "
                 f"{plan.BUSY:.0%} of its CPUs (its workers, at most its CPUs). Their requests per second are "
                 "what the tool could send, not what the server could answer; their CPU per request is "
                 "still the server's.")
    lines += [" ".join(about), ""]
    if bound:
        lines += [f"- {c['target']} (workers {c['workers']}, {c['tool']} {c['mode']} c{c['connections']}): "
                  f"{limit_text(c)}" for c in bound]
        lines.append("")
    return lines


def scaling_text(meta):
    """What the scaling table shows, and, on one server CPU, that it can show no scaling."""
    n = server_cpu_count(meta)
    text = ("Each worker count's cells side by side. Req/s per server CPU divides by the CPUs the workers "
            "could use (the workers, at most the server CPUs); efficiency is rps(N) / (N x rps(1)); the "
            "workers' shares are each worker's part of the requests it answered (`/stats`, our personas): "
            "how evenly `SO_REUSEPORT` spread the connections.")
    scaling = meta.get("scaling")
    if scaling:
        counts = scaling["workers"]
        text = (f"`--scaling`: {', '.join(map(str, counts))} worker{'s' if counts != [1] else ''}, every target "
                "started with "
                "as many (personas `--workers N`, nginx `worker_processes N`, h2o `num-threads: N`) and "
                f"run in turn, repeat by repeat, under wrk keep-alive and one request per connection "
                f"(`Connection: close`), {scaling['connections']} connections. " + text)
    if n == 1:
        text = ("**One server CPU: this run can show no scaling.** Every worker beyond the first would share "
                "that CPU; run `scripts/bench --scaling` on a machine with at least 4 CPUs (2 serving) to "
                "compare worker counts. " + text)
    return text
