"""The PNG charts of one bench run (matplotlib; none without it). Every
value axis starts at zero, so that a bar or a point is read against nothing
but zero; latencies are in µs; a bar's whisker is the range of its clean
runs, what a difference between two bars must exceed to be one."""
import os

from .report_cells import _server_cells, _us, server_cpu_count
from .report_scaling import scaling_rows


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
        for field, runs, title, name, unit in (
                ("rps", "rps_runs", f"Requests per second ({tool}, {mode}, 1 worker, median)", "rps.png",
                 "requests/s"),
                ("cpu_us_per_request", "cpu_us_runs", f"Server CPU per request ({tool}, {mode}, 1 worker, median)",
                 "cpu.png", "CPU µs per request (user + system)")):
            data = [(c["target"], c[field], c.get("limit") == "tool") for c in bars if c.get(field)]
            if not data:
                continue
            fig, ax = plt.subplots(figsize=(9, 0.5 * len(data) + 1.5))
            colors = ["tab:blue" if c.startswith("hello-") else "tab:gray" for c, _, _ in data]
            whiskers = _whiskers([c for c in bars if c.get(field)], field, runs)
            drawn = ax.barh([d[0] for d in data], [d[1] for d in data], color=colors, xerr=whiskers, capsize=3)
            for i, (_, v, bound) in enumerate(data):
                if bound:
                    drawn[i].set_hatch("//")
                ax.text(v + (whiskers[1][i] if whiskers else 0), i,
                        (f" {v:,.0f}" if v >= 10 else f" {v:.1f}") + (" tool-bound" if bound else ""),
                        va="center", fontsize=8)
            ax.set_xlabel(unit + ("; whiskers: the runs' range" if whiskers else ""))
            ax.set_title(title)
            ax.invert_yaxis()
            ax.set_xlim(left=0)
            _save(plt, fig, out, name, made)
    # Client p99 beside server p99, grouped per target, tool, mode and worker count.
    pairs = [c for c in _server_cells(cells) if c.get("p99_ms") and c.get("server_p99_ms")]
    if pairs:
        _latency_chart(plt, out, pairs, made)
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
        ax.set_ylim(bottom=0)
        ax.set_xticks(sorted({p[0] for v in series.values() for p in v}))
        ax.set_title("Requests per second against worker count")
        ax.legend(fontsize=8)
        _save(plt, fig, out, "workers.png", made)
    if meta.get("scaling"):
        _scaling_chart(plt, out, cells, meta, made)
    return made


def _whiskers(cells, field, runs):
    """The bars' error bars: from each cell's median `field` down to its
    runs' lowest and up to their highest (None without the runs)."""
    spans = []
    for c in cells:
        clean = [r for r in c.get(runs) or () if r is not None]
        spans.append((c[field] - min(clean), max(clean) - c[field]) if len(clean) >= 2 else (0, 0))
    if not any(lo or hi for lo, hi in spans):
        return None
    return [[max(lo, 0) for lo, _ in spans], [max(hi, 0) for _, hi in spans]]


def _latency_chart(plt, out, pairs, made):
    """Client p99 beside server p99 in µs, on a linear axis from zero; where
    the server's bars are too short to read beside the client's (a ratio
    over 20), a second panel shows the server's alone on its own axis."""
    client = [c["p99_ms"] * 1000 for c in pairs]
    server = [c["server_p99_ms"] * 1000 for c in pairs]
    labels = [f"{c['target']}\n{c['tool']} {c['mode']}\nw{c['workers']} c{c['connections']}"
              + (f"\n{c['variant']}" if c.get("variant") else "") for c in pairs]
    zoom = max(client + server) / min(client + server) > 20
    width = max(6, 1.3 * len(pairs) + 2)
    fig, axes = plt.subplots(1, 2 if zoom else 1, figsize=(width * (2 if zoom else 1), 5), squeeze=False)
    xs = list(range(len(pairs)))
    ax = axes[0][0]
    for offset, values, label, color in ((-0.19, client, "client p99 (load tool)", "tab:gray"),
                                         (0.19, server, "server p99 (--admin /stats service time)", "tab:blue")):
        ax.bar([x + offset for x in xs], values, 0.38, label=label, color=color)
        for x, v in zip(xs, values):
            ax.text(x + offset, v, _us(v / 1000), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, max(client + server) * 1.3)  # room for the legend above the bars
    ax.set_ylabel("p99 latency, µs (median of the runs)")
    ax.set_title("Client-side p99 against server-side p99")
    ax.legend(fontsize=8)
    if zoom:
        ax2 = axes[0][1]
        ax2.bar(xs, server, 0.5, color="tab:blue")
        for x, v in zip(xs, server):
            ax2.text(x, v, _us(v / 1000), ha="center", va="bottom", fontsize=7)
        ax2.set_ylim(0, max(server) * 1.2)
        ax2.set_ylabel("server p99, µs (median of the runs)")
        ax2.set_title("Server-side p99 alone, on its own scale")
    for a in axes[0]:
        a.set_xticks(xs)
        a.set_xticklabels(labels, fontsize=8)
    _save(plt, fig, out, "latency.png", made)


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
