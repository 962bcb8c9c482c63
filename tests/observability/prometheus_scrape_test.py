#!/usr/bin/python3
"""A real Prometheus server (Debian's prometheus) scrapes a persona's admin
port every second while wrk loads it; afterwards Prometheus's HTTP API
must agree with wrk and with the server (docs/observability.md):

- sum(hello_http_requests_total) equals the requests wrk reported, plus
  the ones in flight when it stopped (at most one per connection), and
- histogram_quantile(0.99, ...) over the run is within the histogram's
  error of the server's own p99 from /stats.

  tests/observability/prometheus_scrape_test.py BUILD_DIR

Everything listens on 127.0.0.1 and every wait is bounded.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from obs_support import free_port, get, wait_for

WRK_SECONDS = 10


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    result = json.loads(get(url))["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    for tool in ("prometheus", "wrk"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (scripts/setup installs it)")
    port, admin, prom = free_port(), free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="hello-prom-")
    server = subprocess.Popen(
        [os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(port), "-w", "2",
         "--admin", f"127.0.0.1:{admin}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                "scrape_configs:\n  - job_name: hello\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{admin}']\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/data",
         f"--web.listen-address=127.0.0.1:{prom}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for(f"http://127.0.0.1:{admin}/healthz", 10):
            fail("the admin port did not answer")
        if not wait_for(f"http://127.0.0.1:{prom}/-/ready", 30):
            fail("prometheus did not become ready")
        # A first scrape before the load, so that increase() starts at zero
        # and sees the whole run. Prometheus hands new targets to its
        # scrapers up to 5 s after it is ready, so wait for the scrape
        # itself rather than for a time.
        deadline = time.monotonic() + 20
        while query(prom, 'up{job="hello"}') != 1.0:
            if time.monotonic() > deadline:
                fail("prometheus did not scrape the admin port in 20 s")
            time.sleep(0.2)
        out = subprocess.run(
            ["wrk", "-t1", "-c64", f"-d{WRK_SECONDS}s", f"http://127.0.0.1:{port}/"],
            capture_output=True, text=True, timeout=WRK_SECONDS + 30).stdout
        m = re.search(r"(\d+) requests in", out)
        if not m:
            fail(f"no request count from wrk:\n{out}")
        sent = int(m.group(1))
        # Two more scrapes after the load.
        time.sleep(2.5)
        total = query(prom, "sum(hello_http_requests_total)")
        print(f"wrk: {sent} requests; Prometheus: sum(hello_http_requests_total) = {total}")
        # wrk counts the answers it read; the requests in flight when it
        # stopped (one at most per connection) were answered and counted by
        # the server but not by wrk.
        if total is None or not sent <= total <= sent + 64:
            fail(f"Prometheus counts {total} requests, wrk read {sent} answers (+ up to 64 in flight)")
        window = f"{WRK_SECONDS + 8}s"
        p99 = query(prom, "histogram_quantile(0.99, sum by (le) "
                          f"(increase(hello_http_request_duration_seconds_bucket[{window}])))")
        stats = json.loads(get(f"http://127.0.0.1:{admin}/stats"))
        own = stats["total"]["service_time_us"]["p99"] / 1e6
        print(f"p99: Prometheus {p99 * 1e6:.1f} us (from buckets), the server's own {own * 1e6:.1f} us")
        # histogram_quantile interpolates inside the bucket where the 99th
        # percentile's rank falls, so its answer can lie anywhere in that
        # bucket: the server's own p99 (1% error) must lie in the same one,
        # widened by that error. (Not the other way round: with a sparse
        # tail, a p99 just over a bound puts Prometheus's anywhere in the
        # next bucket.)
        bounds = [b * 1e-6 for b in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000,
                                     50000, 100000, 200000, 500000, 1e6, 2e6, 5e6, 1e7)]
        if p99 is None:
            fail("Prometheus has no p99")
        upper = next((b for b in bounds if b >= p99), float("inf"))
        lower = max([b for b in bounds if b < upper] + [0])
        if not lower * 0.99 <= own <= upper * 1.01:
            fail(f"the server's p99 {own} outside Prometheus's p99 bucket ({lower}, {upper}]")
        print("PASS")
    finally:
        for p in (prometheus, server):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
