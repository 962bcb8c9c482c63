"""Unit tests of scripts/bench --tls: the certificates, the nginx and h2o
TLS configurations, the argv of each job, tls_resume's parser, the
report's TLS targets on made-up cells, and the options --tls refuses."""
import contextlib
import io
import os
import shutil
import socket
import socketserver
import threading
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from benchlib import extras, parsers, plan, report, targets, tls, tools  # noqa: E402
import ctest_unittest  # noqa: E402
from test_parsers import capture, load_bench  # noqa: E402

ECDSA = tls.Certificate("ecdsa", "/tmp/c/ecdsa-cert.pem", "/tmp/c/ecdsa-key.pem")
RSA = tls.Certificate("rsa", "/tmp/c/rsa-cert.pem", "/tmp/c/rsa-key.pem")
URL = "https://127.0.0.1:8443/"
OPENSSL = shutil.which("openssl")
# Any executable, in a target's `binary`: command() only checks that its
# binary is installed before it writes the configuration and the argv.
STAND_IN = sys.executable


def template(name):
    with open(os.path.join(SCRIPTS, "peers", name)) as f:
        return f.read()


def directives(conf):
    """The configuration's lines without comments."""
    return [line.strip() for line in conf.splitlines() if line.strip() and not line.strip().startswith("#")]


class CertificateTest(unittest.TestCase):
    def test_commands(self):
        self.assertEqual(tls.certificate_command("ecdsa", "c.pem", "k.pem"), [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "k.pem", "-out", "c.pem", "-days", "7", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        self.assertEqual(tls.certificate_command("rsa", "c.pem", "k.pem")[3:5], ["-newkey", "rsa:2048"])
        self.assertEqual((ECDSA.label, RSA.label), ("ECDSA P-256", "RSA 2048"))

    @unittest.skipUnless(OPENSSL, "openssl is not installed")
    def test_made_by_openssl(self):
        with tempfile.TemporaryDirectory() as d:
            certs = tls.make_certificates(d)
            self.assertEqual(list(certs), ["ecdsa", "rsa"])
            for kind, expected in (("ecdsa", "NIST CURVE: P-256"), ("rsa", "Public-Key: (2048 bit)")):
                text = subprocess.run([OPENSSL, "x509", "-in", certs[kind].cert, "-noout", "-text"],
                                      capture_output=True, text=True, check=True).stdout
                self.assertIn(expected, text)
                self.assertIn("Subject: CN = localhost", text)
                self.assertIn("DNS:localhost, IP Address:127.0.0.1", text)
                self.assertTrue(os.path.getsize(certs[kind].key))

    def test_missing_openssl_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(tls.CertificateError, "not installed"):
                tls.make_certificates(d, openssl="/nonexistent/openssl")


class TemplateTest(unittest.TestCase):
    def test_nginx(self):
        conf = targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, "/tmp/b", ECDSA)
        self.assertNotIn("@", conf)
        lines = directives(conf)
        for line in ("worker_processes 1;", "listen 127.0.0.1:8443 ssl reuseport backlog=4096;",
                     "ssl_certificate /tmp/c/ecdsa-cert.pem;", "ssl_certificate_key /tmp/c/ecdsa-key.pem;",
                     "ssl_protocols TLSv1.2 TLSv1.3;", "access_log off;", 'return 200 "Hello!!!";'):
            self.assertIn(line, lines)
        # nginx's defaults: tickets on, no shared session cache, 16k records.
        for name in ("ssl_session_cache", "ssl_session_tickets", "ssl_buffer_size"):
            self.assertFalse([line for line in lines if line.startswith(name)], name)
        # The plain one is unchanged by the TLS keys.
        plain = targets.render_nginx_conf(template("nginx.conf.in"), 2, 8080, "/tmp/b")
        self.assertIn("listen 127.0.0.1:8080 reuseport backlog=4096;", directives(plain))

    def test_h2o(self):
        conf = targets.render_h2o_conf(template("h2o-tls.conf.in"), 8443, 1, "/tmp/b", "root", RSA)
        self.assertNotIn("@", conf)
        self.assertIn("  port: 8443\n  ssl:\n    certificate-file: /tmp/c/rsa-cert.pem\n"
                      "    key-file: /tmp/c/rsa-key.pem\n    minimum-version: TLSv1.2\n", conf)
        lines = directives(conf)
        # Idle connections stay open as long as nginx's (75 s), so that the
        # idle measure finds all of them open.
        for line in ("num-threads: 1", "max-connections: 16384", "user: root", "http1-upgrade-to-http2: OFF",
                     "http1-request-timeout: 75", "http2-idle-timeout: 75",
                     "neverbleed: OFF", "ocsp-update-interval: 0", "file.file: /tmp/b/hello.txt"):
            self.assertIn(line, lines)

    def test_targets_use_them(self):
        with tempfile.TemporaryDirectory() as d:
            nginx = targets.Nginx("nginx", cpus="1", tls=ECDSA)
            nginx.tmp, nginx.port = d, 8443
            argv = nginx.command()
            with open(argv[-1]) as f:
                self.assertIn("ssl_certificate /tmp/c/ecdsa-cert.pem;", f.read())
            h2o = targets.H2o("h2o", cpus="1", tls=RSA)
            h2o.tmp, h2o.port, h2o.binary = d, 8444, STAND_IN
            argv = h2o.command()
            self.assertEqual(argv, [STAND_IN, "-c", os.path.join(d, "h2o.conf")])
            with open(argv[-1]) as f:
                self.assertIn("key-file: /tmp/c/rsa-key.pem", f.read())
        self.assertEqual((nginx.scheme, nginx.label), ("https", "nginx +tls ECDSA P-256"))
        self.assertEqual(h2o.label, "h2o 2.2.5 (static file) +tls RSA 2048")
        self.assertEqual(targets.Nginx("nginx").scheme, "http")

    def test_forced_suite(self):
        forced = tls.forced(ECDSA)
        self.assertEqual((forced.suites, forced.label), ("TLS_AES_256_GCM_SHA384",
                                                         "ECDSA P-256, TLS_AES_256_GCM_SHA384 only"))
        conf = directives(targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, "/tmp/b", forced))
        self.assertIn("ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384;", conf)
        plain = directives(targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, "/tmp/b", ECDSA))
        self.assertFalse([line for line in plain if "ssl_conf_command" in line or "@" in line], plain)
        sanic = targets.Persona("sanic", "/b", cpus="1", tls=forced, admin=False)
        sanic.tmp, sanic.port = "/tmp/x", 8443
        self.assertEqual(sanic.command()[-2:], ["--tls-ciphersuites", "TLS_AES_256_GCM_SHA384"])
        self.assertEqual(sanic.label, "hello-sanic +tls ECDSA P-256, TLS_AES_256_GCM_SHA384 only")
        with tempfile.TemporaryDirectory() as d:
            for cert, conf in ((forced, os.path.join(d, "openssl.cnf")), (ECDSA, None)):
                h2o = targets.H2o("h2o", cpus="1", tls=cert)
                h2o.tmp, h2o.port, h2o.binary = d, 8444, STAND_IN
                h2o.command()
                self.assertEqual(h2o.env().get("OPENSSL_CONF"), conf)
            with open(os.path.join(d, "openssl.cnf")) as f:
                text = f.read()
        self.assertIn("openssl_conf = openssl_init\n", text)
        self.assertIn("[tls_defaults]\nCiphersuites = TLS_AES_256_GCM_SHA384\n", text)

    def test_persona_flags(self):
        sanic = targets.Persona("sanic", "/b", cpus="1", tls=ECDSA)
        sanic.tmp, sanic.port, sanic.admin_port = "/tmp/x", 8443, 8444
        self.assertEqual(sanic.command()[7:], ["--admin", "127.0.0.1:8444", "--tls", "--tls-cert",
                                               "/tmp/c/ecdsa-cert.pem", "--tls-key", "/tmp/c/ecdsa-key.pem"])
        self.assertEqual((sanic.scheme, sanic.label), ("https", "hello-sanic +tls ECDSA P-256"))

    @unittest.skipUnless(OPENSSL and os.access("/usr/sbin/nginx", os.X_OK), "openssl or nginx is not installed")
    def test_nginx_accepts_it(self):
        with tempfile.TemporaryDirectory() as d:
            cert = tls.make_certificates(d)["ecdsa"]
            path = os.path.join(d, "nginx.conf")
            for served in (cert, tls.forced(cert)):
                with open(path, "w") as f:
                    f.write(targets.render_nginx_conf(template("nginx-tls.conf.in"), 1, 8443, d, served))
                done = subprocess.run(["/usr/sbin/nginx", "-t", "-p", d, "-c", path], capture_output=True,
                                      text=True)
                self.assertEqual(done.returncode, 0, done.stderr)

    @unittest.skipUnless(OPENSSL and os.access(targets.H2o.binary, os.X_OK), "openssl or h2o is not installed")
    def test_h2o_accepts_it(self):
        with tempfile.TemporaryDirectory() as d:
            cert = tls.make_certificates(d)["rsa"]
            path = os.path.join(d, "h2o.conf")
            with open(path, "w") as f:
                f.write(targets.render_h2o_conf(template("h2o-tls.conf.in"), 8443, 1, d, "root", cert))
            done = subprocess.run([targets.H2o.binary, "-t", "-c", path], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr + done.stdout)


class JobsTest(unittest.TestCase):
    def setUp(self):
        self.bench = load_bench()
        self.saved = dict(tools.BINARIES)

    def tearDown(self):
        tools.BINARIES.clear()
        tools.BINARIES.update(self.saved)

    def argv(self, tool, mode, conns):
        load = plan.tool_load(tool, 1, conns)
        return tools.command(tool, mode, URL, load.connections, 5, None, load.threads)

    def test_every_job(self):
        jobs = self.bench.parse_args(["--tls"], available=[0, 1]).jobs
        self.assertEqual(jobs, [("wrk", "keepalive", 64), ("wrk", "pipeline", 64), ("ab", "close", 20),
                                ("tls_resume", "resume", 1)])
        self.assertEqual(self.argv(*jobs[0]), ["wrk", "-t1", "-c64", "-d5s", "--latency", URL])
        self.assertEqual(self.argv(*jobs[1]), ["wrk", "-t1", "-c64", "-d5s", "--latency", "-s", tools.PIPELINE_LUA,
                                               URL])
        # No -k: a new connection, and with it a full handshake, per request.
        self.assertEqual(self.argv(*jobs[2]), ["ab", "-q", "-c", "20", "-t", "5", "-n", "100000000", URL])
        tools.use_build_dir("/b")
        self.assertEqual(self.argv(*jobs[3]), [
            "/b/tests/tls_resume", "--port", "8443", "--host", "127.0.0.1", "--path", "/", "--duration", "5",
            "--threads", "1", "--tls-max", "1.3", "--json"])
        self.assertEqual(tools.tls_resume_command("https://127.0.0.1:9/index?a=1", 2, requests=100)[6:10],
                         ["/index?a=1", "--count", "100", "--threads"])

    def test_resume_is_tls_resumes_only(self):
        with self.assertRaises(tools.Unsupported):
            tools.command("wrk", "resume", URL, 64, 5)
        with self.assertRaises(tools.Unsupported):
            tools.command("tls_resume", "keepalive", URL, 1, 5)
        self.assertEqual(plan.tool_load("tls_resume", 8, 1), plan.Load(1, 1, 1, 1))

    def test_missing_tls_resume_is_one_run_that_says_so(self):
        tools.use_build_dir("/nonexistent")
        self.assertEqual(tools.missing("tls_resume"),
                         "/nonexistent/tests/tls_resume is not built (scripts/test builds it)")
        args = self.bench.parse_args(["--tls"], available=[0, 1])
        target = targets.Nginx("nginx", tls=ECDSA)
        runs = self.bench.planned_runs(target, args.jobs, args)
        installed = sum(tools.missing(t) is None for t, _, _ in args.jobs[:3])
        self.assertEqual(runs, 5 * installed + (3 - installed) + 1)

    def test_targets(self):
        args = self.bench.parse_args(["--tls"], available=[0, 1])
        items = self.bench.tls_items(args, args.split, {"ecdsa": ECDSA, "rsa": RSA, "aes256": tls.forced(ECDSA)})
        self.assertEqual([(t.label, variant) for t, _, variant in items], [
            ("hello-sanic +tls ECDSA P-256", "ecdsa"), ("nginx +tls ECDSA P-256", "ecdsa"),
            ("h2o 2.2.5 (static file) +tls ECDSA P-256", "ecdsa"), ("hello-sanic +tls RSA 2048", "rsa"),
            ("nginx +tls RSA 2048", "rsa"), ("h2o 2.2.5 (static file) +tls RSA 2048", "rsa"),
            ("hello-sanic +tls ECDSA P-256, TLS_AES_256_GCM_SHA384 only", "aes256"),
            ("nginx +tls ECDSA P-256, TLS_AES_256_GCM_SHA384 only", "aes256"),
            ("h2o 2.2.5 (static file) +tls ECDSA P-256, TLS_AES_256_GCM_SHA384 only", "aes256")])
        self.assertTrue(all(jobs == args.jobs and t.workers == 1 and t.cpus == "1" for t, jobs, _ in items[:6]))
        # The like-for-like variant: the full handshake alone, on every server.
        self.assertTrue(all(jobs == [("ab", "close", 20)] and t.tls.suites == "TLS_AES_256_GCM_SHA384"
                            for t, jobs, _ in items[6:]))
        self.assertEqual(tls.FORCED, "aes256")


# What tls_resume --json prints, in the keys of its specified CLI (no run
# of it is captured yet: it is being written beside this), after a line
# on stderr.
TLS_RESUME_JSON = """tls_resume: 1 thread, 5 s
{"connections": 12000, "resumed": 11999, "full": 1, "failed": 0,
 "connections_per_second": 2399.8, "handshake_p50_ms": 0.21, "total_p50_ms": 0.38, "total_p99_ms": 0.91}
"""


class TlsResumeParserTest(unittest.TestCase):
    def test_figures(self):
        r = parsers.PARSERS["tls_resume"](TLS_RESUME_JSON)
        self.assertEqual((r["requests"], r["failed"], r["non2xx"], r["rps"]), (12000, 0, 0, 2399.8))
        self.assertEqual((r["p50"], r["p90"], r["p99"]), (0.38, None, 0.91))
        self.assertEqual((r["resumed"], r["full"], r["handshake_p50"]), (11999, 1, 0.21))
        self.assertNotIn("error", r)

    def test_too_few_resumed_is_a_problem(self):
        r = parsers.parse_tls_resume(TLS_RESUME_JSON.replace('"resumed": 11999, "full": 1',
                                                             '"resumed": 11000, "full": 1000'))
        self.assertEqual(r["error"], "tls_resume: 11000 of 12000 handshakes resumed (92%), fewer than 95%: "
                                     "the server did not resume sessions")
        r = parsers.parse_tls_resume(TLS_RESUME_JSON.replace('"connections": 12000', '"connections": 0'))
        self.assertEqual(r["error"], "tls_resume made no connection")

    def test_no_json_says_why(self):
        with self.assertRaisesRegex(parsers.ParseError, "tls_resume did not finish: connect: Connection refused"):
            parsers.parse_tls_resume("{not json\nconnect: Connection refused\n")
        with self.assertRaises(parsers.ParseError):
            parsers.parse_tls_resume('{"connections": 3}')

    def test_wrk_and_ab_over_https(self):
        wrk = parsers.parse_wrk(capture("wrk-https.txt"))
        self.assertEqual((wrk["requests"], wrk["failed"], wrk["rps"]), (181656, 0, 58534.04))
        ab = parsers.parse_ab(capture("ab-https.txt"))
        self.assertEqual((ab["requests"], ab["failed"], ab["rps"], ab["p99"]), (2000, 0, 1330.33, 29.0))


def cell(name, kind, tool, mode, variant, cpu, runs=None, error=None):
    label = {"sanic": "hello-sanic", "nginx": "nginx", "h2o": "h2o 2.2.5 (static file)"}[name]
    return {"target": f"{label} +tls {tls.KEYS[variant][0]}", "name": name, "kind": kind, "workers": 1,
            "tool": tool, "mode": mode, "connections": 64, "variant": variant, "rps": 1000.0 if cpu else None,
            "cpu_us_per_request": cpu, "cpu_us_runs": runs or ([cpu] * 5 if cpu else []), "runs": 5,
            "clean_runs": 5 if cpu else 0, "error": error}


META = {"started": "x", "nproc": 2, "cpu_model": "m", "kernel": "k", "server_cpus": "1", "tool_cpus": "0",
        "repeat": 5, "load": "5 s", "connections": "64", "command": "scripts/bench --tls",
        "tls": {"personas": ["sanic"], "rounds": 5, "judged": "ecdsa",
                "keys": {"ecdsa": "ECDSA P-256", "rsa": "RSA 2048"},
                "idle_rss": [{"target": "hello-sanic +tls ECDSA P-256", "name": "sanic", "kind": "persona",
                              "connections": 10000, "bytes_per_connection": 9000.0},
                             {"target": "nginx +tls ECDSA P-256", "name": "nginx", "kind": "peer",
                              "connections": 10000, "bytes_per_connection": 15500.0},
                             {"target": "h2o 2.2.5 (static file) +tls ECDSA P-256", "name": "h2o", "kind": "peer",
                              "connections": 10000, "error": "TimeoutError: handshake timed out"}]}}
MISSING = "/b/tests/tls_resume is not built (scripts/test builds it)"


def made_up_cells():
    """keep-alive met against nginx and not against h2o, pipelining met,
    the full handshake met against both, tls_resume not built."""
    cpu = {("wrk", "keepalive"): (8.0, 10.0, 8.5), ("wrk", "pipeline"): (1.0, 8.0, 7.0),
           ("ab", "close"): (300.0, 400.0, 350.0)}
    out = []
    for variant, scale in (("ecdsa", 1.0), ("rsa", 2.0)):
        for (tool, mode), (mine, nginx, h2o) in cpu.items():
            runs = [mine * scale, mine * scale * 1.1, None, mine * scale, mine * scale]
            out += [cell("sanic", "persona", tool, mode, variant, mine * scale, runs),
                    cell("nginx", "peer", tool, mode, variant, nginx * scale),
                    cell("h2o", "peer", tool, mode, variant, h2o * scale)]
        out += [cell(n, k, "tls_resume", "resume", variant, None, error=MISSING)
                for n, k in (("sanic", "persona"), ("nginx", "peer"), ("h2o", "peer"))]
    return out


class TlsReportTest(unittest.TestCase):
    def rows(self, meta=META, cells=None):
        return report.tls_table(meta, made_up_cells() if cells is None else cells).splitlines()

    def row(self, start, rows=None):
        found = [r for r in rows or self.rows() if r.startswith(start)]
        self.assertEqual(len(found), 1, start)
        return found[0]

    def test_header(self):
        self.assertEqual(self.rows()[0], "| measure | target | ECDSA P-256: result | met? | RSA 2048 (information) |")

    def test_met_with_rounds_and_rsa_beside(self):
        self.assertEqual(self.row("| CPU/request, keep-alive (wrk -c64), hello-sanic vs nginx |"),
                         "| CPU/request, keep-alive (wrk -c64), hello-sanic vs nginx | ≤ 0.85 | "
                         "hello-sanic 8.00 µs, nginx 10.00 µs: 0.800; round by round 0.800, 0.880, 0.800, 0.800 "
                         "(median 0.800) | yes | 16.00 / 20.00 µs: 0.800 |")
        row = self.row("| CPU/request, 16-deep pipelining (wrk -c64), hello-sanic vs nginx | ≤ 0.15 | "
                       "hello-sanic 1.00 µs, nginx 8.00 µs: 0.125;")
        self.assertTrue(row.endswith("| yes | 2.00 / 16.00 µs: 0.125 |"), row)
        self.assertIn("hello-sanic 300.00 µs, h2o 350.00 µs: 0.857", self.row(
            "| CPU/request, a full handshake per request (ab -c20), hello-sanic vs h2o 2.2.5 (static file) | "
            "≤ 0.90 |"))

    def test_not_met(self):
        row = self.row("| CPU/request, keep-alive (wrk -c64), hello-sanic vs h2o 2.2.5 (static file) | ≤ 0.85 |")
        self.assertIn(": 0.941;", row)
        self.assertIn("| **no** |", row)

    def test_not_measured(self):
        row = self.row("| CPU/request, a resumed handshake per request (tls_resume), hello-sanic vs nginx |")
        self.assertEqual(row, "| CPU/request, a resumed handshake per request (tls_resume), hello-sanic vs nginx | "
                              f"≤ 0.80 | {MISSING} | not measured | not measured |")
        # A peer that did not start at all: no cell, "not measured", never "no".
        cells = [c for c in made_up_cells() if c["name"] != "h2o"]
        row = self.row("| CPU/request, keep-alive (wrk -c64), hello-sanic vs h2o", self.rows(cells=cells))
        self.assertTrue(row.endswith("| not measured | not measured | not measured |"), row)
        judged = [r for r in self.rows(cells=[]) if r.startswith("| CPU/request")]
        self.assertEqual(len(judged), 6)
        self.assertTrue(all(r.endswith("| not measured | not measured | not measured |") for r in judged), judged)

    def test_idle_memory(self):
        smaller = "| RSS per idle TLS connection, hello-sanic vs the smaller of nginx's and h2o's | < 1.00 |"
        self.assertEqual(self.row(smaller), smaller + " hello-sanic 9,000 bytes (10,000 connections); nginx 15,500 "
                         "bytes (10,000 connections); h2o: TimeoutError: handshake timed out | not measured | - |")
        self.assertEqual(self.row("| RSS per idle TLS connection, hello-sanic vs nginx |"),
                         "| RSS per idle TLS connection, hello-sanic vs nginx | none (informational) | hello-sanic "
                         "9,000 bytes, nginx 15,500 bytes (10,000 connections): 0.58 | - | - |")
        self.assertEqual(self.row("| RSS per idle TLS connection, hello-sanic vs h2o"),
                         "| RSS per idle TLS connection, hello-sanic vs h2o 2.2.5 (static file) | "
                         "none (informational) | hello-sanic 9,000 bytes (10,000 connections); "
                         "h2o: TimeoutError: handshake timed out | - | - |")
        ours, nginx, h2o = META["tls"]["idle_rss"]
        h2o = dict(h2o, error=None, bytes_per_connection=11400.0)
        for mine, verdict in ((11399.0, "1.00 | yes |"), (11400.0, "1.00 | **no** |"), (9000.0, "0.79 | yes |")):
            meta = dict(META, tls=dict(META["tls"], idle_rss=[dict(ours, bytes_per_connection=mine), nginx, h2o]))
            self.assertEqual(self.row(smaller, self.rows(meta)),
                             f"{smaller} hello-sanic {mine:,.0f} bytes, h2o 11,400 bytes (the smaller; nginx 15,500 "
                             f"bytes; 10,000 connections): {verdict} - |")
        meta = dict(META, tls=dict(META["tls"], idle_rss=[]))
        self.assertIn("| hello-sanic: not measured; nginx: not measured | - | - |",
                      self.row("| RSS per idle TLS connection, hello-sanic vs nginx |", self.rows(meta)))
        self.assertIn("| hello-sanic: not measured; nginx: not measured; h2o: not measured | not measured | - |",
                      self.row(smaller, self.rows(meta)))

    def test_cells_and_section(self):
        self.assertIn("| hello-sanic +tls RSA 2048 | RSA 2048 | 16-deep pipelining (wrk -c64) | 1,000 | 2.00 | "
                      "5/5 |  |", self.rows())
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, META, made_up_cells(), [])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("## TLS\n\nhello-sanic (started with `--tls --tls-cert CERT --tls-key KEY`), nginx and h2o 2.2.5",
                      text)
        self.assertIn("session tickets on, no shared session cache", text)
        self.assertEqual(report.tls_table({}, made_up_cells()), "")


class StandInServer:
    """A target for extras.idle_rss in this process: answers each
    connection's request, then keeps it open, or with `close` closes it."""
    tls = None
    http2 = False
    path = "/"
    label = name = "stand-in"
    kind = "peer"

    def __init__(self, close):
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.recv(4096)
                self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                if not close:
                    outer.release.wait(10)

        self.release = threading.Event()
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def start(self):
        self.proc = type("Proc", (), {"pid": os.getpid()})
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class IdleRssTest(unittest.TestCase):
    def test_every_connection_open_is_measured(self):
        result = extras.idle_rss(StandInServer(close=False), 20)
        self.assertNotIn("error", result)
        self.assertIn("bytes_per_connection", result)

    def test_a_server_that_closed_connections_is_no_measure(self):
        # A server whose idle timeout ran out while the connections were
        # opened would read as cheaper than it is.
        result = extras.idle_rss(StandInServer(close=True), 20)
        self.assertIn("connections were closed before the RSS was read", result.get("error", ""))

    def test_the_run_keeps_idle_connections_open(self):
        with open(os.path.join(SCRIPTS, "benchlib", "run_tls.py")) as f:
            self.assertIn('extra=["--keepalive-timeout", "75"]', f.read())


class OptionsTest(unittest.TestCase):
    def test_defaults(self):
        args = load_bench().parse_args(["--tls"], available=[0, 1])
        self.assertEqual((args.targets, args.repeat, args.workers_list, args.duration), (["sanic"], 5, [1], 5))
        args = load_bench().parse_args(["--tls", "tornado", "--repeat", "7"], available=[0, 1])
        self.assertEqual((args.targets, args.repeat), (["tornado"], 7))

    def test_refused(self):
        bench = load_bench()
        with tempfile.TemporaryDirectory() as before:
            for bad in (["--performance"], ["--shaping"], ["--compare", before], ["--scaling"],
                        ["--url", "https://127.0.0.1:1/"], ["--quick"], ["--requests", "100"], ["--tool", "ab"],
                        ["--mode", "close"], ["--workers", "2"], ["--connections", "8"], ["--peers"],
                        ["--access-log-pair"]):
                err = io.StringIO()
                with self.assertRaises(SystemExit, msg=bad), contextlib.redirect_stderr(err):
                    bench.parse_args(["--tls"] + bad, available=[0, 1])
                self.assertIn("--tls", err.getvalue(), bad)

    def test_tls_resume_is_no_tool_of_a_matrix(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            load_bench().parse_args(["sanic", "--tool", "tls_resume"], available=[0, 1])
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            load_bench().parse_args(["sanic", "--mode", "resume"], available=[0, 1])


if __name__ == "__main__":
    ctest_unittest.main()
