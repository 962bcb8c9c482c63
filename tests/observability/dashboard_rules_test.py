#!/usr/bin/python3
"""The Grafana dashboard (docs/grafana/hello-family.json) and the Prometheus
rules (docs/prometheus/rules.yml) against a real Prometheus (Debian's
prometheus and promtool), as docs/observability.md describes:

- promtool check rules passes on rules.yml, and on every panel expression
  of the dashboard written as a recording rule (so each one parses);
  promtool test rules passes on rules_test.yml (each alert firing and not);
- the dashboard is importable: a DS_PROMETHEUS input of type prometheus,
  __requires, the job, persona and instance variables, every panel and
  target on ${DS_PROMETHEUS};
- two servers (hello-sanic under load, hello-flask nearly idle) are scraped
  every second while wrk loads hello-sanic with a mix that causes every
  condition the panels and alerts watch: shaped 503s and delays of 600 ms, a
  route file's own 500s, bad shaping parameters, --stall, connections over
  --max-connections, an access log nobody reads (lines dropped); then a
  graceful stop with an answer in flight (not ready) and the process gone
  (down). Prometheus evaluates rules.yml every second;
- afterwards every panel expression (the variables replaced by regexes
  that match everything, $__rate_interval by 5s), every variable's query
  and every rule's expression returns a non-empty result over the run
  (each panel a value above 0 somewhere), every recording rule's series
  exists, and every alert was at least pending (ALERTS).

  tests/observability/dashboard_rules_test.py BUILD_DIR

Everything listens on 127.0.0.1 and every wait is bounded.
"""
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from obs_support import Prometheus, fail, free_port, get, stop, wait_for

try:
    import yaml
except ImportError:
    print("FAIL: PyYAML is not installed (python3-yaml; scripts/setup installs it)")
    sys.exit(1)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "docs", "grafana", "hello-family.json")
RULES = os.path.join(ROOT, "docs", "prometheus", "rules.yml")
RULES_TEST = os.path.join(ROOT, "docs", "prometheus", "rules_test.yml")
WRK_SECONDS = 15
RATE_INTERVAL = "5s"  # Grafana's $__rate_interval for a 1 s scrape: 4 scrapes and a bit

# wrk's mix: 2% wait 600 ms (p99 over 0.5 s), 10% shaped 503, 10% the route
# file's own 500, 1% bad shaping parameters; the rest carry a long query
# (the log keeps 256 bytes of it) so that the unread access log fills its
# backlog (4 MiB a worker) within seconds.
WRK_SCRIPT = """
local pad = string.rep("x", 1500)
local n = 0
request = function()
  n = n + 1
  local path
  if n % 50 == 0 then path = "/?delay=600ms"
  elseif n % 10 == 1 then path = "/?status=503"
  elseif n % 10 == 2 then path = "/broken"
  elseif n % 100 == 3 then path = "/?delay=abc"
  else path = "/?pad=" .. pad end
  return wrk.format("GET", path)
end
"""
ROUTES = {"routes": [{"method": "GET", "path": "/broken", "status": 500, "body": "broken\n"}]}


def promtool(*args):
    r = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=60)
    print(f"promtool {' '.join(args)}: exit {r.returncode}")
    if r.returncode != 0:
        fail(f"promtool {' '.join(args)}:\n{r.stdout}{r.stderr}")


def substitute(expr):
    """A panel's expression as Grafana would send it with every variable on All."""
    expr = expr.replace("$__rate_interval", RATE_INTERVAL).replace("${__rate_interval}",
                                                                   RATE_INTERVAL)
    expr = re.sub(r"\$\{?(job|persona|instance)\}?", ".*", expr)
    if "$" in expr:
        fail(f"a variable left unreplaced in {expr}")
    return expr


def dashboard_queries():
    """Checks the dashboard's import shape; returns (title, expr) of every target
    and the variables' queries as Prometheus expressions."""
    with open(DASHBOARD) as f:
        d = json.load(f)
    inputs = {i["name"]: i for i in d.get("__inputs", [])}
    ds = inputs.get("DS_PROMETHEUS")
    if not ds or ds.get("type") != "datasource" or ds.get("pluginId") != "prometheus":
        fail(f"no DS_PROMETHEUS input of a prometheus data source: {d.get('__inputs')}")
    required = {(r["type"], r["id"]) for r in d.get("__requires", [])}
    if ("datasource", "prometheus") not in required or ("grafana", "grafana") not in required:
        fail(f"__requires lacks grafana or prometheus: {required}")
    if not 36 <= d.get("schemaVersion", 0) <= 39:
        fail(f"schemaVersion {d.get('schemaVersion')}")
    variables = {v["name"]: v for v in d["templating"]["list"]}
    for name in ("job", "persona", "instance"):
        if name not in variables:
            fail(f"no ${name} variable")
    queries = []
    for name, v in variables.items():
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
        if not m:
            fail(f"variable {name}: {q} is not label_values(SELECTOR, LABEL)")
        queries.append((f"variable ${name}", f"count by ({m.group(2)}) ({m.group(1)})"))
    ids = set()
    types = {r["id"] for r in d["__requires"] if r["type"] == "panel"}
    for p in d["panels"]:
        if p["id"] in ids:
            fail(f"panel id {p['id']} twice")
        ids.add(p["id"])
        if p["type"] == "row":
            continue
        if p["type"] not in types:
            fail(f"panel type {p['type']} not in __requires")
        if p["datasource"].get("uid") != "${DS_PROMETHEUS}":
            fail(f"panel {p['title']} not on ${{DS_PROMETHEUS}}")
        if not p.get("targets"):
            fail(f"panel {p['title']} has no query")
        for t in p["targets"]:
            if t["datasource"].get("uid") != "${DS_PROMETHEUS}":
                fail(f"a target of {p['title']} not on ${{DS_PROMETHEUS}}")
            queries.append((f"{p['title']} [{t['refId']}]", t["expr"]))
    return queries


def rules():
    with open(RULES) as f:
        groups = yaml.safe_load(f)["groups"]
    return [r for g in groups for r in g["rules"]]


def query_range(prometheus, expr, start, end):
    return prometheus.api("query_range", timeout=20, query=expr, start=f"{start:.3f}",
                          end=f"{end:.3f}", step="1")["result"]


def largest(result):
    values = [float(v) for s in result for _, v in s["values"]]
    values = [v for v in values if math.isfinite(v)]
    return max(values) if values else None


class Side:
    """What runs beside wrk: bursts of connections over --max-connections on
    the loaded server, and a trickle of requests to the other one."""

    def __init__(self, port, other_port):
        self.port, self.other_port = port, other_port
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        request = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
        for _ in range(200):  # bounded: 0.5 s a round
            if self.stop.wait(0.5):
                return
            held = []
            for _ in range(40):
                try:
                    s = socket.create_connection(("127.0.0.1", self.port), timeout=1)
                    s.sendall(request)
                    held.append(s)
                except OSError:
                    pass
            time.sleep(0.3)
            for s in held:
                s.close()
            try:
                get(f"http://127.0.0.1:{self.other_port}/", timeout=1)
            except OSError:
                pass


def drain(stream):
    while stream.read(65536):
        pass


def check_series(prometheus, queries, start, end):
    """Every panel's query and every rule over the run: series, above 0 for a
    panel, and evaluated by Prometheus for a rule."""
    print(f"over {end - start:.0f} s, step 1 s (largest value of any series):")
    for title, expr in queries:
        result = query_range(prometheus, substitute(expr), start, end)
        top = largest(result)
        shown = f"{top:.6g}" if top is not None else "-"
        print(f"  {len(result):2} series, max {shown:<12}  {title}")
        if not result:
            fail(f"panel {title}: no series for {substitute(expr)}")
        if top is None or top <= 0:
            fail(f"panel {title}: never above 0: {substitute(expr)}")
    for r in rules():
        name = r.get("record") or r["alert"]
        result = query_range(prometheus, r["expr"], start, end)
        evaluated = query_range(prometheus, r["record"] if "record" in r
                                else f'ALERTS{{alertname="{r["alert"]}"}}', start, end)
        states = sorted({s["metric"].get("alertstate", "") for s in evaluated})
        print(f"  {len(result):2} series, evaluated {len(evaluated):2}"
              f"{' ' + ','.join(states) if 'alert' in r else ''}  {name}")
        if not result:
            fail(f"rule {name}: no series for {r['expr']}")
        if not evaluated:
            fail(f"rule {name}: Prometheus's evaluation left no series")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    for tool in ("prometheus", "promtool", "wrk"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (scripts/setup installs it)")
    tmp = tempfile.mkdtemp(prefix="hello-dash-")
    procs = []
    try:
        # Offline: the rules, their unit tests, and the panels as rules.
        promtool("check", "rules", RULES)
        promtool("test", "rules", RULES_TEST)
        queries = dashboard_queries()
        if not queries or not rules():
            fail(f"{len(queries)} panel queries and {len(rules())} rules: nothing to check")
        panel_rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query_{i}", "expr": substitute(e)}
            for i, (_, e) in enumerate(queries)]}]}
        with open(os.path.join(tmp, "panels.yml"), "w") as f:
            yaml.safe_dump(panel_rules, f)
        promtool("check", "rules", os.path.join(tmp, "panels.yml"))

        port, admin, other, other_admin = (free_port() for _ in range(4))
        with open(os.path.join(tmp, "routes.json"), "w") as f:
            json.dump(ROUTES, f)
        with open(os.path.join(tmp, "mix.lua"), "w") as f:
            f.write(WRK_SCRIPT)
        loaded = subprocess.Popen(
            [os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(port), "-w", "2",
             "--admin", f"127.0.0.1:{admin}", "--shape", "--routes", f"{tmp}/routes.json",
             "--stall", "200ms/3s", "--max-connections", "32", "--access-log",
             "--shutdown-timeout", "5"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        procs.append(loaded)
        procs.append(subprocess.Popen(
            [os.path.join(build, "hello-flask"), "-H", "127.0.0.1", "-p", str(other), "-w", "1",
             "--admin", f"127.0.0.1:{other_admin}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        prometheus = Prometheus(tmp, [f"127.0.0.1:{admin}", f"127.0.0.1:{other_admin}"],
                                rule_files=[RULES], check=lambda c: promtool("check", "config", c))
        procs.append(prometheus.proc)
        for url, what in ((f"http://127.0.0.1:{admin}/healthz", "hello-sanic's admin port"),
                          (f"http://127.0.0.1:{other_admin}/healthz", "hello-flask's admin port")):
            if not wait_for(url, 30):
                fail(f"{what} did not answer")
        # Scrapes before the load, so that rate() has a start.
        prometheus.wait_scraped(times=2)
        start = time.time()

        side = Side(port, other)
        wrk = subprocess.Popen(
            ["wrk", "-t1", "-c40", f"-d{WRK_SECONDS}s", "-s", f"{tmp}/mix.lua",
             f"http://127.0.0.1:{port}/"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        time.sleep(1)  # wrk's connections first, then the bursts over the limit
        side.thread.start()
        out, _ = wrk.communicate(timeout=WRK_SECONDS + 30)
        side.stop.set()
        side.thread.join(timeout=10)
        m = re.search(r"(\d+) requests in", out)
        print(f"wrk: {m.group(1) if m else '?'} requests in {WRK_SECONDS} s")

        # Read the log at last, then a graceful stop that waits 3 s for an
        # answer in flight (not ready), then the process gone (down).
        threading.Thread(target=drain, args=(loaded.stdout,), daemon=True).start()
        time.sleep(1.5)
        waiting = socket.create_connection(("127.0.0.1", port), timeout=10)
        waiting.sendall(b"GET /?delay=3s HTTP/1.1\r\nHost: a\r\n\r\n")
        time.sleep(0.2)
        loaded.send_signal(signal.SIGTERM)
        answer = waiting.recv(4096)
        waiting.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            fail(f"the answer in flight at SIGTERM: {answer[:100]!r}")
        if loaded.wait(timeout=15) != 0:
            fail(f"hello-sanic exited {loaded.returncode}")
        time.sleep(3)  # scrapes of a target that is gone
        end = time.time()

        check_series(prometheus, queries, start, end)
        print("PASS")
    finally:
        stop(*reversed(procs))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
