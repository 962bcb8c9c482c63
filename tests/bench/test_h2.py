"""Unit tests of scripts/bench --h2: h2load's HTTP/2 jobs and the protocol
it spoke, the peers' HTTP/2 configurations (nginx, h2o, nghttpd, Go,
Tomcat), the plan of targets and of the idle measure, the options --h2
takes and refuses, and the report's HTTP/2 targets on made-up cells."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from benchlib import extras, parsers, plan, report, targets, tls, tools  # noqa: E402
import ctest_unittest  # noqa: E402
from test_parsers import capture, load_bench  # noqa: E402
from test_tls import STAND_IN, directives, template  # noqa: E402

ECDSA = tls.Certificate("ecdsa", "/tmp/c/ecdsa-cert.pem", "/tmp/c/ecdsa-key.pem")
OPENSSL = shutil.which("openssl")


class JobsTest(unittest.TestCase):
    def argv(self, mode, url="http://127.0.0.1:5001/"):
        load = plan.tool_load("h2load", 1, 100)
        return tools.command("h2load", mode, url, load.connections, 5, None, load.threads)

    def test_every_job(self):
        jobs = load_bench().parse_args(["--h2"], available=[0, 1]).jobs
        self.assertEqual(jobs, [("h2load", "m1", 100), ("h2load", "m10", 100), ("h2load", "m100", 100)])
        # No --h1: h2c by prior knowledge to http://, h2 by ALPN to https://.
        self.assertEqual(self.argv("m1"), ["h2load", "-t", "1", "-c", "100", "-D", "5", "-m", "1",
                                           "http://127.0.0.1:5001/"])
        self.assertEqual(self.argv("m100", "https://127.0.0.1:8443/")[-3:], ["-m", "100", "https://127.0.0.1:8443/"])
        # HTTP/1.1 is unchanged.
        self.assertEqual(tools.command("h2load", "pipeline", "http://x/", 64, 5)[:2], ["h2load", "--h1"])

    def test_http2_is_h2loads_only(self):
        for tool in ("wrk", "ab", "locust"):
            with self.assertRaises(tools.Unsupported, msg=tool):
                tools.command(tool, "m10", "http://x/", 100, 5)

    def test_protocol_spoken(self):
        self.assertEqual(parsers.parse_h2load(capture("h2load-h2c.txt"))["protocol"], "h2c")
        h2 = parsers.parse_h2load(capture("h2load-h2.txt"))
        self.assertEqual((h2["protocol"], h2["requests"], h2["failed"], h2["rps"], h2["bytes"]),
                         ("h2", 2000, 0, 28159.10, 64430))
        self.assertEqual(parsers.parse_h2load(capture("h2load.txt"))["protocol"], "http/1.1")

    def test_a_run_that_did_not_speak_http2_is_a_problem(self):
        saved = tools._run
        try:
            tools._run = lambda *a: parsers.parse_h2load(capture("h2load-no-h2.txt"))
            r = tools.run("h2load", "m10", "https://127.0.0.1:1/", 100, "0", 5)
            self.assertEqual(r["error"], "h2load spoke http/1.1, not HTTP/2")
            self.assertNotIn("error", tools.run("h2load", "keepalive", "https://127.0.0.1:1/", 100, "0", 5))
            tools._run = lambda *a: parsers.parse_h2load(capture("h2load-h2.txt"))
            self.assertNotIn("error", tools.run("h2load", "m100", "https://127.0.0.1:1/", 100, "0", 5))
        finally:
            tools._run = saved


class PeersTest(unittest.TestCase):
    def test_nginx(self):
        plain = directives(targets.render_nginx_conf(template("nginx.conf.in"), 1, 8080, "/tmp/b", http2=True))
        self.assertIn("listen 127.0.0.1:8080 http2 reuseport backlog=4096;", plain)
        conf = targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, "/tmp/b", ECDSA, http2=True)
        self.assertNotIn("@", conf)
        self.assertIn("listen 127.0.0.1:8443 ssl http2 reuseport backlog=4096;", directives(conf))
        # Without http2, the listeners of --performance and --tls.
        self.assertIn("listen 127.0.0.1:8443 ssl reuseport backlog=4096;",
                      directives(targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, "/tmp/b", ECDSA)))

    def test_h2o(self):
        conf = directives(targets.render_h2o_conf(template("h2o.conf.in"), 8080, 1, "/tmp/b", "root", http2=True))
        # h2o 2.2 takes the HTTP/2 preface in clear only when it may upgrade.
        for line in ("http1-upgrade-to-http2: ON", "http2-idle-timeout: 75", "max-connections: 16384"):
            self.assertIn(line, conf)
        self.assertIn("http1-upgrade-to-http2: OFF",
                      directives(targets.render_h2o_conf(template("h2o.conf.in"), 8080, 1, "/tmp/b", "root")))
        tls_conf = targets.render_h2o_conf(template("h2o-tls.conf.in"), 8443, 1, "/tmp/b", "root", ECDSA)
        self.assertNotIn("@", tls_conf)
        self.assertIn("http2-idle-timeout: 75", directives(tls_conf))

    def test_nghttpd(self):
        t = targets.NgHttpd("nghttpd", cpus="1")
        self.assertTrue(t.http2)
        t.binary = STAND_IN
        with tempfile.TemporaryDirectory() as d:
            t.tmp, t.port = d, 8080
            self.assertEqual(t.command(), [STAND_IN, "-a", "127.0.0.1", "-n", "1", "-d", d, "--no-tls", "8080"])
            with open(os.path.join(d, "index.html")) as f:
                self.assertEqual(f.read(), "Hello!!!")
        t.tls = ECDSA
        with tempfile.TemporaryDirectory() as d:
            t.tmp, t.port = d, 8080
            self.assertEqual(t.command()[-3:], ["8080", ECDSA.key, ECDSA.cert])
        self.assertEqual(t.label, "nghttpd 1.52 (static file) +h2 +tls ECDSA P-256")
        self.assertEqual(targets.NgHttpd("nghttpd").label, "nghttpd 1.52 (static file) +h2c")

    def test_missing_nghttpd_is_one_line(self):
        t = targets.NgHttpd("nghttpd", cpus="1")
        t.binary = "/nonexistent/nghttpd"
        with self.assertRaisesRegex(targets.StartError, r"^nghttpd 1.52 \(static file\) \+h2c did not start: "
                                                        r"/nonexistent/nghttpd is not installed \(nghttp2-server\)$"):
            t.start()
        self.assertIsNone(t.tmp)

    def test_go_over_tls(self):
        go = targets.GoHello("go", tls=ECDSA, http2=True)
        go.port = 8443
        env = go.env()
        self.assertEqual((env["TLS_CERT"], env["TLS_KEY"]), (ECDSA.cert, ECDSA.key))
        self.assertEqual(go.label, "Go 1.19 net/http +h2 +tls ECDSA P-256")
        plain = targets.GoHello("go")
        plain.port = 8080
        self.assertNotIn("TLS_CERT", plain.env())
        self.assertEqual(plain.label, "Go 1.19 net/http")
        with open(os.path.join(targets.GO_SOURCE, "main.go")) as f:
            self.assertIn('http.ListenAndServeTLS("127.0.0.1:"+port, cert, os.Getenv("TLS_KEY"), nil)', f.read())

    def test_tomcat(self):
        xml = targets.render_tomcat_server_xml(template(os.path.join("tomcat_hello", "server.xml.in")), 8080, 10)
        connectors = ET.fromstring(targets.tomcat_h2_server_xml(xml)).find("Service").findall("Connector")
        self.assertEqual(len(connectors), 1)
        self.assertEqual(connectors[0].find("UpgradeProtocol").get("className"),
                         "org.apache.coyote.http2.Http2Protocol")
        self.assertIsNone(connectors[0].get("SSLEnabled"))
        # --h2 over TLS: the one connector, on its port, with TLS.
        tls_one = ET.fromstring(targets.tomcat_h2_server_xml(xml, "/c.pem", "/k.pem")).find("Service")
        (c,) = tls_one.findall("Connector")
        self.assertEqual((c.get("port"), c.get("SSLEnabled"), c.get("scheme")), ("8080", "true", "https"))
        self.assertEqual(c.find("SSLHostConfig/Certificate").attrib,
                         {"certificateFile": "/c.pem", "certificateKeyFile": "/k.pem"})
        # The capture's: the connector in clear, and a copy with TLS beside it.
        both = ET.fromstring(targets.tomcat_h2_server_xml(xml, "/c.pem", "/k.pem", 8443)).find("Service")
        clear, over = both.findall("Connector")
        self.assertEqual((clear.get("port"), clear.get("SSLEnabled"), over.get("port"), over.get("SSLEnabled")),
                         ("8080", None, "8443", "true"))
        self.assertIsNotNone(over.find("UpgradeProtocol"))
        self.assertEqual(targets.Tomcat("tomcat", tls=ECDSA, http2=True).label,
                         "Tomcat 10.1 servlet (Spring's engine, without Spring MVC) +h2 +tls ECDSA P-256")

    def test_persona(self):
        sanic = targets.Persona("sanic", "/b", cpus="1", tls=ECDSA, http2=True)
        sanic.tmp, sanic.port, sanic.admin_port = "/tmp/x", 8443, 8444
        self.assertEqual(sanic.command()[7:], ["--admin", "127.0.0.1:8444", "--h2", "--tls", "--tls-cert",
                                               ECDSA.cert, "--tls-key", ECDSA.key])
        self.assertEqual(sanic.label, "hello-sanic +h2 +tls ECDSA P-256")
        self.assertEqual(targets.Persona("sanic", "/b", http2=True).label, "hello-sanic +h2c")
        plain = targets.Persona("sanic", "/b", admin=False)
        plain.tmp, plain.port = "/tmp/x", 5001
        self.assertNotIn("--h2", plain.command())

    @unittest.skipUnless(OPENSSL and os.access("/usr/sbin/nginx", os.X_OK), "openssl or nginx is not installed")
    def test_nginx_accepts_it(self):
        with tempfile.TemporaryDirectory() as d:
            confs = [("nginx.conf.in", None),
                     ("nginx-tls.conf.in", tls.make_certificates(d, kinds=("ecdsa",))["ecdsa"])]
            for name, cert in confs:
                path = os.path.join(d, "nginx.conf")
                with open(path, "w") as f:
                    f.write(targets.render_nginx_conf(template(name), 1, 8443, d, cert, http2=True))
                done = subprocess.run(["/usr/sbin/nginx", "-t", "-p", d, "-c", path], capture_output=True, text=True)
                self.assertEqual(done.returncode, 0, done.stderr)

    @unittest.skipUnless(os.access(targets.H2o.binary, os.X_OK), "h2o is not installed")
    def test_h2o_accepts_it(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "h2o.conf")
            with open(path, "w") as f:
                f.write(targets.render_h2o_conf(template("h2o.conf.in"), 8443, 1, d, "root", http2=True))
            done = subprocess.run([targets.H2o.binary, "-t", "-c", path], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr + done.stdout)


class PlanTest(unittest.TestCase):
    def test_targets(self):
        bench = load_bench()
        args = bench.parse_args(["--h2"], available=[0, 1])
        items = bench.h2_items(args, args.split, ECDSA)
        self.assertEqual([(t.label, variant) for t, _, variant in items], [
            ("hello-sanic +h2c", "h2c"), ("h2o 2.2.5 (static file) +h2c", "h2c"), ("nginx +h2c", "h2c"),
            ("nghttpd 1.52 (static file) +h2c", "h2c"),
            ("Tomcat 10.1 servlet (Spring's engine, without Spring MVC) +h2c", "h2c"),
            ("hello-sanic +h2 +tls ECDSA P-256", "h2"), ("h2o 2.2.5 (static file) +h2 +tls ECDSA P-256", "h2"),
            ("nginx +h2 +tls ECDSA P-256", "h2"), ("nghttpd 1.52 (static file) +h2 +tls ECDSA P-256", "h2"),
            ("Go 1.19 net/http +h2 +tls ECDSA P-256", "h2"),
            ("Tomcat 10.1 servlet (Spring's engine, without Spring MVC) +h2 +tls ECDSA P-256", "h2")])
        self.assertTrue(all(jobs == args.jobs and t.workers == 1 and t.cpus == "1" and t.http2
                            for t, jobs, _ in items))
        # 5 runs a cell; 1 (its error) where h2load is not installed (a machine without --bench).
        runs = 5 if tools.missing("h2load") is None else 1
        self.assertEqual(sum(bench.planned_runs(t, jobs, args) for t, jobs, _ in items), 11 * 3 * runs)

    def test_idle_targets(self):
        bench = load_bench()
        args = bench.parse_args(["--h2", "sanic", "spring"], available=[0, 1])
        idle = bench.h2_idle_targets(args, args.split, ECDSA)
        self.assertEqual([(t.label, v) for t, v in idle], [
            ("hello-sanic +h2c", "h2c"), ("hello-spring +h2c", "h2c"), ("h2o 2.2.5 (static file) +h2c", "h2c"),
            ("nginx +h2c", "h2c"), ("nghttpd 1.52 (static file) +h2c", "h2c"),
            ("hello-sanic +h2 +tls ECDSA P-256", "h2"), ("hello-spring +h2 +tls ECDSA P-256", "h2"),
            ("h2o 2.2.5 (static file) +h2 +tls ECDSA P-256", "h2"), ("nginx +h2 +tls ECDSA P-256", "h2"),
            ("nghttpd 1.52 (static file) +h2 +tls ECDSA P-256", "h2"), ("Go 1.19 net/http +h2 +tls ECDSA P-256", "h2")])
        persona = idle[0][0]
        self.assertFalse(persona.admin)
        self.assertEqual(persona.extra, ["--keepalive-timeout", "75"])

    def test_performance_has_h2c_rows(self):
        bench = load_bench()
        self.assertEqual(bench.PERFORMANCE_H2_JOBS, [("h2load", "m1", 100), ("h2load", "m100", 100)])
        self.assertEqual(bench.parse_args(["--performance"], available=[0, 1]).idle_connections, 10000)

    def test_established_counts_the_servers_side(self):
        table = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
                 "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"
                 "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
                 "   2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 3\n"
                 "   3: 0100007F:1F90 0100007F:D432 06 00000000:00000000 00:00000000 00000000     0        0 4\n")
        with tempfile.NamedTemporaryFile("w", suffix=".tcp") as f:
            f.write(table)
            f.flush()
            self.assertEqual(extras.established(8080, (f.name, "/nonexistent")), 1)


class OptionsTest(unittest.TestCase):
    def test_defaults(self):
        args = load_bench().parse_args(["--h2"], available=[0, 1])
        self.assertEqual((args.targets, args.repeat, args.workers_list, args.duration, args.idle_connections),
                         (["sanic"], 5, [1], 5, 2000))
        args = load_bench().parse_args(["--h2", "spring", "--repeat", "7", "--idle-connections", "500"],
                                       available=[0, 1])
        self.assertEqual((args.targets, args.repeat, args.idle_connections), (["spring"], 7, 500))

    def test_quick_is_a_check(self):
        args = load_bench().parse_args(["--h2", "--quick"], available=[0, 1])
        self.assertEqual((args.targets, args.duration, args.repeat, args.idle_connections, args.access_log_pair),
                         (["sanic"], 1, 2, 100, False))

    def test_refused(self):
        bench = load_bench()
        with tempfile.TemporaryDirectory() as before:
            for bad in (["--performance"], ["--shaping"], ["--compare", before], ["--scaling"], ["--tls"],
                        ["--url", "http://127.0.0.1:1/"], ["--requests", "100"], ["--tool", "h2load"],
                        ["--mode", "keepalive"], ["--workers", "2"], ["--connections", "8"], ["--peers"],
                        ["--access-log-pair"], ["floor"], ["--quick", "--duration", "3"]):
                err = io.StringIO()
                with self.assertRaises(SystemExit, msg=bad), contextlib.redirect_stderr(err):
                    bench.parse_args(["--h2"] + bad, available=[0, 1])
                self.assertIn("--h2", err.getvalue(), bad)

    def test_http2_modes_are_no_mode_of_a_matrix(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            load_bench().parse_args(["sanic", "--tool", "h2load", "--mode", "m10"], available=[0, 1])


def cell(name, kind, mode, variant, cpu, runs=None, error=None):
    return {"target": name, "name": name, "kind": kind, "workers": 1, "tool": "h2load", "mode": mode,
            "connections": 100, "variant": variant, "rps": 1000.0 if cpu else None, "cpu_us_per_request": cpu,
            "cpu_us_runs": runs or ([cpu] * 5 if cpu else []), "runs": 5, "clean_runs": 5 if cpu else 0,
            "error": error}


def made_up_cells():
    """h2c: -m100 met against nginx, not h2o (0.667), -m1 not against h2o; h2: nginx did not
    start, h2o met; nghttpd, Go (h2 only) and Tomcat beside."""
    cpu = {"m1": (10.0, 20.0, 10.5), "m10": (2.0, 12.0, 2.5), "m100": (1.0, 6.0, 1.5)}
    out = []
    for variant in ("h2c", "h2"):
        for mode, (mine, nginx, h2o) in cpu.items():
            out += [cell("sanic", "persona", mode, variant, mine, [mine, mine * 1.1, None, mine, mine]),
                    cell("h2o", "peer", mode, variant, h2o if variant == "h2c" else h2o * 2),
                    cell("nghttpd", "peer", mode, variant, 3.0), cell("tomcat", "peer", mode, variant, 50.0)]
            if variant == "h2c":
                out.append(cell("nginx", "peer", mode, variant, nginx))
            else:
                out += [cell("nginx", "peer", mode, variant, None, error="nginx +h2 did not start: no output"),
                        cell("go", "peer", mode, variant, 40.0)]
    return out


IDLE = [{"target": t, "name": n, "kind": k, "variant": v, "connections": 2000, "bytes_per_connection": b}
        for t, n, k, v, b in (("hello-sanic +h2c", "sanic", "persona", "h2c", 6000.0),
                              ("nginx +h2c", "nginx", "peer", "h2c", 6400.0),
                              ("h2o +h2c", "h2o", "peer", "h2c", 3100.0),
                              ("hello-sanic +h2", "sanic", "persona", "h2", 41000.0),
                              ("nginx +h2", "nginx", "peer", "h2", 21000.0),
                              ("go +h2", "go", "peer", "h2", 60000.0))]
META = {"started": "x", "nproc": 2, "cpu_model": "m", "kernel": "k", "server_cpus": "1", "tool_cpus": "0",
        "repeat": 5, "load": "5 s", "connections": "100", "command": "scripts/bench --h2",
        "h2": {"personas": ["sanic"], "rounds": 5, "key": "ECDSA P-256", "quick": False, "idle_connections": 2000,
               "idle_rss": IDLE}}


class H2ReportTest(unittest.TestCase):
    def rows(self, meta=META, cells=None):
        return report.h2_table(meta, made_up_cells() if cells is None else cells).splitlines()

    def row(self, start, rows=None):
        found = [r for r in rows or self.rows() if r.startswith(start)]
        self.assertEqual(len(found), 1, start)
        return found[0]

    def test_judged(self):
        self.assertEqual(
            self.row("| CPU/request, h2c (prior knowledge, in clear), h2load -c100 -m100, hello-sanic vs nginx |"),
            "| CPU/request, h2c (prior knowledge, in clear), h2load -c100 -m100, hello-sanic vs nginx | ≤ 0.50 | "
            "hello-sanic 1.00 µs, nginx 6.00 µs: 0.167; round by round 0.167, 0.183, 0.167, 0.167 (median 0.167) "
            "| yes |")
        self.assertIn(": 0.667;", self.row("| CPU/request, h2c (prior knowledge, in clear), h2load -c100 -m100, "
                                           "hello-sanic vs h2o 2.2.5 | ≤ 0.60 |"))
        row = self.row("| CPU/request, h2c (prior knowledge, in clear), h2load -c100 -m1, hello-sanic vs h2o 2.2.5 |")
        self.assertIn(": 0.952;", row)
        self.assertTrue(row.endswith("| **no** |"), row)
        self.assertTrue(self.row("| CPU/request, h2 (ALPN, TLS), h2load -c100 -m1, hello-sanic vs h2o").endswith(
            "| yes |"))
        # A peer that did not start: its error, "not measured", never "no".
        self.assertEqual(self.row("| CPU/request, h2 (ALPN, TLS), h2load -c100 -m100, hello-sanic vs nginx |"),
                         "| CPU/request, h2 (ALPN, TLS), h2load -c100 -m100, hello-sanic vs nginx | ≤ 0.50 | "
                         "nginx +h2 did not start: no output | not measured |")
        judged = [r for r in self.rows(cells=[]) if r.startswith("| CPU/request")]
        self.assertEqual(len(judged), 6)
        self.assertTrue(all(r.endswith("| not measured | not measured |") for r in judged), judged)

    def test_idle_memory(self):
        self.assertEqual(self.row("| RSS per idle HTTP/2 connection, h2c (prior knowledge, in clear), hello-sanic vs "
                                  "nginx |"),
                         "| RSS per idle HTTP/2 connection, h2c (prior knowledge, in clear), hello-sanic vs nginx | "
                         "≤ 0.50 | hello-sanic 6,000 bytes, nginx 6,400 bytes (2,000 connections): 0.94 | **no** |")
        self.assertIn("| ≤ 1.00 | hello-sanic 41,000 bytes, nginx 21,000 bytes (2,000 connections): 1.95 | **no** |", self.row("| RSS per idle HTTP/2 connection, h2 (ALPN, TLS), hello-sanic "
                                                     "vs nginx |"))
        self.assertIn("| none (informational) | hello-sanic 41,000 bytes, go 60,000 bytes (2,000 connections): "
                      "0.68 | - |", self.row("| RSS per idle HTTP/2 connection, h2 (ALPN, TLS), hello-sanic vs Go"))
        # Peers not measured for a protocol have no row; nginx always has one.
        self.assertFalse([r for r in self.rows() if r.startswith("| RSS") and "Tomcat" in r])
        self.assertFalse([r for r in self.rows()
                          if r.startswith("| RSS per idle HTTP/2 connection, h2c") and "Go" in r])
        meta = dict(META, h2=dict(META["h2"], idle_rss=[]))
        self.assertIn("| hello-sanic: not measured; nginx: not measured | not measured |",
                      self.row("| RSS per idle HTTP/2 connection, h2 (ALPN, TLS), hello-sanic vs nginx |",
                               self.rows(meta)))

    def test_every_ratio(self):
        self.assertIn("| h2 (ALPN, TLS) | h2load -c100 -m100 | 1.00 | 3.00 (0.333) | - | 3.00 (0.333) | "
                      "40.00 (0.025) | 50.00 (0.020) |", self.rows())
        self.assertIn("| h2c (prior knowledge, in clear) | h2load -c100 -m10 | 2.00 | 2.50 (0.800) | 12.00 (0.167) | "
                      "3.00 (0.667) | not run | 50.00 (0.040) |", self.rows())

    def test_cells_and_section(self):
        self.assertIn("| go | h2 | h2load -c100 -m10 | 1,000 | 40.00 | 5/5 |  |", self.rows())
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, META, made_up_cells(), [])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("## HTTP/2\n\nhello-sanic (started with `--h2`", text)
        self.assertNotIn("--quick", text)
        quick = dict(META, h2=dict(META["h2"], quick=True, rounds=2), load="1 s")
        self.assertIn("**`--quick`: every target and job 2 times for 1 s", report.h2_text(quick))
        self.assertEqual(report.h2_table({}, made_up_cells()), "")

    def test_performance_rows(self):
        cells = [c for c in made_up_cells() if c["variant"] == "h2c" and c["mode"] != "m10"]
        meta = {"performance": {"idle_rss": [], "allocations": {}, "micro_benchmark": {}}}
        rows = report.performance_table(meta, cells).splitlines()
        self.assertIn("| CPU/request, HTTP/2 h2c (h2load -c100 -m100), vs h2o 2.2.5 | ≤ 0.60 | hello-sanic 0.67 | "
                      "**no** |", rows)
        self.assertIn("| CPU/request, HTTP/2 h2c (h2load -c100 -m100), vs nginx | ≤ 0.50 | hello-sanic 0.17 | yes |",
                      rows)
        self.assertIn("| CPU/request, HTTP/2 h2c (h2load -c100 -m1), vs h2o 2.2.5 | ≤ 0.90 | hello-sanic 0.95 | "
                      "**no** |", rows)
        self.assertFalse([r for r in report.performance_table(meta, []).splitlines() if "HTTP/2" in r])


if __name__ == "__main__":
    ctest_unittest.main()
