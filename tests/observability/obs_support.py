"""What the observability tests share: a free loopback port, a GET, bounded
waits, stopping what they started, and a real Prometheus (Debian's) that
scrapes loopback targets every second. Imported by the tests beside it."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from test_time import time_scale  # noqa: E402,F401  (re-exported to the tests)

def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()

def wait_until(check, seconds, step=0.1):
    """What check() returns once it is true, or None after `seconds` (a
    Release build's, scaled by time_scale()); a check that raises (a refused
    connection, a missing key, a WebDriver error) counts as not yet."""
    end = time.monotonic() + seconds * time_scale()
    while time.monotonic() < end:
        try:
            value = check()
            if value:
                return value
        except (OSError, ValueError, KeyError, IndexError, RuntimeError):
            pass
        time.sleep(step)
    return None

def wait_for_port(port, seconds):
    """True once 127.0.0.1:port accepts a connection, None after `seconds`."""
    def accepts():
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    return wait_until(accepts, seconds, 0.05)

def wait_for(url, seconds):
    """True once url answers a GET (any 2xx), None after `seconds`."""
    return wait_until(lambda: get(url, timeout=1) is not None, seconds)

def stop(*procs):
    """SIGTERM to each process still running, then SIGKILL after 10 s."""
    for p in procs:
        if p is None or p.poll() is not None:
            continue
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

class Prometheus:
    """Debian's prometheus on a free loopback port, its data in tmp, job
    "hello" scraping `targets` ("127.0.0.1:PORT") every second. `check`, if
    given, is called with the configuration's path before the start (for
    promtool check config)."""

    def __init__(self, tmp, targets, rule_files=(), check=None):
        self.port = free_port()
        self.targets = len(targets)
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                    "  evaluation_interval: 1s\n")
            if rule_files:
                f.write(f"rule_files: {json.dumps(list(rule_files))}\n")
            f.write("scrape_configs:\n  - job_name: hello\n    static_configs:\n"
                    f"      - targets: {json.dumps(list(targets))}\n")
        if check:
            check(config)
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def api(self, path, timeout=5, **params):
        """The "data" of GET /api/v1/PATH?PARAMS; a refused query fails the test."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        try:
            body = json.loads(get(url, timeout=timeout))
        except urllib.error.HTTPError as e:
            fail(f"prometheus {path} {params}: {e.read().decode()}")
        if body.get("status") != "success":
            fail(f"prometheus {path} {params}: {body}")
        return body["data"]

    def value(self, expr):
        """The first sample of an instant query, or None."""
        result = self.api("query", query=expr)["result"]
        return float(result[0]["value"][1]) if result else None

    def wait_scraped(self, times=1, seconds=30):
        """Ready, then every target scraped successfully `times` times, or fail.
        Waiting for the scrapes rather than for a time: Prometheus hands new
        targets to its scrapers up to 5 s after it is ready, so a load
        started after a fixed sleep may begin before the first scrape, and
        increase() and rate() would miss its start."""
        if not wait_for(f"http://127.0.0.1:{self.port}/-/ready", seconds):
            fail(f"prometheus did not become ready in {seconds} s")
        expr = 'sum_over_time(up{job="hello"}[5m])'
        if not wait_until(lambda: len(self.api("query", query=expr)["result"]) == self.targets
                          and self.value(f"min({expr})") >= times, seconds, 0.2):
            errors = [t.get("lastError") for t in self.api("targets")["activeTargets"]]
            fail(f"prometheus did not scrape every target {times} times in {seconds} s: {errors}")

    def stop(self):
        stop(self.proc)
