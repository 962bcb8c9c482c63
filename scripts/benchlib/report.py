"""results.json, results.csv, report.md and the charts of one bench run.

report.md is made of sections, each in its own module: report_scaling
(--scaling), report_performance (--performance and the access log),
report_ab (--shaping, --live-page, --compare), report_tls_h2 (--tls, --h2), report_ws (--ws),
report_articles and report_latency; report_cells holds what they share and
charts the PNG charts. Their public names are importable from here too.
"""
import csv
import json
import os

from . import livepage, plan, provenance
from .charts import charts  # noqa: F401
from .report_ab import (COMPARE_TARGET, SHAPING_TARGET, compare_table, live_page_table,  # noqa: F401
                        shaping_table)
from .report_articles import ARTICLES, article_tables  # noqa: F401
from .report_cells import (_oversubscribed, cell_table, limit_text, paired_ratios, paired_text,  # noqa: F401
                           server_cpu_count, tool_bound_cells)
from .report_latency import server_latency_table
from .report_performance import access_log_table, performance_table
from .report_scaling import scaling_rows, scaling_table, scaling_targets, scaling_text
from .report_tls_h2 import (H2_TARGETS, TLS_TARGETS, h2_table, h2_text, idle_result, ratio_result,  # noqa: F401
                            tls_table, tls_text)
from .report_ws import WS_HTTP_TARGET, WS_PEER_TARGETS, ws_table, ws_text  # noqa: F401

CELL_FIELDS = ["target", "kind", "workers", "tool", "mode", "connections", "runs", "clean_runs", "rps", "p50_ms",
               "p90_ms", "p99_ms", "cpu_us_per_request", "peak_rss_kib", "requests", "failed", "non2xx",
               "bytes", "error", "server_p50_ms", "server_p90_ms", "server_p99_ms", "server_p99_9_ms",
               "server_max_ms", "server_count", "server_problems", "tool_threads", "tool_connections", "tool_busy",
               "tool_cpus_busy", "server_busy", "limit", "tool_bound_runs", "oversubscribed"]


def write_json(out, meta, runs, cells):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "cells": cells, "runs": runs}, f, indent=2)


def write_csv(out, cells):
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CELL_FIELDS, extrasaction="ignore")
        w.writeheader()
        for c in cells:
            w.writerow(c)


def write_markdown(out, meta, cells, chart_files):
    problems = [c for c in cells if c.get("error")]
    parts = [f"# Bench run {meta['started']}", "",
             f"Machine: {meta['nproc']} CPUs{_cores(meta)}, {meta['cpu_model']}, kernel {meta['kernel']}. "
             f"Server on CPU {meta['server_cpus']}, load tool on CPU {meta['tool_cpus']} (`taskset`). "
             f"Each cell is the median of {meta['repeat']} runs of {meta['load']}, {meta['connections']} connections.",
             "", f"Command: `{meta['command']}`", ""]
    if provenance.text(meta):
        parts += [provenance.text(meta), ""]
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
    ws = ws_table(meta, cells)
    if ws:
        parts += ["## WebSocket", "", ws_text(meta), "", ws, ""]
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


def _cores(meta):
    """The machine line's " (N cores)", where the physical cores are known
    and differ from the logical CPUs."""
    cores = meta.get("cores")
    return f" ({cores} core{'s' if cores != 1 else ''})" if cores and cores != meta.get("nproc") else ""


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
