"""Unit tests of how scripts/bench uses a machine (scripts/benchlib/plan.py)
for 2, 4, 16 and 64 CPUs given as lists: the server and tool CPUs, the
threads and connections of wrk and h2load, oversubscription, the worker
counts of --scaling, and the tool-bound rule on made-up figures; of the
report's marks and the progress lines."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)

from benchlib import plan, progress, report, tools  # noqa: E402
from test_parsers import load_bench  # noqa: E402


def cpus(n):
    return list(range(n))


class CpuListTest(unittest.TestCase):
    def test_parse_and_print(self):
        self.assertEqual(plan.parse_cpus("0-3,8"), [0, 1, 2, 3, 8])
        self.assertEqual(plan.parse_cpus("5"), [5])
        self.assertEqual(plan.parse_cpus("3,1,2"), [1, 2, 3])
        self.assertEqual(plan.cpu_text([0, 1, 2, 3, 8]), "0-3,8")
        self.assertEqual(plan.cpu_text([1]), "1")
        self.assertEqual(plan.cpu_text(range(32, 64)), "32-63")

    def test_bad_lists(self):
        for text in ("", "x", "1-", "-2", "3-1", "1,,2", "1.5"):
            with self.assertRaises(plan.PlanError, msg=text):
                plan.parse_cpus(text)


class SplitTest(unittest.TestCase):
    def test_default_is_half_and_half(self):
        self.assertEqual(plan.split_cpus(cpus(2)), plan.Split((1,), (0,)))
        self.assertEqual(plan.split_cpus(cpus(4)), plan.Split((2, 3), (0, 1)))
        self.assertEqual(plan.split_cpus(cpus(16)), plan.Split(tuple(range(8, 16)), tuple(range(8))))
        s = plan.split_cpus(cpus(64))
        self.assertEqual((len(s.server), len(s.tool), s.server[0], s.tool[-1]), (32, 32, 32, 31))
        self.assertEqual(s.shared, ())

    def test_one_cpu_is_shared(self):
        s = plan.split_cpus([3])
        self.assertEqual(s, plan.Split((3,), (3,)))
        self.assertEqual(s.shared, (3,))

    def test_given_lists_and_the_rest(self):
        self.assertEqual(plan.split_cpus(cpus(16), server=[12, 13, 14, 15], tool=[0, 1]),
                         plan.Split((12, 13, 14, 15), (0, 1)))
        self.assertEqual(plan.split_cpus(cpus(4), server=[3]), plan.Split((3,), (0, 1, 2)))
        self.assertEqual(plan.split_cpus(cpus(4), tool=[0]), plan.Split((1, 2, 3), (0,)))
        self.assertEqual(plan.split_cpus(cpus(2), server=[1], tool=[1]).shared, (1,))

    def test_impossible_splits_say_why(self):
        with self.assertRaisesRegex(plan.PlanError, "--tool-cpus: CPU 4-5 is not one this process may run on"):
            plan.split_cpus(cpus(4), tool=[4, 5])
        with self.assertRaisesRegex(plan.PlanError, "leaves no CPU for the load tool"):
            plan.split_cpus(cpus(2), server=[0, 1])
        with self.assertRaisesRegex(plan.PlanError, "leaves no CPU to serve"):
            plan.split_cpus(cpus(2), tool=[0, 1])


class LoadTest(unittest.TestCase):
    def test_threads_follow_the_tool_cpus(self):
        for n, threads, per in ((2, 1, 64), (4, 2, 32), (16, 8, 8), (64, 32, 2)):
            tool_cpus = len(plan.split_cpus(cpus(n)).tool)
            for tool in ("wrk", "h2load"):
                self.assertEqual(plan.tool_load(tool, tool_cpus, 64), plan.Load(threads, 64, per, threads),
                                 (n, tool))

    def test_connections_are_divided_evenly(self):
        self.assertEqual(plan.tool_load("wrk", 8, 100), plan.Load(8, 104, 13, 8))
        # Never more threads than connections.
        self.assertEqual(plan.tool_load("wrk", 8, 3), plan.Load(3, 3, 1, 3))
        self.assertEqual(plan.tool_load("h2load", 32, 1), plan.Load(1, 1, 1, 1))

    def test_h2load_never_opens_more_connections_than_requests(self):
        self.assertEqual(plan.tool_load("h2load", 8, 100, requests=100), plan.Load(8, 96, 12, 8))
        self.assertEqual(plan.tool_load("h2load", 8, 100, requests=1000), plan.Load(8, 104, 13, 8))
        self.assertEqual(plan.tool_load("h2load", 8, 10, requests=4), plan.Load(4, 4, 1, 4))

    def test_single_threaded_tools(self):
        self.assertEqual(plan.tool_load("ab", 8, 100), plan.Load(1, 100, 100, 1))
        self.assertEqual(plan.tool_load("locust", 8, 64), plan.Load(1, 64, 64, 1))
        self.assertEqual(plan.tool_load("locust-w8", 8, 64).parallel, 8)
        self.assertEqual(plan.tool_load("locust-w8", 2, 64).parallel, 2)

    def test_argv_has_the_threads(self):
        url = "http://127.0.0.1:1/"
        wrk = tools.command("wrk", "keepalive", url, 64, 5, threads=8)
        self.assertIn("-t8", wrk)
        self.assertIn("-c64", wrk)
        h2 = tools.command("h2load", "pipeline", url, 64, 5, threads=8)
        self.assertEqual(h2[h2.index("-t") + 1], "8")
        self.assertEqual(h2[h2.index("-c") + 1], "64")
        self.assertNotIn("-t", tools.command("ab", "close", url, 100, requests=1000, threads=8))


class OversubscriptionTest(unittest.TestCase):
    def test_workers_beyond_the_server_cpus(self):
        for n, fits, beyond in ((2, 1, 2), (4, 2, 4), (16, 8, 9), (64, 32, 64)):
            server = len(plan.split_cpus(cpus(n)).server)
            self.assertFalse(plan.oversubscribed(fits, server), n)
            self.assertTrue(plan.oversubscribed(beyond, server), n)


class ScalingPlanTest(unittest.TestCase):
    def test_worker_counts(self):
        self.assertEqual(plan.scaling_workers(1), [1])
        self.assertEqual(plan.scaling_workers(2), [1, 2])
        self.assertEqual(plan.scaling_workers(8), [1, 2, 4, 8])
        self.assertEqual(plan.scaling_workers(6), [1, 2, 4, 6])
        self.assertEqual(plan.scaling_workers(32), [1, 2, 4, 8, 16, 32])

    def test_connections(self):
        self.assertEqual(plan.scaling_connections(1), 64)
        self.assertEqual(plan.scaling_connections(8), 256)

    def test_bench_scaling_on_16_and_2_cpus(self):
        bench = load_bench()
        args = bench.parse_args(["--scaling"], available=cpus(16))
        self.assertEqual(args.workers_list, [1, 2, 4, 8])
        self.assertEqual(args.jobs, [("wrk", "keepalive", 256), ("wrk", "close", 256)])
        self.assertEqual(args.targets, bench.SCALING_PERSONAS)
        args = bench.parse_args(["--scaling", "spring", "--connections", "128"], available=cpus(2))
        self.assertEqual((args.workers_list, args.jobs[0][2], args.targets), ([1], 128, ["spring"]))
        args = bench.parse_args(["--scaling", "--workers", "1,16"], available=cpus(16))
        self.assertEqual(args.workers_list, [1, 16])
        for bad in (["--scaling", "--performance"], ["--scaling", "--requests", "10"],
                    ["--scaling", "--peers"], ["--server-cpus", "7"], ["--scaling", "--tool", "ab"],
                    ["--scaling", "--mode", "pipeline"], ["--scaling", "--connections", "abc"],
                    ["--scaling", "--access-log-pair"]):
            with self.assertRaises(SystemExit, msg=bad), contextlib.redirect_stderr(io.StringIO()):
                bench.parse_args(bad, available=cpus(2))

    def test_locust_gets_one_worker_per_tool_cpu(self):
        bench = load_bench()
        jobs = bench.parse_args(["sanic", "--tool", "locust"], available=cpus(16)).jobs
        self.assertEqual([j[0] for j in jobs], ["locust-w8"])
        jobs = bench.parse_args(["sanic", "--tool", "locust"], available=cpus(2)).jobs
        self.assertEqual([j[0] for j in jobs], ["locust"])
        jobs = bench.parse_args(["sanic", "--tool", "locust", "--locust-workers", "0"], available=cpus(16)).jobs
        self.assertEqual([j[0] for j in jobs], ["locust"])


class LimitTest(unittest.TestCase):
    def test_busy(self):
        # ab on 8 load CPUs: 4.9 s of CPU in 5 s keeps its one thread busy.
        self.assertAlmostEqual(plan.busy(4.9, 5.0, plan.tool_load("ab", 8, 100).parallel), 0.98)
        self.assertAlmostEqual(plan.busy(20.0, 5.0, 8), 0.5)
        self.assertIsNone(plan.busy(None, 5.0, 1))
        self.assertIsNone(plan.busy(1.0, 0.0, 1))

    def test_tool_bound_rule(self):
        self.assertEqual(plan.limit(0.97, 0.55), "tool")
        self.assertEqual(plan.limit(0.90, 0.89), "tool")
        self.assertEqual(plan.limit(0.97, 0.93), "both")
        self.assertEqual(plan.limit(0.60, 0.99), "server")
        self.assertIsNone(plan.limit(0.60, 0.40))
        self.assertIsNone(plan.limit(None, 0.40))
        # A neighbour on the tool's CPU: the tool got half of it, its CPU was full.
        self.assertEqual(plan.limit(0.50, 0.45, tool_cpus_busy=0.99), "tool")
        self.assertIsNone(plan.limit(0.50, 0.45, tool_cpus_busy=0.60))
        # A remote target: no server figures, only the tool's.
        self.assertEqual(plan.limit(0.95, None), "tool")
        # Server and tool on the same CPU: the server fills it, so only the tool's own use counts.
        self.assertIsNone(plan.limit(0.50, 0.45, tool_cpus_busy=0.99, shared=True))
        self.assertEqual(plan.limit(0.95, 0.45, tool_cpus_busy=0.99, shared=True), "tool")

    def test_cpu_jiffies(self):
        stat = ("cpu  100 0 100 800 0 0 0 0 0 0\n"
                "cpu0 10 0 20 60 10 0 0 0 0 0\n"
                "cpu1 40 5 5 50 0 0 0 0 0 0\n"
                "intr 12345\n")
        self.assertEqual(plan.cpu_jiffies([0], stat), (30, 100))
        self.assertEqual(plan.cpu_jiffies([0, 1], stat), (80, 200))
        self.assertAlmostEqual(plan.cpus_busy((30, 100), (120, 200)), 0.9)
        self.assertIsNone(plan.cpus_busy(None, (1, 2)))


def cell(target, name, kind, workers, rps, mode="keepalive", limit=None, shares=None, cpu=10.0):
    return {"target": target, "name": name, "kind": kind, "workers": workers, "tool": "wrk", "mode": mode,
            "connections": 256, "variant": None, "rps": rps, "cpu_us_per_request": cpu, "tool_threads": 8,
            "tool_busy": 0.97 if limit == "tool" else 0.5, "server_busy": 0.5 if limit == "tool" else 0.95,
            "tool_cpus_busy": None, "limit": limit, "worker_shares": shares, "runs": 3, "clean_runs": 3}


META16 = {"started": "x", "nproc": 16, "cpu_model": "m", "kernel": "k", "server_cpus": "8-15", "tool_cpus": "0-7",
          "repeat": 3, "load": "5 s", "connections": "256", "command": "scripts/bench --scaling",
          "scaling": {"workers": [1, 2, 4, 8], "server_cpus": 8, "connections": 256}}


class PlannedRunsTest(unittest.TestCase):
    def test_a_missing_tool_makes_one_run(self):
        bench = load_bench()
        saved = tools.missing
        tools.missing = lambda tool: "not installed" if tool == "h2load" else None
        try:
            target = type("T", (), {"name": "sanic", "kind": "persona"})()
            args = bench.parse_args(["sanic", "--repeat", "5"], available=cpus(2))
            jobs = [("wrk", "keepalive", 64), ("h2load", "keepalive", 64), ("ab", "pipeline", 64)]
            # ab cannot pipeline: skipped; h2load missing: one run with its error.
            self.assertEqual(bench.planned_runs(target, jobs, args), 6)
        finally:
            tools.missing = saved


class SummarizeTest(unittest.TestCase):
    def test_cell_is_tool_bound_by_its_medians(self):
        bench = load_bench()
        runs = [{"rps": 100.0, "requests": 500, "tool_busy": b, "server_busy": s, "tool_threads": 8,
                 "tool_connections": 256, "limit": plan.limit(b, s), "worker_requests": w}
                for b, s, w in ((0.99, 0.5, [60, 40]), (0.98, 0.6, [50, 50]), (0.5, 0.95, [40, 60]))]
        c = bench.summarize({"workers": 2}, runs)
        self.assertEqual((c["limit"], c["tool_bound_runs"], c["tool_threads"]), ("tool", 2, 8))
        self.assertEqual(c["worker_shares"], [0.5, 0.5])


class ScalingReportTest(unittest.TestCase):
    def cells(self, bound_at=8, h2o=True):
        out = []
        for w, sanic, nginx, h2o_rps in ((1, 100e3, 80e3, 85e3), (2, 196e3, 150e3, 160e3),
                                         (4, 384e3, 300e3, 320e3), (8, 560e3, 590e3, 600e3)):
            shares = [0.5 / w] * (w // 2) + [1.5 / w] * (w // 2) if w > 1 else None
            out.append(cell("hello-sanic", "sanic", "persona", w, sanic, shares=shares,
                            limit="tool" if w == bound_at else None))
            out.append(cell("nginx", "nginx", "peer", w, nginx))
            if h2o:
                out.append(cell("h2o 2.2.5 (static file)", "h2o", "peer", w, h2o_rps))
        # The same at another connection count: a group of its own.
        out.append(cell("hello-sanic", "sanic", "persona", 1, 50e3))
        out[-1]["connections"] = 64
        return out

    def test_efficiency_and_per_cpu(self):
        rows = report.scaling_rows(self.cells(), META16)
        sanic = rows[("hello-sanic", "sanic", "persona", "wrk", "keepalive", 256)]
        self.assertEqual([round(f["efficiency"], 2) for _, f in sanic], [1.0, 0.98, 0.96, 0.7])
        self.assertEqual([f["per_cpu"] for _, f in sanic], [100e3, 98e3, 96e3, 70e3])
        self.assertEqual(len(rows[("hello-sanic", "sanic", "persona", "wrk", "keepalive", 64)]), 1)

    def test_targets(self):
        table = report.scaling_targets(META16, self.cells(bound_at=None))
        self.assertRegex(table, r"efficiency at 4 workers, hello-sanic \| ≥ 0.9 \| 0.96 \| yes")
        self.assertRegex(table, r"efficiency at 8 workers, hello-sanic \| ≥ 0.8 \| 0.70 \| \*\*no\*\*")
        self.assertRegex(table, r"over nginx, per worker count \| > 1 at every count \| 1: 1.25, 2: 1.31, "
                                r"4: 1.28, 8: 0.95 \| \*\*no\*\*")

    def test_tool_bound_cells_are_not_judged(self):
        table = report.scaling_targets(META16, self.cells(bound_at=8))
        self.assertRegex(table, r"efficiency at 4 workers, hello-sanic \| ≥ 0.9 \| 0.96 \| yes")
        self.assertRegex(table, r"efficiency at 8 workers, hello-sanic \| ≥ 0.8 \| 0.70 \| tool-bound: not judged")
        self.assertRegex(table, r"over nginx, .* 8: 0.95 \(tool-bound\) \| tool-bound: not judged")

    def test_a_peer_that_did_not_run_is_not_measured(self):
        cells = [dict(c, rps=None) if c["name"] == "h2o" and c["workers"] == 4 else c
                 for c in self.cells(bound_at=None)]
        table = report.scaling_targets(META16, cells)
        self.assertRegex(table, r"over h2o 2.2.5 \(static file\), per worker count \| > 1 at every count \| "
                                r"1: 1.18, 2: 1.23, 4: -, 8: 0.93 \| not measured")
        self.assertNotIn("over h2o", report.scaling_targets(META16, self.cells(h2o=False)))

    def test_report_marks_tool_bound_and_oversubscribed(self):
        cells = self.cells() + [cell("hello-sanic", "sanic", "persona", 16, 500e3)]
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, META16, cells, [])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("**1 of 14 cells were tool-bound**", text)
        self.assertIn("- hello-sanic (workers 8, wrk keepalive c256): tool 97% / server 50%: **tool-bound**", text)
        self.assertIn("| hello-sanic | wrk | keepalive | 256 | 8 | 560,000 (tool-bound) |", text)
        self.assertIn("| hello-sanic | 16 (oversubscribed) | wrk -t8 | keepalive |", text)
        self.assertIn("**Oversubscribed**: 16 workers on 8 server CPUs", text)
        self.assertIn("| 6% to 19% (even: 12%) |", text)
        self.assertNotIn("can show no scaling", text)

    def test_one_server_cpu_says_so(self):
        meta = dict(META16, server_cpus="1", tool_cpus="0", scaling={"workers": [1], "server_cpus": 1,
                                                                     "connections": 64})
        cells = [cell("hello-sanic", "sanic", "persona", 1, 90e3, limit="tool"), cell("nginx", "nginx", "peer", 1, 80e3)]
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, meta, cells, [])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("**One server CPU: this run can show no scaling.**", text)
        self.assertIn("**1 of 2 cells were tool-bound**", text)

    def test_ab_is_said_single_threaded(self):
        c = dict(cell("hello-sanic", "sanic", "persona", 1, 9e3), tool="ab", tool_threads=1)
        text = "\n".join(report.limits_section(META16, [c]))
        self.assertIn("ab is single-threaded: it keeps at most one CPU busy, whatever the 8 load CPUs", text)


class ProgressTest(unittest.TestCase):
    def test_place_and_time_left(self):
        now = [0.0]
        p = progress.Progress(48, guess=6.0, clock=lambda: now[0])
        now[0] = 14.0
        self.assertEqual(p.step(), "[1/48, about 11 min left]")
        now[0] = 12 * 14.0
        p.done = 11
        self.assertEqual(p.step(), "[12/48, about 8 min left]")
        p.skip(30)  # a target that did not start
        now[0] = 13 * 14.0
        self.assertEqual(p.step(), "[13/18, about 1 min left]")
        p.done = 17
        self.assertEqual(p.step(), "[18/18]")

    def test_left_text(self):
        self.assertEqual(progress.left_text(5.2), "about 5 s left")
        self.assertEqual(progress.left_text(44), "about 40 s left")
        self.assertEqual(progress.left_text(56), "about 1 min left")
        self.assertEqual(progress.left_text(60 * 9.4), "about 9 min left")


if __name__ == "__main__":
    unittest.main()
