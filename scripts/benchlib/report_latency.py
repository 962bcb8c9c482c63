"""report.md's client-side and server-side latency table."""
from .report_cells import _fmt, _server_cells, _us, table, variant_text


def server_latency_table(cells):
    """The load tool's percentiles beside the server's own service time
    (--admin /stats), per target, tool and mode, in µs; "" if no cell has them."""
    rows = _server_cells(cells)
    if not rows:
        return ""
    header = ["target", "variant", "workers", "tool", "mode", "connections", "client p50 / p90 / p99 µs",
              "server p50 / p90 / p99 µs", "server p99.9 / max µs", "client requests", "server timed", "runs",
              "problems"]
    lines = []
    for c in rows:
        client = " / ".join(_us(c.get(k)) for k in ("p50_ms", "p90_ms", "p99_ms"))
        server = " / ".join(_us(c.get(k)) for k in ("server_p50_ms", "server_p90_ms", "server_p99_ms"))
        tail = " / ".join(_us(c.get(k)) for k in ("server_p99_9_ms", "server_max_ms"))
        problems = "; ".join(p for p in (c.get("error"), c.get("server_problems")) if p)
        lines.append([c["target"], variant_text(c), c["workers"], c["tool"], c["mode"], c["connections"], client,
                      server, tail, _fmt(c.get("requests")), _fmt(c.get("server_count")),
                      f"{c.get('clean_runs', 0)}/{c.get('runs', 0)}", problems])
    return table(header, lines)
