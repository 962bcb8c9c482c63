"""What the report's sections share: number formats (latencies in µs), the
reference cells a ratio divides by, the mark of a difference within the
runs' spread, who was the limit of a cell, the rounds' paired ratios, the
table maker that leaves out empty columns, and the table of all cells."""
import statistics

from . import plan
from .targets import CALIBRATION


def _fmt(value, digits=0):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _reference(cells, cell, name, kind):
    """The cell of `name` measured like `cell`, in the same run."""
    for c in cells:
        if (c["name"], c["kind"]) == (name, kind) and not c.get("variant") and all(
                c[k] == cell[k] for k in ("tool", "mode", "workers", "connections")):
            return c
    return None


def _ratio(value, reference):
    return f"{value / reference:.2f}" if value and reference else "-"


# The mark of a comparison within noise, and the line under a table that has one.
NOISE_MARK = "≈"
NOISE_LEGEND = (f"{NOISE_MARK}: within noise. The rounds' own ratios (run 1 of one over run 1 of the other, and so "
                "on) lie on both sides of 1: the rounds disagree on which figure is the larger, and the two differ by "
                "less than the rounds' spread. Not a difference.")


def within_spread(cell, other, key="cpu_us_runs"):
    """True if the rounds' own ratios of the runs `key` of two cells
    (paired_ratios) lie on both sides of 1, so that the difference of the
    two is less than the rounds' spread; None with fewer than two clean
    pairs to judge by."""
    pairs = paired_ratios((cell or {}).get(key), (other or {}).get(key))
    if len(pairs) < 2:
        return None
    return min(pairs) <= 1 <= max(pairs)


def marked(text, cell, other, key="cpu_us_runs"):
    """`text` (a ratio or a difference of `cell` against `other`), with
    NOISE_MARK before it if the two differ by less than the rounds' spread;
    a cell against itself (a reference's own row) is not marked."""
    if text in ("", "-") or cell is other or not within_spread(cell, other, key):
        return text
    return f"{NOISE_MARK} {text}"


def _empty(text):
    """A table cell that says nothing: "", "-" or "- / - / -"."""
    return not str(text).replace("-", "").replace("/", "").strip()


def table(header, rows):
    """A Markdown table of `header` and `rows` (lists of cell texts),
    without the columns empty in every row, and, if a cell has NOISE_MARK,
    the line that says what it means under it."""
    keep = [i for i in range(len(header)) if not rows or any(not _empty(r[i]) for r in rows)]
    lines = ["| " + " | ".join(header[i] for i in keep) + " |", "|" + " --- |" * len(keep)]
    lines += ["| " + " | ".join(str(r[i]) for i in keep) + " |" for r in rows]
    return with_legend(lines)


def with_legend(lines):
    """A table's lines (header, rule, rows) joined, and under them the line
    saying what NOISE_MARK means if a row has one."""
    return "\n".join(lines + (["", NOISE_LEGEND] if any(NOISE_MARK in line for line in lines[2:]) else []))


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


# What a cell's variant is, in a table's variant column: the cells of one
# target, tool, mode and worker count measured again in another setting.
VARIANTS = {"log-off": "access-log pair: log off", "log-on": "access-log pair: log on",
            "log-json": "access-log pair: log JSON", "before": "before (--compare)", "after": "after (--compare)",
            "before-log": "before, log on (--compare)", "after-log": "after, log on (--compare)",
            "before-h2c": "before, h2c (--compare)", "after-h2c": "after, h2c (--compare)",
            "page-off": "live page closed", "page-on": "live page open", "shape-off": "--shape off",
            "shape-on": "--shape on", "shape-param": "--shape on, parameters", "ws": "WebSocket echo",
            "http1": "HTTP/1.1 (--ws's reference)"}


def variant_text(cell):
    """The cell's variant in words; "" for none."""
    return VARIANTS.get(cell.get("variant"), cell.get("variant") or "")


def cell_table(cells, meta=None):
    """Every cell, one row each; the columns empty for the whole run left out."""
    meta = meta or {}
    header = ["target", "variant", "workers", "tool", "mode", "req/s (median)", "p50 / p90 / p99 µs", "CPU µs/req",
              "CPU vs hello-floor", "CPU vs nginx", "peak RSS KiB", "tool / server CPU busy", "runs", "problems"]
    rows = []
    for c in cells:
        lat = " / ".join(_us(c.get(k)) for k in ("p50_ms", "p90_ms", "p99_ms"))
        cpu = c.get("cpu_us_per_request")
        tool = f"{c['tool']} -t{_fmt(c['tool_threads'])}" if c.get("tool_threads") and c["tool"] in (
            "wrk", "h2load") else c["tool"]
        ratios = [marked(_ratio(cpu, ref and ref.get("cpu_us_per_request")), c, ref)
                  for ref in (_reference(cells, c, CALIBRATION, "persona"), _reference(cells, c, "nginx", "peer"))]
        rows.append([c["target"], variant_text(c), _workers_text(c, meta), tool, c["mode"], _rps_text(c), lat,
                     _fmt(cpu, 1), *ratios, _fmt(c.get("peak_rss_kib")), limit_text(c),
                     f"{c.get('clean_runs', 0)}/{c.get('runs', 0)}", c.get("error") or ""])
    return table(header, rows)


def _us(ms):
    """A latency kept in ms (results.json), shown in µs: one decimal below
    10 µs (the server's own service time), whole µs above."""
    if ms is None:
        return "-"
    us = ms * 1000
    return f"{us:.1f}" if us < 10 else f"{us:,.0f}"


def _server_cells(cells):
    """The cells of our personas that read the admin port, or tried to."""
    return [c for c in cells if c.get("kind") == "persona" and (
        c.get("server_p99_ms") is not None or c.get("server_problems"))]


def _cpu(cells, name, kind, tool, mode, variant=None):
    for c in cells:
        if (c["name"], c["kind"], c["tool"], c["mode"], c["workers"], c.get("variant")) == (
                name, kind, tool, mode, 1, variant):
            return c.get("cpu_us_per_request")
    return None


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
