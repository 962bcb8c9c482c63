"""Unit tests of what scripts/bench --tls says each server negotiated: the
probe's argv and its reading of tls_resume --json, the probe of started
servers (nginx, h2o and hello-sanic made to negotiate one suite by their own
configuration; skipped where a server or tls_resume is missing), and the
report's rows: what each server negotiated, the full handshake with every
server on TLS_AES_256_GCM_SHA384 against the cheaper of nginx and h2o."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)

from benchlib import parsers, report, targets, tls, tls_probe, tools  # noqa: E402
import ctest_unittest  # noqa: E402
from test_tls import ECDSA, META, made_up_cells  # noqa: E402

AES256 = "TLSv1.3 TLS_AES_256_GCM_SHA384 x25519"
# tls_resume --json --count 5 against `openssl s_server -www` (OpenSSL 3.0.19).
S_SERVER = ('{"connections": 5, "resumed": 4, "full": 1, "failed": 0, "failures": {}, "ok_200": 5, '
            '"no_close_notify": 0, "seconds": 0.005, "connections_per_second": 1058.3, "handshake_p50_ms": 0.494, '
            '"handshake_p99_ms": 1.203, "total_p50_ms": 0.735, "total_p99_ms": 1.651, "tls_versions": '
            f'{{"TLSv1.3": 5}}, "negotiated": {{"full": {{"{AES256}": 1}}, "resumed": {{"{AES256}": 4}}}}, '
            '"tickets": {"full": {"2": 1}, "resumed": {"1": 4}}}\n')
# ctest names the built ones (tests/CMakeLists.txt); run by hand, build/'s.
TLS_RESUME = os.environ.get("TLS_RESUME") or os.path.join(targets.ROOT, "build", "tests", "tls_resume")
SANIC = os.environ.get("HELLO_SANIC") or os.path.join(targets.ROOT, "build", "hello-sanic")


class ProbeReadingTest(unittest.TestCase):
    def test_what_s_server_negotiates(self):
        r = parsers.parse_tls_probe(S_SERVER)
        self.assertEqual(r, {"full": {"protocol": "TLSv1.3", "suite": "TLS_AES_256_GCM_SHA384", "group": "x25519",
                                      "tickets": 2, "handshakes": 1, "also": []},
                             "resumed": {"protocol": "TLSv1.3", "suite": "TLS_AES_256_GCM_SHA384",
                                         "group": "x25519", "tickets": 1, "handshakes": 4, "also": []},
                             "error": None})

    def test_mixed_failed_and_none_resumed(self):
        text = S_SERVER.replace(f'"resumed": {{"{AES256}": 4}}', '"resumed": {}').replace(
            '"resumed": {"1": 4}', '"resumed": {}').replace(
            f'"full": {{"{AES256}": 1}}', f'"full": {{"{AES256}": 2, "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384 '
                                          'x25519": 1}').replace('"full": {"2": 1}', '"full": {"2": 2, "0": 1}')
        text = text.replace('"failed": 0, "failures": {}', '"failed": 2, "failures": {"read: timed out": 2}')
        r = parsers.parse_tls_probe(text)
        self.assertEqual((r["full"]["suite"], r["full"]["tickets"], r["full"]["handshakes"], r["resumed"]),
                         ("TLS_AES_256_GCM_SHA384", 2, 3, None))
        self.assertEqual(r["full"]["also"], ["TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384 x25519", "0 tickets"])
        self.assertEqual(r["error"], "2 of 5 connections failed: 2 x read: timed out")

    def test_no_json(self):
        r = parsers.parse_tls_probe("tls_resume: --ciphersuites 'X': OpenSSL refuses it (no cipher match)\n")
        self.assertEqual(r, {"full": None, "resumed": None, "error": "tls_resume did not finish: tls_resume: "
                                                                     "--ciphersuites 'X': OpenSSL refuses it "
                                                                     "(no cipher match)"})
        # tls_resume's JSON from before it said what was negotiated is not a probe's.
        self.assertIsNone(parsers.parse_tls_probe('{"connections": 5, "failed": 0, "failures": {}}')["full"])


class ProbeTest(unittest.TestCase):
    def setUp(self):
        self.saved = dict(tools.BINARIES)

    def tearDown(self):
        tools.BINARIES.clear()
        tools.BINARIES.update(self.saved)

    def test_commands(self):
        tools.use_build_dir("/b")
        nginx = targets.Nginx("nginx", tls=ECDSA)
        nginx.port = 8443
        self.assertEqual(tls_probe.probe_command(nginx), [
            "/b/tests/tls_resume", "--port", "8443", "--host", "127.0.0.1", "--path", "/", "--count", "5", "--json"])
        # A forced suite is offered last: a server negotiates it only if made to.
        sanic = targets.Persona("sanic", "/b", tls=tls.forced(ECDSA))
        sanic.port = 8444
        self.assertEqual(tls_probe.probe_command(sanic)[-2:], [
            "--ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"])
        self.assertEqual(tls_probe.offered_suites("TLS_AES_128_GCM_SHA256"),
                         "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256")
        self.assertIsNone(tls_probe.offered_suites(""))

    def test_a_probe_that_cannot_run_says_why(self):
        tools.use_build_dir("/nonexistent")
        nginx = targets.Nginx("nginx", tls=ECDSA)
        nginx.port = 1
        r = tls_probe.probe(nginx, "ecdsa")
        self.assertEqual(r, {"target": "nginx +tls ECDSA P-256", "name": "nginx", "kind": "peer", "variant": "ecdsa",
                             "full": None, "resumed": None,
                             "error": "/nonexistent/tests/tls_resume is not built (scripts/test builds it)"})
        self.assertEqual(tls_probe.probe_text(r), r["error"])
        # A binary that prints no JSON: its last words.
        r = tls_probe.probe(nginx, "ecdsa", binary="/bin/false")
        self.assertEqual(r["error"], "tls_resume did not finish: no output")

    def test_items_not_started(self):
        from benchlib import run_tls
        nginx, h2o = targets.Nginx("nginx", tls=ECDSA), targets.H2o("h2o", tls=ECDSA)
        tools.use_build_dir("/nonexistent")
        records = run_tls.probe_items([(nginx, [], "ecdsa"), (h2o, [], "ecdsa")], [(nginx, [], "ecdsa")])
        self.assertEqual([(r["name"], r["error"]) for r in records], [
            ("nginx", "/nonexistent/tests/tls_resume is not built (scripts/test builds it)"),
            ("h2o", "did not start")])

    @unittest.skipUnless(os.access(TLS_RESUME, os.X_OK) and shutil.which("openssl"),
                         "build/tests/tls_resume is not built or openssl is not installed")
    def test_servers_negotiate_what_they_are_made_to(self):
        # A suite none of them picks by default (OpenSSL's client offers
        # AES-256-GCM first), so that it is seen to be each one's configuration.
        tools.BINARIES["tls_resume"] = TLS_RESUME
        with tempfile.TemporaryDirectory() as d:
            cert = tls.make_certificates(d, kinds=("ecdsa",))["ecdsa"]
            made = [(targets.Nginx, "/usr/sbin/nginx"), (targets.H2o, targets.H2o.binary)]
            servers = [cls(cls.__name__.lower(), cpus="0-1", tls=served) for cls, binary in made
                       if os.access(binary, os.X_OK)
                       for served in (cert, tls.forced(cert, "TLS_CHACHA20_POLY1305_SHA256"))]
            if os.access(SANIC, os.X_OK):
                servers.append(targets.Persona("sanic", os.path.dirname(SANIC), cpus="0-1", admin=False,
                                               tls=tls.forced(cert, "TLS_CHACHA20_POLY1305_SHA256")))
            if not servers:
                self.skipTest("neither nginx nor h2o is installed")
            for server in servers:
                server.start()
                try:
                    r = tls_probe.probe(server, "x")
                finally:
                    server.stop()
                want = server.tls.suites or "TLS_AES_256_GCM_SHA384"
                self.assertEqual((r["error"], r["full"]["protocol"], r["full"]["suite"]), (None, "TLSv1.3", want),
                                 server.label)
                self.assertEqual(r["resumed"]["handshakes"], 4, server.label)
                self.assertGreaterEqual(r["full"]["tickets"], 1, server.label)


def forced_cell(name, kind, cpu, runs=None):
    label = {"sanic": "hello-sanic", "nginx": "nginx", "h2o": "h2o 2.2.5 (static file)"}[name]
    return {"target": f"{label} +tls ECDSA P-256, TLS_AES_256_GCM_SHA384 only", "name": name, "kind": kind,
            "workers": 1, "tool": "ab", "mode": "close", "connections": 20, "variant": "aes256",
            "rps": 1000.0 if cpu else None, "cpu_us_per_request": cpu, "cpu_us_runs": runs or [cpu] * 5,
            "runs": 5, "clean_runs": 5 if cpu else 0, "error": None if cpu else "did not start"}


def probed(name, kind, variant, suite="TLS_AES_256_GCM_SHA384", tickets=(2, 1), error=None):
    full = {"protocol": "TLSv1.3", "suite": suite, "group": "x25519", "tickets": tickets[0], "handshakes": 1,
            "also": []}
    resumed = dict(full, tickets=tickets[1], handshakes=4) if tickets[1] is not None else None
    return {"target": "-", "name": name, "kind": kind, "variant": variant, "full": full, "resumed": resumed,
            "error": error}


FORCED_META = dict(META, tls=dict(
    META["tls"], keys=dict(META["tls"]["keys"], aes256="ECDSA P-256, TLS_AES_256_GCM_SHA384 only"),
    forced={"variant": "aes256", "suite": "TLS_AES_256_GCM_SHA384"},
    negotiated=[probed("sanic", "persona", "ecdsa", "TLS_AES_128_GCM_SHA256", (1, 1)),
                probed("nginx", "peer", "ecdsa"), probed("h2o", "peer", "ecdsa", tickets=(2, None)),
                probed("sanic", "persona", "aes256", tickets=(1, 1)), probed("nginx", "peer", "aes256"),
                probed("h2o", "peer", "aes256", tickets=(2, 0))]))
FORCED_ROW = ("| CPU/request, a full handshake per request (ab -c20), every server on TLS_AES_256_GCM_SHA384, "
              "hello-sanic vs the cheaper of nginx and h2o | ≤ 0.95 |")


class ForcedReportTest(unittest.TestCase):
    def text(self, meta=FORCED_META, cells=None):
        cells = made_up_cells() + [forced_cell("sanic", "persona", 330.0), forced_cell("nginx", "peer", 400.0),
                                   forced_cell("h2o", "peer", 340.0)] if cells is None else cells
        return report.tls_table(meta, cells)

    def row(self, start, text=None):
        found = [r for r in (text or self.text()).splitlines() if r.startswith(start)]
        self.assertEqual(len(found), 1, start)
        return found[0]

    def test_forced_target_against_the_cheaper(self):
        self.assertEqual(self.row(FORCED_ROW), FORCED_ROW + " hello-sanic 330.00 µs, h2o 340.00 µs: 0.971; round "
                         "by round 0.971, 0.971, 0.971, 0.971, 0.971 (median 0.971); h2o is the cheaper (nginx "
                         "400.00 µs) | **no** | - |")
        cells = made_up_cells() + [forced_cell("sanic", "persona", 300.0), forced_cell("nginx", "peer", 400.0),
                                   forced_cell("h2o", "peer", 340.0)]
        self.assertIn(": 0.882;", self.row(FORCED_ROW, self.text(cells=cells)))
        self.assertTrue(self.row(FORCED_ROW, self.text(cells=cells)).endswith("| yes | - |"))
        self.assertEqual(self.row("| hello-sanic | 300.00 |", self.text(cells=cells)),
                         "| hello-sanic | 300.00 | 400.00 (0.750) | 340.00 (0.882) | h2o (0.882) | ≤ 0.95 | yes |")

    def test_not_like_for_like(self):
        negotiated = FORCED_META["tls"]["negotiated"][:5] + [
            probed("h2o", "peer", "aes256", "TLS_AES_128_GCM_SHA256")]
        meta = dict(FORCED_META, tls=dict(FORCED_META["tls"], negotiated=negotiated))
        row = self.row(FORCED_ROW, self.text(meta))
        self.assertTrue(row.endswith("; not like for like: h2o 2.2.5 (static file) negotiated "
                                     "TLS_AES_128_GCM_SHA256 | not like for like | - |"), row)
        self.assertIn("| not TLS_AES_256_GCM_SHA384: not like for like |", self.text(meta))

    def test_not_measured(self):
        cells = made_up_cells() + [forced_cell("sanic", "persona", 330.0), forced_cell("nginx", "peer", None)]
        self.assertEqual(self.row(FORCED_ROW, self.text(cells=cells)),
                         FORCED_ROW + " did not start | not measured | - |")
        self.assertEqual(self.row("| hello-sanic | 330.00 |", self.text(cells=cells)),
                         "| hello-sanic | 330.00 | - | - | - | ≤ 0.95 | not measured |")

    def test_what_each_server_negotiated(self):
        text = self.text()
        self.assertIn("| server | variant | protocol | cipher suite | group | tickets after a full handshake | "
                      "resumed handshakes | tickets after a resumed one | problems |", text)
        self.assertEqual(self.row("| hello-sanic | ECDSA P-256 |", text),
                         "| hello-sanic | ECDSA P-256 | TLSv1.3 | TLS_AES_128_GCM_SHA256 | x25519 | 1 | 4 | 1 |  |")
        self.assertEqual(self.row("| h2o 2.2.5 (static file) | ECDSA P-256 |", text),
                         "| h2o 2.2.5 (static file) | ECDSA P-256 | TLSv1.3 | TLS_AES_256_GCM_SHA384 | x25519 | "
                         "2 | 0 | - |  |")
        self.assertEqual(self.row("| h2o 2.2.5 (static file) | ECDSA P-256, TLS_AES_256_GCM_SHA384 only |", text),
                         "| h2o 2.2.5 (static file) | ECDSA P-256, TLS_AES_256_GCM_SHA384 only | TLSv1.3 | "
                         "TLS_AES_256_GCM_SHA384 | x25519 | 2 | 4 | 0 |  |")
        failed = dict(probed("nginx", "peer", "rsa"), full=None, resumed=None, error="did not start")
        meta = dict(FORCED_META, tls=dict(FORCED_META["tls"], negotiated=[failed]))
        self.assertEqual(self.row("| nginx | RSA 2048 |", self.text(meta)),
                         "| nginx | RSA 2048 | - | - | - | - | 0 | - | did not start |")

    def test_section_and_an_older_run(self):
        with tempfile.TemporaryDirectory() as out:
            report.write_markdown(out, FORCED_META, made_up_cells(), [])
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("once per certificate (ECDSA P-256 and RSA 2048, self-signed", text)
        self.assertIn("Like for like: every one started a third time (ECDSA P-256, TLS_AES_256_GCM_SHA384 only), "
                      "each made to negotiate TLS_AES_256_GCM_SHA384 alone", text)
        self.assertIn("**What each server negotiated**", text)
        self.assertIn("**Full handshake per request (ab -c20), every server on TLS_AES_256_GCM_SHA384**", text)
        # A run from before the probe and the forced variant: neither table, nor the row.
        old = report.tls_table(META, made_up_cells())
        self.assertNotIn("What each server negotiated", old)
        self.assertNotIn("every server on", old)


if __name__ == "__main__":
    ctest_unittest.main()
