"""What the report's sections share: number formats, the reference cells a
ratio divides by, who was the limit of a cell, the rounds' paired ratios,
and the table of all cells."""
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
