"""--performance's section of report.md: the targets of
docs/performance.md against what the run measured, and the access log on
against off."""
from .report_cells import _cpu, _fmt, marked, table
from .report_tls_h2 import H2_JOBS, H2_PEERS, H2_TARGETS
from .targets import CALIBRATION


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
    rows += _resource_rows(perf)
    return "\n".join(["| measure | target | result | met? |", "| --- | --- | --- | --- |"] + rows)


def _resource_rows(perf):
    """The rows of --performance's measures that are not load runs: RSS per
    idle connection against nginx, the allocation count and the heart's
    micro-benchmark."""
    rows = []
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
    return rows


def access_log_table(cells):
    """The access-log pair: CPU per request with the log off, on and in
    JSON, and each ratio against off, marked where it is within noise."""
    pairs = {}
    for c in cells:
        if c.get("variant") in ("log-off", "log-on", "log-json"):
            pairs.setdefault((c["name"], c["tool"], c["mode"], c["workers"]), {})[c["variant"]] = c
    if not pairs:
        return ""
    header = ["persona", "tool", "mode", "log", "req/s", "CPU µs/req", "CPU ratio (on / off)"]
    rows = []
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
                    ratio = marked(f"{c['cpu_us_per_request'] / off['cpu_us_per_request']:.3f}", c, off)
            rows.append([f"hello-{name}", tool, mode, label, _fmt(c.get("rps")), _fmt(c.get("cpu_us_per_request"), 2),
                         ratio])
    return table(header, rows)
