"""--scaling's section of report.md: the table of worker counts, its
targets and the text above them."""
from .report_cells import _fmt, _rps_text, _workers_text, limit_text, server_cpu_count, table


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
    header = ["target", "tool", "mode", "connections", "workers", "req/s", "req/s per server CPU", "CPU µs/req",
              "efficiency", "workers' shares of the requests", "tool / server CPU busy"]
    lines = []
    for (target, _, _, tool, mode, _), group in rows.items():
        for c, f in group:
            eff = f"{f['efficiency']:.2f}" if f["efficiency"] is not None else "-"
            lines.append([target, tool, mode, _connections_text(c), _workers_text(c, meta), _rps_text(c),
                          _fmt(f["per_cpu"]), _fmt(c.get("cpu_us_per_request"), 1), eff,
                          _share_text(c.get("worker_shares")), limit_text(c)])
    return table(header, lines)


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
