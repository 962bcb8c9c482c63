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
import sys
import shutil
import subprocess
import tempfile
import time

from obs_support import Prometheus, fail, free_port, get, stop, wait_for

WRK_SECONDS = 10
# The le bounds of hello_http_request_duration_seconds, in seconds.
BOUNDS = [b * 1e-6 for b in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000,
                             100000, 200000, 500000, 1e6, 2e6, 5e6, 1e7)]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    for tool in ("prometheus", "wrk"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (scripts/setup installs it)")
    port, admin = free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="hello-prom-")
    server = subprocess.Popen(
        [os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(port), "-w", "2",
         "--admin", f"127.0.0.1:{admin}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prometheus = Prometheus(tmp, [f"127.0.0.1:{admin}"])
    try:
        if not wait_for(f"http://127.0.0.1:{admin}/healthz", 10):
            fail("the admin port did not answer")
        # A scrape before the load, so that increase() starts at zero and
        # sees the whole run.
        prometheus.wait_scraped()
        out = subprocess.run(
            ["wrk", "-t1", "-c64", f"-d{WRK_SECONDS}s", f"http://127.0.0.1:{port}/"],
            capture_output=True, text=True, timeout=WRK_SECONDS + 30).stdout
        m = re.search(r"(\d+) requests in", out)
        if not m:
            fail(f"no request count from wrk:\n{out}")
        sent = int(m.group(1))
        # Two more scrapes after the load.
        time.sleep(2.5)
        total = prometheus.value("sum(hello_http_requests_total)")
        print(f"wrk: {sent} requests; Prometheus: sum(hello_http_requests_total) = {total}")
        # wrk counts the answers it read; the requests in flight when it
        # stopped (one at most per connection) were answered and counted by
        # the server but not by wrk.
        if total is None or not sent <= total <= sent + 64:
            fail(f"Prometheus counts {total} requests, wrk read {sent} answers (+ up to 64 in flight)")
        window = f"{WRK_SECONDS + 8}s"
        p99 = prometheus.value("histogram_quantile(0.99, sum by (le) "
                               f"(increase(hello_http_request_duration_seconds_bucket[{window}])))")
        if p99 is None:
            fail("Prometheus has no p99")
        stats = json.loads(get(f"http://127.0.0.1:{admin}/stats"))
        own = stats["total"]["service_time_us"]["p99"] / 1e6
        print(f"p99: Prometheus {p99 * 1e6:.1f} us (from buckets), the server's own {own * 1e6:.1f} us")
        # histogram_quantile interpolates inside the bucket where the 99th
        # percentile's rank falls, so its answer can lie anywhere in that
        # bucket: the server's own p99 (1% error) must lie in the same one,
        # widened by that error. (Not the other way round: with a sparse
        # tail, a p99 just over a bound puts Prometheus's anywhere in the
        # next bucket.)
        upper = next((b for b in BOUNDS if b >= p99), float("inf"))
        lower = max([b for b in BOUNDS if b < upper] + [0])
        if not lower * 0.99 <= own <= upper * 1.01:
            fail(f"the server's p99 {own} outside Prometheus's p99 bucket ({lower}, {upper}]")
        print("PASS")
    finally:
        stop(prometheus.proc, server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
