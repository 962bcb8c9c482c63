"""Unit tests of what scripts/bench installs and builds for a run
(scripts/benchlib/needs.py, scripts/benchlib/packages.txt): --quick only
the personas, wrk and matplotlib, never a JDK, Go, Node, Tomcat, nginx, h2o
or the Python frameworks; each other kind its own tools and peers; and the
packages scripts/setup selects for it (scripts/setup --list)."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)

from benchlib import needs, targets  # noqa: E402
from test_parsers import load_bench  # noqa: E402

BENCH = load_bench()
FOUR_CPUS = [0, 1, 2, 3]
# What --quick must never install (the issue: a JDK, Go, Node, Tomcat,
# nginx, h2o, the Python frameworks), nor the tests' libraries.
HEAVY = {"default-jdk-headless", "golang-go", "nodejs", "tomcat10-common", "nginx-light", "h2o", "python3-flask",
         "gunicorn", "python3-tornado", "python3-aiohttp", "python3-starlette", "uvicorn", "libgtest-dev",
         "libbenchmark-dev", "nghttp2-server", "python3-locust"}
PERSONA_TARGETS = [f"hello-{name}" for name in targets.PERSONAS]


def needs_of(argv):
    return needs.run_needs(BENCH.parse_args(argv, FOUR_CPUS))


def setup_packages(argv):
    """The packages scripts/setup selects for its arguments (--list)."""
    done = subprocess.run(argv + ["--list"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(f"{argv} --list: exit {done.returncode}: {done.stderr}")
    return set(done.stdout.split())


class QuickTest(unittest.TestCase):
    def test_quick_uses_wrk_and_the_charts_only(self):
        self.assertEqual(needs_of(["--quick"]), (["charts", "wrk"], PERSONA_TARGETS))

    def test_quick_installs_nothing_heavy(self):
        what, build = needs_of(["--quick"])
        packages = setup_packages(needs.setup_command(ROOT, what, build))
        self.assertEqual(packages & HEAVY, set())
        self.assertLessEqual({"wrk", "python3-matplotlib", "g++", "cmake", "libuv1-dev"}, packages)
        # Debian's node-llhttp depends on Node.js: scripts/setup unpacks its
        # .deb instead of installing it (a fresh machine showed nodejs
        # installed by a first scripts/serve when it was in the list).
        self.assertNotIn("node-llhttp", packages)

    def test_the_entry_installs_python_and_nothing_heavy(self):
        # scripts/bench's own call of scripts/setup on a machine without
        # Python (a fresh machine showed it installing the test
        # dependencies too when it lacked --serve).
        with open(os.path.join(ROOT, "scripts", "bench")) as f:
            line = next(line for line in f if '"$here/setup"' in line)
        argv = [w.replace('"$here/setup"', os.path.join(ROOT, "scripts", "setup")) for w in line.split()]
        packages = setup_packages(argv)
        self.assertIn("python3", packages)
        self.assertEqual(packages & HEAVY, set())

    def test_setup_command(self):
        argv = needs.setup_command("/r", ["charts", "wrk"], ["hello-sanic", "hello-floor"])
        self.assertEqual(argv, ["/r/scripts/setup", "--bench=charts,wrk", "--serve",
                                "--target", "hello-sanic", "--target", "hello-floor"])
        self.assertEqual(needs.setup_command("/r", ["wrk"], None), ["/r/scripts/setup", "--bench=wrk"])


class KindsTest(unittest.TestCase):
    def test_matrix_tools_and_peers(self):
        what, build = needs_of(["sanic", "--tool", "ab,locust", "--peers=flask,go"])
        self.assertEqual(what, ["charts", "ab", "locust", "flask", "go"])
        self.assertEqual(build, PERSONA_TARGETS)
        what, _ = needs_of(["--peers"])
        self.assertLessEqual({"flask", "gunicorn", "tornado", "aiohttp", "starlette", "tomcat", "nginx", "h2o",
                              "go", "node"}, set(what))

    def test_each_kind(self):
        self.assertEqual(needs_of(["--performance"]),
                         (["charts", "wrk", "ab", "h2load", "nginx", "h2o", "go", "node"], None))
        self.assertEqual(needs_of(["--tls"]), (["charts", "wrk", "ab", "nginx", "h2o", "openssl"], None))
        self.assertEqual(needs_of(["--h2", "--quick"])[0],
                         ["charts", "h2load", "tomcat", "nginx", "h2o", "go", "nghttpd", "openssl", "python-h2"])
        self.assertEqual(needs_of(["--scaling"]), (["charts", "wrk", "nginx", "h2o"], PERSONA_TARGETS))
        self.assertEqual(needs_of(["--shaping"])[0], ["charts", "wrk"])
        self.assertEqual(needs_of(["--live-page"])[0], ["charts", "wrk"])
        self.assertEqual(needs_of(["--compare", HERE])[0], ["charts", "wrk", "ab", "h2load"])

    def test_every_need_is_a_line_of_the_table(self):
        table = needs.packages_table()
        used = {w for kind in needs.KIND_PEERS.values() for w in kind}
        used |= {w for kind in needs.KIND_EXTRAS.values() for w in kind}
        used |= {p.name for p in targets.peers()} | {"charts", "wrk", "ab", "h2load", "locust"}
        self.assertEqual(used - set(table), set())

    def test_setup_bench_installs_every_line(self):
        every = {p for packages in needs.packages_table().values() for p in packages}
        self.assertLessEqual(every, setup_packages([os.path.join(ROOT, "scripts", "setup"), "--bench"]))
        self.assertEqual(setup_packages([os.path.join(ROOT, "scripts", "setup"), "--serve", "--bench=tomcat"])
                         & HEAVY, {"tomcat10-common", "default-jdk-headless"})


if __name__ == "__main__":
    unittest.main()
