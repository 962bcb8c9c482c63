"""Unit tests of scripts/benchlib/parsers.py on real captured tool output."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from benchlib import parsers  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
