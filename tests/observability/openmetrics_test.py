#!/usr/bin/python3
"""OpenMetrics on the admin port's /metrics (docs/observability.md):

- the OpenMetrics fixture (tests/fixtures/metrics, the unit test's
  expected output) and a live server's answer to Prometheus's Accept header
  pass the strict parser of Debian's python3-prometheus-client, with the
  right Content-Type, the families typed, counters named without _total,
  units, _created and the closing # EOF;
- without an Accept header, and to text/plain or */*, the answer is text
  0.0.4 (the text parser reads it; no # EOF, no _created) with the same
  samples as OpenMetrics but for _created; HEAD has the GET's head;
- a real Prometheus (Debian's 2.42, which asks for OpenMetrics first) scrapes
  it and stores every series of the exposition, no more and no fewer; the
  _created series and the metadata's units and info type, which only the
  OpenMetrics answer has, prove it was OpenMetrics it read.

  tests/observability/openmetrics_test.py BUILD_DIR

Everything listens on 127.0.0.1 and every wait is bounded.
"""
import http.client
import os
import shutil
import subprocess
import sys
import tempfile

from obs_support import Prometheus, fail, free_port, stop, wait_until

try:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
    from prometheus_client.parser import text_string_to_metric_families as text_parse
except ImportError:
    print("FAIL: python3-prometheus-client is not installed (scripts/setup installs it)")
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "metrics", "openmetrics-1.0.0.txt")
OM_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# What Prometheus 2.42 sends (recorded from Debian 12's prometheus).
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
# The series Prometheus adds to each target's own.
SYNTHETIC = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
             "scrape_samples_post_metric_relabeling", "scrape_series_added"}


def fetch(port, accept=None, method="GET", path="/metrics"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request(method, path, headers={} if accept is None else {"Accept": accept})
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.getheader("Content-Length"), r.read()
    finally:
        c.close()


def series(families):
    """(sample name, sorted labels) of every sample."""
    return {(s.name, tuple(sorted(s.labels.items()))) for f in families for s in f.samples}


def check_openmetrics(text, what):
    """Parses `text` strictly and checks what this exposition promises."""
    if not text.endswith("\n# EOF\n"):
        fail(f"{what}: does not end with # EOF")
    try:
        families = list(om_parse(text))
    except ValueError as e:
        fail(f"{what}: the OpenMetrics parser refused it: {e}")
    by_name = {f.name: f for f in families}
    want = {"hello_http_requests": ("counter", ""),
            "hello_http_request_bytes": ("counter", "bytes"),
            "hello_http_request_duration_seconds": ("histogram", "seconds"),
            "hello_event_loop_idle_seconds": ("counter", "seconds"),
            "hello_connections_open": ("gauge", ""),
            "hello_build": ("info", ""),
            "process_cpu_seconds": ("counter", "seconds"),
            "process_resident_memory_bytes": ("gauge", "bytes"),
            "process_start_time_seconds": ("gauge", "seconds")}
    for name, (typ, unit) in want.items():
        f = by_name.get(name)
        if f is None or (f.type, f.unit) != (typ, unit):
            got = None if f is None else (f.type, f.unit)
            fail(f"{what}: family {name} is {got}, not {(typ, unit)}")
    start = next(s.value for s in by_name["process_start_time_seconds"].samples)
    for f in families:
        if f.type == "unknown":
            fail(f"{what}: family {f.name} has no TYPE")
        names = {s.name for s in f.samples}
        if f.type in ("counter", "histogram"):
            created = [s for s in f.samples if s.name == f.name + "_created"]
            per_set = len({tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                           for s in f.samples if s.name != f.name + "_created"})
            if len(created) != per_set or any(s.value != start for s in created):
                fail(f"{what}: {f.name} has {len(created)} _created at the start time for "
                     f"{per_set} label sets")
        if f.type == "counter" and names != {f.name + "_total", f.name + "_created"}:
            fail(f"{what}: counter {f.name} has samples {sorted(names)}")
    return families


def check_answers(admin):
    status, ctype, length, body = fetch(admin, PROMETHEUS_ACCEPT)
    if status != 200 or ctype != OM_TYPE:
        fail(f"Prometheus's Accept got {status} {ctype!r}, not 200 {OM_TYPE!r}")
    om = check_openmetrics(body.decode(), "the live answer")
    print(f"OpenMetrics answer: {OM_TYPE}, {len(body)} bytes, {len(om)} families, "
          f"{sum(len(f.samples) for f in om)} samples, strict parser OK")
    om_samples = {k for k in series(om) if not k[0].endswith("_created")}
    for accept in (None, "text/plain", "*/*", "text/plain;version=0.0.4",
                   "application/openmetrics-text;q=0, */*"):
        status, ctype, _, body = fetch(admin, accept)
        text = body.decode()
        if status != 200 or ctype != TEXT_TYPE:
            fail(f"Accept {accept!r} got {status} {ctype!r}, not 200 {TEXT_TYPE!r}")
        if "# EOF" in text or "_created" in text:
            fail(f"Accept {accept!r}: OpenMetrics's # EOF or _created in the text format")
        if series(text_parse(text)) != om_samples:
            fail(f"Accept {accept!r}: the text format's samples differ from OpenMetrics's")
    print("text 0.0.4 to no Accept, text/plain, */* and openmetrics;q=0: same samples, "
          "no # EOF, no _created")
    status, ctype, length, body = fetch(admin, PROMETHEUS_ACCEPT, method="HEAD")
    if status != 200 or ctype != OM_TYPE or body or not length or int(length) < 1000:
        fail(f"HEAD with Prometheus's Accept: {status} {ctype!r} Content-Length {length}, "
             f"{len(body)} body bytes")
    return om


def check_prometheus(admin, tmp):
    prometheus = Prometheus(tmp, [f"127.0.0.1:{admin}"])
    try:
        prometheus.wait_scraped(times=3)
        if prometheus.value("up{job='hello'}") != 1:
            target = prometheus.api("targets")["activeTargets"]
            fail(f"the scrape failed: {[t.get('lastError') for t in target]}")
        _, _, _, body = fetch(admin, PROMETHEUS_ACCEPT)
        expo = series(om_parse(body.decode()))
        stored = set()
        for s in prometheus.api("series", **{"match[]": '{job="hello"}'}):
            name = s.pop("__name__")
            s.pop("job")
            s.pop("instance")
            if name not in SYNTHETIC:
                stored.add((name, tuple(sorted(s.items()))))
        if stored != expo:
            fail(f"Prometheus stores {len(stored)} series, the exposition has {len(expo)}: "
                 f"missing {sorted(expo - stored)[:5]}, extra {sorted(stored - expo)[:5]}")
        samples = prometheus.value("scrape_samples_scraped{job='hello'}")
        if samples != len(expo):
            fail(f"scrape_samples_scraped is {samples}, the exposition has {len(expo)} samples")
        created = sorted(n for n, _ in stored if n.endswith("_created"))
        if "hello_http_requests_created" not in created:
            fail("no _created series in Prometheus: it did not read OpenMetrics")
        meta = prometheus.api("targets/metadata", match_target='{job="hello"}')
        meta = {m["metric"]: (m["type"], m.get("unit", "")) for m in meta}
        for name, want in (("hello_http_request_duration_seconds", ("histogram", "seconds")),
                           ("hello_http_requests", ("counter", "")),
                           ("process_cpu_seconds", ("counter", "seconds")),
                           ("hello_build", ("info", ""))):
            if meta.get(name) != want:
                fail(f"Prometheus's metadata of {name} is {meta.get(name)}, not {want}: "
                     "it did not read OpenMetrics")
        print(f"Prometheus: {len(stored)} series stored = the exposition's {len(expo)} "
              f"({len(created)} _created series among them), scrape_samples_scraped "
              f"{samples:.0f}; metadata from OpenMetrics (units, hello_build info)")
    finally:
        prometheus.stop()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    if shutil.which("prometheus") is None:
        fail("prometheus is not installed (scripts/setup installs it)")
    with open(FIXTURE) as f:
        check_openmetrics(f.read(), FIXTURE)
    print("the OpenMetrics fixture: strict parser OK")
    port, admin = free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="hello-om-")
    server = subprocess.Popen(
        [os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(port), "-w", "2",
         "--admin", f"127.0.0.1:{admin}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_until(lambda: fetch(admin, path="/healthz")[0] == 200, 10):
            fail("the admin port did not answer")
        # A few answers, so that counters and the histogram are not all 0.
        for path in ("/", "/", "/nope"):
            fetch(port, path=path)
        check_answers(admin)
        check_prometheus(admin, tmp)
        print("PASS")
    finally:
        stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
