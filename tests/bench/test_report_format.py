"""Unit tests of what makes scripts/bench's report readable (issue 34):
latencies in µs, no column empty for the whole run, one row per distinct
cell, the ≈ mark of a difference within the rounds' spread, and
results.json's commit, build, tool versions and CPU (the charts' axes:
test_report_charts.py). The run they read is made up, shaped like
`scripts/bench --quick`'s."""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)

from benchlib import measure, provenance, report, report_cells  # noqa: E402
from test_parsers import load_bench  # noqa: E402

import ctest_unittest  # noqa: E402

META = {"started": "x", "nproc": 2, "cpu_model": "m", "kernel": "k", "server_cpus": "1", "tool_cpus": "0",
        "repeat": 3, "load": "2 s", "connections": "64", "command": "scripts/bench --quick"}


def run(rps, cpu, p50=0.27, server_p50=0.0057):
    """One clean wrk run: latencies in ms, as the parsers and /stats give them."""
    return {"rps": rps, "p50": p50, "p90": p50 * 1.3, "p99": p50 * 2, "requests": int(rps * 2),
            "cpu_us_per_request": cpu, "server_p50": server_p50, "server_p90": server_p50 * 1.1,
            "server_p99": server_p50 * 1.6, "server_p99_9": server_p50 * 5, "server_max": 1.2,
            "server_count": int(rps * 2) + 30, "tool_busy": 0.99, "server_busy": 0.93, "tool_threads": 1,
            "tool_connections": 64, "limit": "both"}


def cell(name, workers, runs, variant=None, label=None, kind="persona"):
    target = types.SimpleNamespace(label=label or f"hello-{name}", name=name, kind=kind, workers=workers)
    return measure.summarize(measure.new_cell(target, "wrk", "keepalive", 64, variant), runs)


def quick_cells():
    """Three personas at 1 and 2 workers, then the access-log pair; the
    server's own times are a few µs, the client's a few hundred."""
    cells = []
    for workers in (1, 2):
        for name, rps in (("sanic", 114e3), ("tornado", 117e3), ("spring", 120e3)):
            cells.append(cell(name, workers, [run(rps * f, 8.0 * f) for f in (1.0, 0.97, 1.02)]))
    cells.append(cell("sanic", 1, [run(117e3, c) for c in (8.0, 7.9, 8.1)], "log-off"))
    cells.append(cell("sanic", 1, [run(116e3, c) for c in (8.1, 7.8, 8.2)], "log-on", "hello-sanic +log"))
    cells.append(cell("sanic", 1, [run(115e3, c) for c in (8.9, 8.8, 9.1)], "log-json", "hello-sanic +log (json)"))
    return cells


def markdown(cells, meta=META):
    with tempfile.TemporaryDirectory() as out:
        report.write_markdown(out, meta, cells, [])
        with open(os.path.join(out, "report.md")) as f:
            return f.read()


def tables(text):
    """Every Markdown table of `text`: (title of its section, header, rows)."""
    found, section, lines = [], "", text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            section = line
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("| ---") and (
                i == 0 or not lines[i - 1].startswith("|")):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([x.strip() for x in row.strip().strip("|").split("|")])
            found.append((section, [x.strip() for x in line.strip().strip("|").split("|")], rows))
    return found


class MicrosecondsTest(unittest.TestCase):
    def test_latency_table_and_all_cells_in_us(self):
        text = markdown(quick_cells())
        self.assertIsNone(re.search(r"\bms\b", text), "a latency in ms is left in report.md")
        by_section = {section: (header, rows) for section, header, rows in tables(text)}
        header, rows = by_section["## Client-side and server-side latency"]
        self.assertIn("client p50 / p90 / p99 µs", header)
        self.assertIn("server p50 / p90 / p99 µs", header)
        first = dict(zip(header, rows[0]))
        self.assertEqual(first["client p50 / p90 / p99 µs"], "270 / 351 / 540")
        self.assertEqual(first["server p50 / p90 / p99 µs"], "5.7 / 6.3 / 9.1")
        self.assertEqual(first["server p99.9 / max µs"], "28 / 1,200")
        header, rows = by_section["## All cells"]
        self.assertEqual(dict(zip(header, rows[0]))["p50 / p90 / p99 µs"], "270 / 351 / 540")

    def test_us_format(self):
        self.assertEqual([report_cells._us(v) for v in (None, 0.0045, 0.0099, 0.0262, 0.5, 2.0, 12.3456)],
                         ["-", "4.5", "9.9", "26", "500", "2,000", "12,346"])


class EmptyColumnTest(unittest.TestCase):
    def test_no_table_has_a_column_empty_in_every_row(self):
        text = markdown(quick_cells())
        self.assertGreaterEqual(len(tables(text)), 3)
        for section, header, rows in tables(text):
            for i, name in enumerate(header):
                self.assertTrue(any(r[i].replace("-", "").replace("/", "").strip() for r in rows),
                                f"{section}: column '{name}' is empty in every row")
        self.assertNotIn("CPU vs hello-floor", text)
        self.assertNotIn("CPU vs nginx", text)

    def test_a_column_with_a_figure_stays(self):
        cells = quick_cells() + [cell("floor", 1, [run(120e3, c) for c in (7.0, 7.1, 6.9)])]
        header = next(h for s, h, _ in tables(markdown(cells)) if s == "## All cells")
        self.assertIn("CPU vs hello-floor", header)
        self.assertNotIn("CPU vs nginx", header)

    def test_table_keeps_every_column_without_rows(self):
        self.assertEqual(report_cells.table(["a", "b"], []), "| a | b |\n| --- | --- |")


class DistinctRowsTest(unittest.TestCase):
    KEYS = ("target", "variant", "workers", "tool", "mode", "connections")

    def test_one_row_per_distinct_cell(self):
        for section, header, rows in tables(markdown(quick_cells())):
            if section not in ("## All cells", "## Client-side and server-side latency"):
                continue
            shown = [i for i, name in enumerate(header) if name in self.KEYS]
            keys = [tuple(r[i] for i in shown) for r in rows]
            self.assertEqual(len(keys), 9, section)
            self.assertEqual(len(set(keys)), len(keys), f"{section}: rows that look alike: {keys}")

    def test_the_pairs_off_run_says_what_it_is(self):
        rows = next(r for s, _, r in tables(markdown(quick_cells())) if s == "## All cells")
        self.assertEqual([r[:2] for r in rows if r[0] == "hello-sanic" and r[2] == "1"],
                         [["hello-sanic", ""], ["hello-sanic", "access-log pair: log off"]])


class SpreadMarkTest(unittest.TestCase):
    def test_rounds_on_both_sides_of_one(self):
        cells = report_cells
        self.assertTrue(cells.within_spread({"cpu_us_runs": [10.0, 9.0, 11.0]}, {"cpu_us_runs": [10.5, 9.5, 10.5]}))
        self.assertFalse(cells.within_spread({"cpu_us_runs": [11.0, 10.0, 12.0]}, {"cpu_us_runs": [10.0, 9.5, 11.0]}))
        self.assertIsNone(cells.within_spread({"cpu_us_runs": [10.0, None]}, {"cpu_us_runs": [9.0, 9.0]}))
        self.assertEqual(cells.marked("1.02", {"cpu_us_runs": [1.0, 2.0]}, {"cpu_us_runs": [1.5, 1.5]}), "≈ 1.02")
        self.assertEqual(cells.marked("1.40", {"cpu_us_runs": [2.0, 2.1]}, {"cpu_us_runs": [1.5, 1.5]}), "1.40")
        same = {"cpu_us_runs": [1.0, 2.0]}
        self.assertEqual(cells.marked("1.00", same, same), "1.00")  # a reference against itself

    def test_access_log_pair_marked_and_explained(self):
        table = report.access_log_table(quick_cells())
        rows = table.splitlines()
        on = next(r for r in rows if "| on (to a file) |" in r)
        json_row = next(r for r in rows if "| JSON (to a file) |" in r)
        self.assertTrue(on.endswith("| ≈ 1.012 |"), on)  # rounds 1.013, 0.987, 1.012: no difference
        self.assertTrue(json_row.endswith("| 1.113 |"), json_row)  # every round above 1
        self.assertEqual(rows[-1], report_cells.NOISE_LEGEND)
        self.assertIn("within noise", rows[-1])

    def test_no_legend_without_a_mark(self):
        cells = [c for c in quick_cells() if c.get("variant") != "log-on"]
        self.assertNotIn("≈", report.access_log_table(cells))

    def test_all_cells_ratio_marked(self):
        cells = quick_cells() + [cell("floor", 1, [run(120e3, c) for c in (7.9, 8.0, 8.1)])]
        text = markdown(cells)
        self.assertRegex(text, r"\| hello-sanic \| +\| 1 \| wrk -t1 \| keepalive \| [\d,]+ \| [\d /,]+ \| 8.0 \| ≈ 1.00 \|")
        self.assertIn(report_cells.NOISE_LEGEND, text)


class ResultsJsonTest(unittest.TestCase):
    def test_commit_clean_dirty_and_outside_git(self):
        with tempfile.TemporaryDirectory() as repo:
            git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run(git + ["init", "-q"], check=True)
            with open(os.path.join(repo, "f"), "w") as f:
                f.write("a\n")
            subprocess.run(git + ["add", "f"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "f"], check=True)
            head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
            self.assertEqual(provenance.commit(repo), head)
            with open(os.path.join(repo, "untracked"), "w") as f:
                f.write("b\n")
            self.assertEqual(provenance.commit(repo), head)
            with open(os.path.join(repo, "f"), "w") as f:
                f.write("changed\n")
            self.assertEqual(provenance.commit(repo), head + "-dirty")
        with tempfile.TemporaryDirectory() as bare:
            self.assertEqual(provenance.commit(bare), "unknown")

    def test_build_type_and_compiler_from_the_cmake_cache(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "CMakeFiles", "3.25.1"))
            with open(os.path.join(build, "CMakeCache.txt"), "w") as f:
                f.write("CMAKE_BUILD_TYPE:STRING=Release\nCMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\n")
            with open(os.path.join(build, "CMakeFiles", "3.25.1", "CMakeCXXCompiler.cmake"), "w") as f:
                f.write('set(CMAKE_CXX_COMPILER_ID "GNU")\nset(CMAKE_CXX_COMPILER_VERSION "12.2.0")\n')
            self.assertEqual(provenance.build(build), {"build_type": "Release", "compiler": "GNU 12.2.0 (/usr/bin/c++)"})
        self.assertEqual(provenance.build("/nonexistent"), {"build_type": "unknown", "compiler": "unknown"})

    def test_bench_writes_them_to_results_json(self):
        bench = load_bench()
        made = quick_cells()[:1] + [cell("nginx", 1, [run(110e3, 9.0)], label="nginx", kind="peer")]

        def fake_measure(target, args, split, runs, cells, **kw):
            cells.extend(made)

        with tempfile.TemporaryDirectory() as out, contextlib.redirect_stderr(io.StringIO()), \
                mock.patch.multiple(bench, measure=fake_measure, start_progress=lambda *a: None,
                                    planned_runs=lambda *a: 0):
            bench.main(["--url", "http://127.0.0.1:19401/", "--no-setup", "--out", out, "--repeat", "1"])
            with open(os.path.join(out, "results.json")) as f:
                meta = json.load(f)["meta"]
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        for key in provenance.KEYS:
            self.assertIn(key, meta)
        self.assertRegex(meta["commit"], r"^([0-9a-f]{40}(-dirty)?|unknown)$")
        self.assertEqual(sorted(meta["tool_versions"]), ["nginx", "wrk"])
        self.assertNotEqual(meta["cpu_model"], "")
        self.assertGreaterEqual(meta["cores"] or 1, 1)
        self.assertIn(f"Commit `{meta['commit']}`, build {meta['build_type']}", text)
        self.assertIn(f"wrk: {meta['tool_versions']['wrk']}", text)

    def test_an_old_results_json_still_reads(self):
        self.assertNotIn("Commit", markdown(quick_cells()))


if __name__ == "__main__":
    ctest_unittest.main()
