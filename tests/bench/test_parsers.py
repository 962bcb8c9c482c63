"""Unit tests of scripts/benchlib/parsers.py on real captured tool output,
of what scripts/bench --shaping orders and reports, of the server-side
latency read from the personas' --admin port, and of the peers' setup."""
import contextlib
import http.server
import io
import importlib.machinery
import importlib.util
import os
import json
import socket
import sys
import tempfile
import threading
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from benchlib import admin, parsers, report, targets, tools  # noqa: E402

import ctest_unittest  # noqa: E402


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


class LocustDistributedTest(unittest.TestCase):
    URL = "http://127.0.0.1:8081/hello"

    def test_single_process(self):
        argv = tools.locust_command(self.URL, 10, 5, "/tmp/x/locust")
        self.assertEqual(argv, ["locust", "-f", tools.LOCUSTFILE, "--headless", "-u", "10", "-r", "10", "-t", "5s",
                                "-H", "http://127.0.0.1:8081", "--only-summary", "--csv", "/tmp/x/locust"])
        self.assertEqual(tools.command("locust", "keepalive", self.URL, 10, 5)[-1], "@CSV@")

    def test_master(self):
        argv = tools.locust_command(self.URL, 64, 10, "/tmp/x/locust", workers=2, port=40123)
        self.assertEqual(argv[:3], ["locust", "-f", tools.LOCUSTFILE])
        self.assertIn("--master", argv)
        self.assertNotIn("--worker", argv)
        for flag, value in (("--master-bind-host", "127.0.0.1"), ("--master-bind-port", "40123"),
                            ("--expect-workers", "2"), ("--expect-workers-max-wait", str(tools.WORKER_WAIT)),
                            ("-u", "64"), ("-r", "64"), ("-t", "10s"), ("-H", "http://127.0.0.1:8081"),
                            ("--csv", "/tmp/x/locust")):
            self.assertEqual(argv[argv.index(flag) + 1], value, flag)
        self.assertIn("--headless", argv)
        self.assertIn("--only-summary", argv)
        # What run() fills in: the CSV prefix and the free port.
        argv = tools.command("locust-w2", "keepalive", self.URL, 64, 10)
        self.assertEqual(argv[argv.index("--master-bind-port") + 1], "@PORT@")
        self.assertEqual(argv[argv.index("--csv") + 1], "@CSV@")

    def test_worker(self):
        self.assertEqual(tools.locust_worker_command(40123),
                         ["locust", "-f", tools.LOCUSTFILE, "--worker", "--master-host", "127.0.0.1",
                          "--master-port", "40123"])

    def test_labels(self):
        self.assertEqual(tools.label("locust", 0), "locust")
        self.assertEqual(tools.label("locust", 2), "locust-w2")
        self.assertEqual(tools.label("wrk", 2), "wrk")
        self.assertEqual(tools.split("locust-w2"), ("locust", 2))
        self.assertEqual(tools.split("locust"), ("locust", 0))
        self.assertEqual(tools.split("wrk"), ("wrk", 0))
        with self.assertRaises(tools.Unsupported):
            tools.command("locust-w2", "pipeline", self.URL, 64, 10)

    def test_bench_option(self):
        bench = load_bench()
        args = bench.parse_args(["sanic", "--tool", "locust,wrk", "--locust-workers", "2"], available=[0, 1])
        # One locust process and the distributed form, in the same run.
        self.assertEqual([j[0] for j in args.jobs], ["locust", "locust-w2", "wrk"])
        self.assertEqual([j[0] for j in bench.parse_args(["sanic", "--tool", "locust"], available=[0, 1]).jobs],
                         ["locust"])
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            bench.parse_args(["sanic", "--tool", "wrk", "--locust-workers", "2"])

    def distributed(self, master, worker):
        saved = tools.locust_worker_command
        tools.locust_worker_command = lambda port: worker
        try:
            cpus = str(min(os.sched_getaffinity(0)))
            return tools.run_locust_distributed(master, 2, 1, cpus, dict(os.environ), limit=20)
        finally:
            tools.locust_worker_command = saved

    def test_worker_that_fails_is_a_problem(self):
        with self.assertRaisesRegex(parsers.ParseError, "2 of 2 locust workers failed.*no locustfile"):
            self.distributed(["sh", "-c", "sleep 1"], ["sh", "-c", "echo no locustfile >&2; exit 3"])

    def test_master_without_workers_is_a_problem(self):
        with self.assertRaisesRegex(parsers.ParseError, "did not get its 2 workers.*Gave up"):
            self.distributed(["sh", "-c", "echo Gave up waiting for workers to connect >&2; exit 1"],
                             ["sleep", "30"])

    def test_workers_that_quit_with_their_master_are_fine(self):
        self.assertEqual(self.distributed(["sh", "-c", "sleep 1; echo done >&2"], ["true"]).strip(), "done")

    def test_workers_are_stopped(self):
        # Workers that never quit write their pids (exec keeps it) and sleep;
        # the master waits for both pids (at most 10 s), then ends the run.
        with tempfile.TemporaryDirectory() as d:
            pids = os.path.join(d, "pids")
            worker = ["sh", "-c", f'echo $$ >> {pids}; exec sleep 30']
            master = ["sh", "-c", f'for i in $(seq 200); do [ "$(cat {pids} 2>/dev/null | wc -l)" -ge 2 ] '
                                  '&& break; sleep 0.05; done; echo done >&2']
            self.assertEqual(self.distributed(master, worker).strip(), "done")
            with open(pids) as f:
                started = [int(line) for line in f]
        self.assertEqual(len(started), 2)
        for pid in started:
            # Gone, and waited for: not even a zombie left.
            with self.assertRaises(ProcessLookupError, msg=f"worker {pid} is still there"):
                os.kill(pid, 0)


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
        bench.repeats = lambda tool, args: args.repeat
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
        bench.repeats = lambda tool, args: args.repeat
        jobs = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)]
        plan = [(types.SimpleNamespace(name=n, label=n, kind="persona", workers=1), jobs, n) for n in ("a", "b")]
        bench.measure_interleaved(plan, types.SimpleNamespace(repeat=2), "0", [], [])
        self.assertEqual(order[:4], [(0, "a", "keepalive"), (0, "a", "pipeline"), (0, "b", "keepalive"),
                                     (0, "b", "pipeline")])
        self.assertEqual(order[4:], [(1,) + o[1:] for o in order[:4]])


STATS = {"workers": [], "total": {"requests": 1000, "service_time_us": {
    "count": 1002, "p50": 4.5, "p90": 4.9, "p99": 7.2, "p99_9": 99.1, "max": 5425.8}}}


class AdminStatsTest(unittest.TestCase):
    def test_service_time_in_ms(self):
        r = admin.service_time(STATS)
        self.assertEqual(r["server_count"], 1002)
        self.assertAlmostEqual(r["server_p50"], 0.0045)
        self.assertAlmostEqual(r["server_p99"], 0.0072)
        self.assertAlmostEqual(r["server_p99_9"], 0.0991)
        self.assertAlmostEqual(r["server_max"], 5.4258)

    def test_no_service_time_says_so(self):
        with self.assertRaisesRegex(admin.AdminError, "service_time_us"):
            admin.service_time({"total": {"requests": 3}})
        with self.assertRaisesRegex(admin.AdminError, "service_time_us"):
            admin.service_time([])

    def test_reset_then_stats_over_http(self):
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                seen.append(("POST", self.path))
                self.send_response(200)
                self.send_header("Content-Length", "6")
                self.end_headers()
                self.wfile.write(b"reset\n")

            def do_GET(self):
                seen.append(("GET", self.path))
                body = json.dumps(STATS).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            port = server.server_address[1]
            admin.reset(port)
            self.assertEqual(admin.service_time(admin.stats(port))["server_count"], 1002)
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(seen, [("POST", "/stats/reset"), ("GET", "/stats")])

    def test_silent_port_is_an_admin_error(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # bound, not listening: refused
            with self.assertRaisesRegex(admin.AdminError, f"admin port {port}: POST /stats/reset"):
                admin.reset(port, timeout=1)


def latency_run(p50, p99, server_p50=None, server_p99=None, count=None, problems=None, error=None):
    run = {"p50": p50, "p90": p99, "p99": p99, "requests": 1000, "rps": 200.0, "error": error}
    if server_p50 is not None:
        run.update(server_p50=server_p50, server_p90=server_p99, server_p99=server_p99, server_p99_9=server_p99,
                   server_max=server_p99 * 10, server_count=count)
    if problems:
        run["problems"] = problems
    return run


class ServerLatencyTest(unittest.TestCase):
    def cell(self, runs, target="hello-sanic", kind="persona"):
        bench = load_bench()
        return bench.summarize({"target": target, "name": target.replace("hello-", ""), "kind": kind,
                                "workers": 1, "tool": "wrk", "mode": "keepalive", "connections": 64,
                                "variant": None}, runs)

    def test_medians_and_silent_admin_port_still_clean(self):
        c = self.cell([latency_run(0.5, 2.0, 0.004, 0.010, 1001),
                       latency_run(0.7, 3.0, problems=["admin port 1: POST /stats/reset: refused"]),
                       latency_run(0.6, 2.5, 0.006, 0.020, 1003),
                       latency_run(9.0, 9.0, 9.0, 9.0, 9, error="wrk exited")])
        self.assertEqual((c["runs"], c["clean_runs"]), (4, 3))
        self.assertEqual(c["error"], "wrk exited")
        self.assertAlmostEqual(c["p50_ms"], 0.6)
        self.assertAlmostEqual(c["server_p50_ms"], 0.005)
        self.assertAlmostEqual(c["server_p99_ms"], 0.015)
        self.assertAlmostEqual(c["server_max_ms"], 0.15)
        self.assertEqual(c["server_count"], 1002)
        self.assertEqual(c["server_problems"], "admin port 1: POST /stats/reset: refused")

    def test_table(self):
        ours = self.cell([latency_run(0.5, 2.0, 0.0045, 0.0072, 1002)])
        silent = self.cell([latency_run(0.5, 2.0, problems=["admin port 9: GET /stats: timed out"])],
                           target="hello-tornado")
        peer = self.cell([latency_run(0.5, 2.0)], target="nginx", kind="peer")
        rows = report.server_latency_table([ours, silent, peer]).splitlines()
        self.assertTrue(rows[0].startswith("| target | workers | tool | mode | connections | client p50 / p90 / p99 ms "
                                           "| server p50 / p90 / p99 ms |"))
        self.assertEqual(rows[2], "| hello-sanic | 1 | wrk | keepalive | 64 | 0.5 / 2.00 / 2.00 | "
                                  "0.0045 / 0.0072 / 0.0072 | 0.0072 / 0.072 | 1,000 | 1,002 | 1/1 |  |")
        self.assertEqual(rows[3], "| hello-tornado | 1 | wrk | keepalive | 64 | 0.5 / 2.00 / 2.00 | - / - / - | "
                                  "- / - | 1,000 | - | 1/1 | admin port 9: GET /stats: timed out |")
        self.assertEqual(len(rows), 4)  # nginx has no admin port: not in the table
        self.assertEqual(report.server_latency_table([peer]), "")

    def test_report_links_the_chart(self):
        import tempfile
        ours = self.cell([latency_run(0.5, 2.0, 0.0045, 0.0072, 1002)])
        meta = {"started": "x", "nproc": 2, "cpu_model": "m", "kernel": "k", "server_cpus": "1", "tool_cpus": "0",
                "repeat": 1, "load": "1 s", "connections": "64", "command": "scripts/bench"}
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, meta, [ours], ["latency.png"])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("## Client-side and server-side latency", text)
        self.assertIn("[latency.png](latency.png)", text)
        self.assertIn("| hello-sanic | 1 | wrk | keepalive | 64 |", text)


class FastPeersTest(unittest.TestCase):
    """h2o, Go and Node beside nginx: their configuration, build, and their
    rows of the --performance table."""

    def test_h2o_conf(self):
        with open(os.path.join(SCRIPTS, "peers", "h2o.conf.in")) as f:
            conf = targets.render_h2o_conf(f.read(), 8123, 1, "/tmp/b", "root")
        self.assertNotIn("@", conf)
        self.assertIn("num-threads: 1\n", conf)
        self.assertIn("user: root\n", conf)
        self.assertIn("  host: 127.0.0.1\n  port: 8123\n", conf)
        self.assertIn("file.file: /tmp/b/hello.txt\n", conf)
        self.assertIn("file.send-compressed: OFF\n", conf)
        self.assertNotIn("access-log", conf)

    def test_go_build_is_offline_and_in_the_temp_dir(self):
        cmd, env, cwd = targets.go_build("/tmp/b", go="/usr/bin/go")
        self.assertEqual(cmd, ["/usr/bin/go", "build", "-o", "/tmp/b/go_hello", "."])
        self.assertEqual(cwd, os.path.join(targets.PEERS, "go_hello"))
        self.assertEqual(env["GO111MODULE"], "off")
        self.assertEqual((env["GOCACHE"], env["HOME"]), ("/tmp/b/gocache", "/tmp/b"))

    def test_peers_and_labels(self):
        peers = {t.name: t for t in targets.peers(cpus="1")}
        self.assertEqual([t.name for t in targets.fast_peers()], ["nginx", "h2o", "go", "node"])
        self.assertEqual(peers["h2o"].label, "h2o 2.2.5 (static file)")
        self.assertEqual(peers["go"].label, "Go 1.19 net/http")
        self.assertEqual(peers["node"].label, "Node 20 http")
        self.assertEqual(peers["flask"].label, "flask (real)")
        self.assertFalse(peers["node"].supports_workers(2))
        self.assertTrue(peers["go"].supports_workers(2))

    def test_missing_binary_is_a_start_error(self):
        h2o = targets.H2o("h2o", cpus="0")
        h2o.binary = "/nonexistent/h2o"
        with self.assertRaisesRegex(targets.StartError, "not installed"):
            h2o.start()
        self.assertIsNone(h2o.tmp)  # its temp dir is gone

    def test_performance_rows_beside_nginx(self):
        def cell(name, kind, tool, mode, cpu):
            return {"name": name, "kind": kind, "tool": tool, "mode": mode, "workers": 1, "variant": None,
                    "cpu_us_per_request": cpu}
        cells = [cell("sanic", "persona", "wrk", "keepalive", 8.0), cell("nginx", "peer", "wrk", "keepalive", 10.0),
                 cell("h2o", "peer", "wrk", "keepalive", 16.0), cell("node", "peer", "wrk", "keepalive", 40.0)]
        rows = report.performance_table({"performance": {"idle_rss": []}}, cells).splitlines()
        self.assertIn("| CPU/request, keep-alive (wrk -c64), vs nginx | ≤ 1.0 | hello-sanic 0.80 | yes |", rows)
        self.assertIn("| CPU/request, keep-alive (wrk -c64), vs h2o 2.2.5 (static file) | - | hello-sanic 0.50 | - |",
                      rows)
        self.assertIn("| CPU/request, keep-alive (wrk -c64), vs Node 20 http | - | hello-sanic 0.20 | - |", rows)
        self.assertIn("| CPU/request, 16-deep pipelining (wrk -c64), vs h2o 2.2.5 (static file) | - | "
                      "hello-sanic - | not measured |", rows)
        self.assertFalse(any("Go 1.19" in r for r in rows))  # not run: no rows
        # Keep-alive against the cheapest of them (nginx here): ≤ 1.0.
        self.assertIn("| CPU/request, keep-alive (wrk -c64), vs the cheapest peer of nginx, h2o, Go and Node (nginx) | "
                      "≤ 1.00 | hello-sanic 0.80 | yes |", rows)

    def test_short_connection_and_pipelining_targets(self):
        def cell(name, kind, tool, mode, cpu):
            return {"name": name, "kind": kind, "tool": tool, "mode": mode, "workers": 1, "variant": None,
                    "cpu_us_per_request": cpu}
        cells = [cell("sanic", "persona", "ab", "close", 20.0), cell("nginx", "peer", "ab", "close", 21.0),
                 cell("h2o", "peer", "ab", "close", 25.0), cell("sanic", "persona", "wrk", "pipeline", 0.5),
                 cell("nginx", "peer", "wrk", "pipeline", 6.0), cell("h2o", "peer", "wrk", "pipeline", 4.0)]
        rows = report.performance_table({"performance": {"idle_rss": []}}, cells).splitlines()
        # 20 / 21 = 0.95: within 1.0 but not 0.90.
        self.assertIn("| CPU/request, HTTP/1.0 one request per connection (ab -c100), vs nginx | ≤ 0.90 | "
                      "hello-sanic 0.95 | **no** |", rows)
        self.assertIn("| CPU/request, HTTP/1.0 one request per connection (ab -c100), vs h2o 2.2.5 (static file) | "
                      "≤ 0.95 | hello-sanic 0.80 | yes |", rows)
        # h2o is the cheapest pipelined: 0.5 / 4.0 = 0.125 > 0.10.
        self.assertIn("| CPU/request, 16-deep pipelining (wrk -c64), vs the cheapest peer of nginx, h2o, Go and Node "
                      "(h2o 2.2.5 (static file)) | ≤ 0.10 | hello-sanic 0.12 | **no** |", rows)
        # The ab row against h2o has a target: it is not repeated as an informational one.
        self.assertEqual(sum("(ab -c100), vs h2o" in r for r in rows), 1)


class TomcatPeerTest(unittest.TestCase):
    """Tomcat 10.1 with tomcat_hello's servlet, the live Spring row: its
    server.xml, its build, its label and the article's row it fills."""

    def test_server_xml(self):
        with open(os.path.join(SCRIPTS, "peers", "tomcat_hello", "server.xml.in")) as f:
            conf = targets.render_tomcat_server_xml(f.read(), 8123, 1)
        self.assertNotIn("@", conf)
        self.assertIn('<Server port="-1">', conf)  # no shutdown port
        self.assertIn('protocol="org.apache.coyote.http11.Http11NioProtocol"', conf)
        self.assertIn('address="127.0.0.1" port="8123"', conf)
        self.assertIn('connectionTimeout="60000"', conf)
        self.assertIn('maxThreads="1" minSpareThreads="1"', conf)
        self.assertIn('appBase="webapps" autoDeploy="false"', conf)

    def test_javac_command(self):
        self.assertEqual(targets.javac_command("/tmp/b", javac="/usr/bin/javac", servlet_api="/x/api.jar"),
                         ["/usr/bin/javac", "-cp", "/x/api.jar", "-d", "/tmp/b",
                          os.path.join(targets.PEERS, "tomcat_hello", "HelloServlet.java")])

    def test_label_and_place(self):
        peers = {t.name: t for t in targets.peers(cpus="1")}
        self.assertEqual(peers["tomcat"].label, "Tomcat 10.1 servlet (Spring's engine, without Spring MVC)")
        self.assertEqual((peers["tomcat"].kind, peers["tomcat"].path), ("peer", "/"))
        self.assertTrue(peers["tomcat"].supports_workers(2))
        self.assertNotIn("tomcat", [t.name for t in targets.fast_peers()])  # a JVM: not in --performance
        bench = load_bench()
        self.assertIn("tomcat", bench.PEERS)
        self.assertEqual(bench.parse_args(["spring", "--peers=tomcat"]).peers, "tomcat")

    def test_missing_tomcat_is_a_start_error(self):
        tomcat = targets.Tomcat("tomcat", cpus="0")
        tomcat.home = "/nonexistent/tomcat10"
        with self.assertRaisesRegex(targets.StartError, "catalina.sh is not installed \\(tomcat10-common\\)"):
            tomcat.start()
        self.assertIsNone(tomcat.tmp)  # its temp dir is gone
        self.assertIsNone(tomcat.proc)

    def test_missing_javac_or_servlet_api_is_a_start_error(self):
        with self.assertRaisesRegex(targets.StartError,
                                    "/nonexistent/javac is not installed \\(default-jdk-headless\\)"):
            targets.Tomcat.build("/nonexistent/javac", targets.SERVLET_API)
        with self.assertRaisesRegex(targets.StartError, "/nonexistent/api.jar is not installed \\(tomcat10-common\\)"):
            targets.Tomcat.build("/bin/true", "/nonexistent/api.jar")
        # Once per run: the answer is kept, and given again without looking again.
        self.assertIsInstance(targets.Tomcat._built[("/nonexistent/javac", targets.SERVLET_API)], targets.StartError)

    def test_build_failure_says_why(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            javac = os.path.join(d, "javac")
            with open(javac, "w") as f:
                f.write("#!/bin/sh\necho 'HelloServlet.java:1: error: no' >&2\necho '1 error' >&2\nexit 1\n")
            os.chmod(javac, 0o755)
            with self.assertRaisesRegex(targets.StartError,
                                        "did not build: HelloServlet.java:1: error: no \\| 1 error"):
                targets.Tomcat.build(javac, javac)  # any existing file stands for the jar

    def test_stack_trace_tail_is_its_exceptions(self):
        import tempfile
        tomcat = targets.Tomcat("tomcat", cpus="0")
        with tempfile.TemporaryFile("w+") as tomcat.log:
            tomcat.log.write("SEVERE: Error running command\n"
                             "java.lang.Error: LifecycleException: Protocol handler initialization failed\n"
                             "\tat org.apache.catalina.startup.Catalina.load(Catalina.java:1)\n"
                             "Caused by: java.net.BindException: Address already in use\n"
                             "\tat java.base/sun.nio.ch.Net.bind0(Native Method)\n\t... 13 more\n")
            self.assertEqual(tomcat.stderr_tail(2), "java.lang.Error: LifecycleException: Protocol handler "
                             "initialization failed | Caused by: java.net.BindException: Address already in use")

    @unittest.skipUnless(os.access(targets.JAVAC, os.X_OK) and os.path.exists(targets.SERVLET_API),
                         "javac or tomcat10's servlet API is not installed")
    def test_servlet_compiles(self):
        classes = targets.Tomcat.build(targets.JAVAC, targets.SERVLET_API)
        self.assertTrue(os.path.exists(os.path.join(classes, "HelloServlet.class")))

    def test_spring_row_beside_the_article(self):
        def cell(name, kind, rps):
            return {"name": name, "kind": kind, "tool": "ab", "mode": "close", "workers": 1, "variant": None,
                    "rps": rps}
        rows = report.article_tables([cell("spring", "persona", 10000.0), cell("tomcat", "peer", 4000.0),
                                      cell("sanic", "persona", 9000.0)]).splitlines()
        self.assertIn("| Spring (here: Tomcat 10.1 servlet, without Spring MVC) | 5,477.01 (000: ab -n 20000 -c 1000) "
                      "| 4,000 | 10,000 | 2.5 x |", rows)
        sanic = next(r for r in rows if r.startswith("| Sanic"))
        self.assertIn("cannot run here: the article's figure is the only one", sanic)
        failed = report.article_tables([cell("spring", "persona", 10000.0),
                                        dict(cell("tomcat", "peer", None), error="did not start")]).splitlines()
        self.assertTrue(any("| failed: did not start | 10,000 | - |" in r for r in failed))


if __name__ == "__main__":
    ctest_unittest.main()
