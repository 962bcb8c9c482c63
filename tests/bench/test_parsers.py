"""Unit tests of scripts/benchlib/parsers.py on real captured tool output,
and of what scripts/bench --shaping orders and reports."""
import importlib.machinery
import importlib.util
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)

from benchlib import parsers, report  # noqa: E402


def load_bench():
    """scripts/bench as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("bench", os.path.join(SCRIPTS, "bench"))
    spec = importlib.util.spec_from_loader("bench", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def capture(name):
    with open(os.path.join(HERE, "captures", name)) as f:
        return f.read()


class AbTest(unittest.TestCase):
    def test_close(self):
        r = parsers.parse_ab(capture("ab-close.txt"))
        self.assertEqual(r["requests"], 2000)
        self.assertEqual(r["failed"], 0)
        self.assertEqual(r["non2xx"], 0)
        self.assertAlmostEqual(r["rps"], 3289.98)
        self.assertEqual(r["bytes"], 212000)
        self.assertEqual((r["p50"], r["p90"], r["p99"]), (2.0, 6.0, 10.0))

    def test_keepalive(self):
        r = parsers.parse_ab(capture("ab-keepalive.txt"))
        self.assertEqual(r["requests"], 2000)
        self.assertEqual(r["failed"], 0)

    def test_non_2xx(self):
        r = parsers.parse_ab(capture("ab-404.txt"))
        self.assertEqual(r["requests"], 200)
        self.assertEqual(r["non2xx"], 200)

    def test_failed(self):
        r = parsers.parse_ab(capture("ab-failed.txt"))
        self.assertEqual(r["requests"], 300)
        self.assertEqual(r["failed"], 200)

    def test_unfinished_run_says_why(self):
        with self.assertRaisesRegex(parsers.ParseError, "Connection refused"):
            parsers.parse_ab("Benchmarking 127.0.0.1 (be patient)...apr_socket_recv: Connection refused (111)\n")


class WrkTest(unittest.TestCase):
    def test_latency(self):
        r = parsers.parse_wrk(capture("wrk-latency.txt"))
        self.assertGreater(r["requests"], 0)
        self.assertEqual(r["failed"], 0)
        self.assertEqual(r["non2xx"], 0)
        self.assertGreater(r["rps"], 0)
        self.assertLess(r["p50"], r["p99"])

    def test_units(self):
        r = parsers.parse_wrk(capture("wrk-404.txt"))
        self.assertEqual(r["requests"], 60739)
        self.assertEqual(r["non2xx"], 60739)
        self.assertAlmostEqual(r["p50"], 0.204)
        self.assertAlmostEqual(r["p90"], 3.49)
        self.assertEqual(r["bytes"], int(6.89 * 1024 * 1024))
        self.assertAlmostEqual(r["rps"], 29996.79)

    def test_socket_errors_count_as_failed(self):
        r = parsers.parse_wrk(capture("wrk-socket-errors.txt"))
        self.assertEqual(r["requests"], 1345)
        self.assertEqual(r["failed"], 4399)

    def test_unfinished_run_says_why(self):
        with self.assertRaisesRegex(parsers.ParseError, "Connection refused"):
            parsers.parse_wrk(capture("wrk-connect-errors.txt"))


class H2loadTest(unittest.TestCase):
    def test_h1(self):
        r = parsers.parse_h2load(capture("h2load.txt"))
        self.assertEqual(r["requests"], 2000)
        self.assertEqual(r["failed"], 0)
        self.assertEqual(r["non2xx"], 0)
        self.assertAlmostEqual(r["rps"], 14474.71)
        self.assertEqual(r["bytes"], 222000)
        self.assertIsNone(r["p50"])


class LocustTest(unittest.TestCase):
    def test_stats_csv(self):
        r = parsers.parse_locust_csv(capture("locust_stats.csv"))
        self.assertEqual(r["requests"], 1292)
        self.assertEqual(r["failed"], 0)
        self.assertAlmostEqual(r["rps"], 317.8402817384507)
        self.assertEqual((r["p50"], r["p90"], r["p99"]), (27.0, 39.0, 55.0))

    def test_no_aggregated_row(self):
        with self.assertRaises(parsers.ParseError):
            parsers.parse_locust_csv("Type,Name,Request Count\n")


def shaping_cell(variant, mode, cpu, runs, path="/"):
    return {"target": "hello-sanic", "name": "sanic", "kind": "persona", "workers": 1, "tool": "wrk",
            "mode": mode, "connections": 64, "variant": variant, "cpu_us_per_request": cpu,
            "cpu_us_runs": runs, "rps": 100000.0, "requests": 500000, "bytes": 500000 * 150,
            "runs": len(runs), "clean_runs": sum(r is not None for r in runs), "error": None}


SHAPING_META = {"shaping": {"persona": "sanic", "param_path": "/?status=200", "rounds": 3}}


class ShapingReportTest(unittest.TestCase):
    def test_paired_ratios_skip_rounds_not_clean(self):
        self.assertEqual(report.paired_ratios([2.0, None, 3.0], [1.0, 1.0, None]), [2.0])
        self.assertEqual(report.paired_ratios(None, [1.0]), [])

    def test_met_within_three_percent(self):
        cells = [shaping_cell("shape-off", "keepalive", 10.0, [10.0, 9.0, 11.0]),
                 shaping_cell("shape-on", "keepalive", 10.2, [10.2, 9.9, 10.8]),
                 shaping_cell("shape-param", "keepalive", 11.0, [11.0, 10.0, 12.0])]
        table = report.shaping_table(SHAPING_META, cells)
        rows = table.splitlines()
        on = next(r for r in rows if "no parameters" in r and "keep-alive" in r)
        self.assertIn("| ≤ 1.03 |", on)
        self.assertIn("off 10.00 µs, on 10.20 µs: 1.020", on)
        self.assertIn("round by round 1.020, 1.100, 0.982 (median 1.020)", on)
        self.assertTrue(on.endswith("| yes |"))
        param = next(r for r in rows if "/?status=200) vs off" in r)
        self.assertIn("none (informational)", param)
        self.assertIn(": 1.100", param)
        self.assertTrue(param.endswith("| - |"))
        # Pipelining was not run: said, not left out.
        missing = next(r for r in rows if "no parameters" in r and "pipelining" in r)
        self.assertTrue(missing.endswith("| not measured |"))
        # The cells, with their approximate answer size.
        self.assertIn("| hello-sanic --shape | keepalive | `/?status=200` | 100,000 | 11.00 | 150.0 | 3/3 |  |",
                      rows)

    def test_not_met_beyond_three_percent(self):
        cells = [shaping_cell("shape-off", "pipeline", 0.60, [0.60]),
                 shaping_cell("shape-on", "pipeline", 0.62, [0.62])]
        on = next(r for r in report.shaping_table(SHAPING_META, cells).splitlines()
                  if "no parameters" in r and "pipelining" in r)
        self.assertIn(": 1.033", on)
        self.assertTrue(on.endswith("| **no** |"))

    def test_only_for_a_shaping_run(self):
        self.assertEqual(report.shaping_table({}, []), "")


class InterleavingTest(unittest.TestCase):
    def test_alternate_rounds_reverse_the_order(self):
        bench = load_bench()
        order = []

        def run_once(target, tool, mode, conns, i, args, tool_cpus, cell):
            order.append((i, target.name, mode))
            return dict(cell, repeat=i, cpu_us_per_request=1.0)

        bench.run_once = run_once
        bench.unsupported = lambda *a: None
        jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)]
        plan = [(types.SimpleNamespace(name=n, label=n, kind="persona", workers=1), jobs, n) for n in ("off", "on")]
        cells = []
        bench.measure_interleaved(plan, types.SimpleNamespace(repeat=3), "0", [], cells, alternate=True)
        self.assertEqual(order, [
            (0, "off", "keepalive"), (0, "on", "keepalive"), (0, "off", "pipeline"), (0, "on", "pipeline"),
            (1, "on", "pipeline"), (1, "off", "pipeline"), (1, "on", "keepalive"), (1, "off", "keepalive"),
            (2, "off", "keepalive"), (2, "on", "keepalive"), (2, "off", "pipeline"), (2, "on", "pipeline")])
        self.assertEqual([c["cpu_us_runs"] for c in cells], [[1.0] * 3] * 4)

    def test_without_alternate_the_order_is_the_plans(self):
        bench = load_bench()
        order = []
        bench.run_once = lambda target, tool, mode, conns, i, *rest: order.append((i, target.name, mode)) or {}
        bench.unsupported = lambda *a: None
        jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)]
        plan = [(types.SimpleNamespace(name=n, label=n, kind="persona", workers=1), jobs, n) for n in ("a", "b")]
        bench.measure_interleaved(plan, types.SimpleNamespace(repeat=2), "0", [], [])
        self.assertEqual(order[:4], [(0, "a", "keepalive"), (0, "a", "pipeline"), (0, "b", "keepalive"),
                                     (0, "b", "pipeline")])
        self.assertEqual(order[4:], [(1,) + o[1:] for o in order[:4]])


if __name__ == "__main__":
    unittest.main()
