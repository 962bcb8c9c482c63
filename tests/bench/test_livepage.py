"""Unit tests of scripts/bench --live-page (scripts/benchlib/livepage.py):
its options, the alternating order of its rounds, its report table
(benchlib.report) on made-up cells, and the poller that stands in for Chromium, against a stub
admin port on 127.0.0.1."""
import http.server
import os
import sys
import threading
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))

from benchlib import livepage, report  # noqa: E402
from test_time import time_scale  # noqa: E402
from test_parsers import load_bench  # noqa: E402

class OptionsTest(unittest.TestCase):
    def test_defaults(self):
        args = load_bench().parse_args(["--live-page"], available=[0, 1])
        self.assertEqual(args.targets, ["sanic"])
        self.assertEqual(args.jobs, [("wrk", "keepalive", 64), ("wrk", "pipeline", 64)])
        self.assertEqual((args.workers_list, args.repeat), ([1], 5))
        args = load_bench().parse_args(["--live-page", "tornado", "--workers", "2,4", "--repeat", "7",
                                        "--mode", "keepalive"], available=[0, 1])
        self.assertEqual((args.targets, args.workers_list, args.repeat), (["tornado"], [2], 7))
        self.assertEqual(args.jobs, [("wrk", "keepalive", 64)])

    def test_a_run_of_its_own(self):
        for extra in (["--shaping"], ["--quick"], ["sanic", "tornado"], ["--requests", "1000"]):
            with self.assertRaises(SystemExit, msg=extra), mock.patch("sys.stderr"):
                load_bench().parse_args(["--live-page"] + extra, available=[0, 1])

class RoundsTest(unittest.TestCase):
    def test_alternate(self):
        self.assertEqual(livepage.rounds(3), [("page-off", "page-on"), ("page-on", "page-off"),
                                              ("page-off", "page-on")])

def cell(variant, mode, cpu, runs, rps=100000.0):
    return {"variant": variant, "mode": mode, "cpu_us_per_request": cpu, "cpu_us_runs": runs, "rps": rps}

class TableTest(unittest.TestCase):
    meta = {"live_page": {"persona": "sanic", "workers": 1, "rounds": 2, "page": "chromium",
                          "modes": ["keepalive", "pipeline"], "connections": 64}}

    def test_ratio_against_the_target(self):
        cells = [cell("page-off", "keepalive", 5.00, [5.0, 5.0]), cell("page-on", "keepalive", 5.05, [5.05, 5.1]),
                 cell("page-off", "pipeline", 1.00, [1.0, 1.0]), cell("page-on", "pipeline", 1.03, [1.03, 1.03])]
        rows = report.live_page_table(self.meta, cells).splitlines()
        self.assertIn("off 5.00 µs, on 5.05 µs: 1.010; round by round 1.010, 1.020 (median 1.015)", rows[2])
        self.assertTrue(rows[2].endswith("| yes |"), rows[2])
        self.assertTrue(rows[3].endswith("| **no** |"), rows[3])
        self.assertEqual(report.live_page_table({}, cells), "")

    def test_not_measured(self):
        rows = report.live_page_table(self.meta, [dict(cell("page-off", "keepalive", None, []), error="wrk failed")])
        self.assertIn("| wrk failed | not measured |", rows.splitlines()[2])

class PollerTest(unittest.TestCase):
    def test_asks_what_the_page_asks_once_a_second_until_stopped(self):
        seen = []
        third = threading.Event()

        class Stub(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append((self.path, time.monotonic()))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                if len(seen) >= 3:
                    third.set()

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            page = livepage.Page(server.server_address[1], "0")
            page.kind = "poller"
            with mock.patch.object(livepage, "SETTLE_SECONDS", 0):
                page.start()
            # Three polls take two seconds; the bound is only for a poller that stopped.
            self.assertTrue(third.wait(10 * time_scale()), seen)
            poller = page.thread
            page.stop()
        finally:
            server.shutdown()
            server.server_close()
        paths = [path for path, _ in seen]
        self.assertEqual(paths[0], "/")
        self.assertEqual(set(paths[1:]), {"/stats"})
        # Once a second (a poll's own time moves the next by a little).
        gaps = [b - a for (_, a), (_, b) in zip(seen, seen[1:])]
        self.assertGreaterEqual(min(gaps), 0.9, gaps)
        self.assertFalse(poller.is_alive(), "the poller outlived stop()")

if __name__ == "__main__":
    unittest.main()
