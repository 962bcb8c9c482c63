"""Unit tests of scripts/benchlib/parsers.py on real captured tool output
and of the peers' setup (the --shaping report and the --admin latency:
test_report.py)."""
import contextlib
import io
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from benchlib import parsers, report, targets, tools  # noqa: E402

import ctest_unittest  # noqa: E402


def load_bench():
    """scripts/bench.py (what scripts/bench runs) as a module."""
    loader = importlib.machinery.SourceFileLoader("bench", os.path.join(SCRIPTS, "bench.py"))
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
