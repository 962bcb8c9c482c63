"""The sections of report.md for runs in alternating rounds: --shaping
(--shape on against off), --live-page (the page open against not) and
--compare (a build after against before)."""
from . import livepage
from .report_cells import _fmt, marked, paired_text, with_legend


# --shaping: --shape on, with requests that carry no parameters, costs at
# most this much CPU per request more than --shape off.
SHAPING_TARGET = 1.03
SHAPING_MODES = (("keepalive", "keep-alive (wrk -c64)"), ("pipeline", "16-deep pipelining (wrk -c64)"))


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
        result = marked(f"off {a:.2f} µs, on {b:.2f} µs: {ratio:.3f}", on, off)
        rows.append(f"| {measure} | {target} | {result}{paired_text(on, off)}{rps} | {met} |")
    return with_legend(rows)



def _shaping_cell(cells, name, variant, mode):
    for c in cells:
        if (c["name"], c["tool"], c["mode"], c.get("variant")) == (name, "wrk", mode, variant):
            return c
    return None


# --compare: an A/B of two builds differs by less than this in CPU per
# request (HTTP/1.1), or COMPARE_H2C_TARGET (h2c, where both builds speak it).
COMPARE_TARGET = 0.02
COMPARE_H2C_TARGET = 0.03
# (tool, mode, label, variant suffix, target) of each after/before row.
COMPARE_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)", "", COMPARE_TARGET),
                ("wrk", "pipeline", "16-deep pipelining (wrk -c64)", "", COMPARE_TARGET),
                ("ab", "close", "one request per connection (ab -c100)", "", COMPARE_TARGET),
                ("h2load", "m1", "h2c, 1 stream at once (h2load -c100 -m1)", "-h2c", COMPARE_H2C_TARGET),
                ("h2load", "m100", "h2c, 100 streams at once (h2load -c100 -m100)", "-h2c", COMPARE_H2C_TARGET))


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
    for tool, mode, label, suffix, limit in COMPARE_JOBS:
        if suffix == "-h2c" and not compare.get("h2c"):
            continue
        before, after = cell(name, tool, mode, "before" + suffix), cell(name, tool, mode, "after" + suffix)
        a, b = cpu(before), cpu(after)
        measure = f"CPU/request after vs before, {label}"
        target = f"within ±{limit:.0%}"
        if not a or not b:
            problem = (after or {}).get("error") or (before or {}).get("error") or "not measured"
            rows.append(f"| {measure} | {target} | {problem} | not measured |")
            continue
        ratio = b / a
        paired = paired_text(after, before)
        met = "yes" if abs(ratio - 1) < limit else "**no**"
        result = marked(f"before {a:.2f} µs, after {b:.2f} µs: {ratio:.3f}", after, before)
        rows.append(f"| {measure} | {target} | {result}{paired} | {met} |")
    for tool, mode, label, _, _ in COMPARE_JOBS[:2]:
        for what, over, under in ((f"hello-{name} vs hello-{floor}", (name, ""), (floor, "")),
                                  (f"hello-{name} access log on vs off", (name, "-log"), (name, ""))):
            parts = []
            for variant in ("before", "after"):
                on, off = cpu(cell(over[0], tool, mode, variant + over[1])), cpu(cell(under[0], tool, mode,
                                                                                       variant + under[1]))
                parts.append(f"{variant} {on / off:.3f}" if on and off else f"{variant} not measured")
            rows.append(f"| CPU/request, {what}, {label} | the same for both builds | {', '.join(parts)} | - |")
    return with_legend(rows)


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
            result = marked(f"off {a:.2f} µs, on {b:.2f} µs: {ratio:.3f}", on, off) + paired
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
    return with_legend(rows) + "\n\n" + "\n".join(cell_rows)
