#!/usr/bin/python3
"""Debian's Chromium, headless, opens the admin port's live page while wrk
loads the persona (docs/observability.md), driven through chromedriver
with a WebDriver client of a few lines (urllib; no package beyond
Chromium's own):

- the request rate the page shows (the text of #rps), read twice a second
  during the load but its first and last seconds, is on average within 10%
  of wrk's requests per second;
- every request the browser made went to the admin port's origin (the
  DevTools Network events of chromedriver's performance log, and the
  page's own Performance entries), among them GET /stats;
- the browser logged no error (a Content-Security-Policy violation is one);
- the page opened under a short load first (wrk -t1 -c8 -d8s) and
  screenshotted within 1.5 s of its load (BUILD_DIR/live-page-first.png):
  every panel shows data (a number beside its title) or its waiting state
  ("waiting for the first second"), every headline names its statistic
  and says it is of all workers, a worker has one colour on every panel
  (its legend swatches) and, under the main load, that is the colour its
  lines are drawn in (the canvas's strokes) and no axis label is a long
  number (25k/s, not 25000/s);
- a screenshot under load is saved to BUILD_DIR/live-page.png.

  tests/observability/live_page_test.py BUILD_DIR [--seconds N]

Exits 77 (skipped) without chromium, chromedriver or wrk (scripts/test
installs them: scripts/setup --tests). Everything listens on 127.0.0.1, every wait is bounded.
"""
import argparse
import base64
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from obs_support import fail, free_port, stop, time_scale, wait_until

# The page's rate against wrk's: within this.
TOLERANCE = 0.10
# Seconds of the load left out at each end: the page shows the second
# before its last poll, so its first and last readings straddle the load's
# start and end.
EDGE_SECONDS = 3
# From the page's load to its screenshot (issue 34: data, or a waiting
# state, on the first paint), in a Release build's seconds.
FIRST_PAINT_SECONDS = 1.5
# Tries at that, on a machine so busy that a screenshot alone may take a
# second.
FIRST_PAINT_TRIES = 3
# The load the page is opened under: long enough for every try.
FIRST_LOAD_SECONDS = 8
# What every panel shows, read from the page: its state, its headline's
# words and number, its waiting text if shown, each legend series' colour
# and the canvas's scale (its aria-label).
PANELS_SCRIPT = """
const norm = document.createElement("canvas").getContext("2d");
const hex = c => { norm.fillStyle = "#000"; norm.fillStyle = c; return norm.fillStyle; };
return [...document.querySelectorAll("#charts section")].map(s => {
  const wait = s.querySelector(".wait");
  return {id: s.dataset.chart, state: s.dataset.state,
          head: (s.querySelector("h2 small") || {}).textContent || "",
          value: s.querySelector("h2 output").textContent,
          waiting: wait && getComputedStyle(wait).display !== "none" ? wait.textContent : null,
          colors: Object.fromEntries([...s.querySelectorAll(".legend [data-series]")].map(
            i => [i.dataset.series, hex(getComputedStyle(i.querySelector("i")).backgroundColor)])),
          scale: s.querySelector("canvas").getAttribute("aria-label") || "",
          strokes: ((window.strokesSeen || {})[s.dataset.chart] || []).map(hex)};
});
"""
# Records the colours each chart's canvas strokes from now on.
STROKES_SCRIPT = """
window.strokesSeen = {};
const stroke = CanvasRenderingContext2D.prototype.stroke;
CanvasRenderingContext2D.prototype.stroke = function (...a) {
  const id = this.canvas.closest("section").dataset.chart;
  (window.strokesSeen[id] = window.strokesSeen[id] || []).push(String(this.strokeStyle));
  return stroke.apply(this, a);
};
"""


class WebDriver:
    """The few W3C WebDriver commands the test needs, over chromedriver's HTTP."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"WebDriver {method} {path}: {e.code} {e.read()[:500]!r}") from None

    def start(self, profile):
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1050", f"--user-data-dir={profile}", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions"]
        caps = {"browserName": "chrome",
                "goog:chromeOptions": {"binary": shutil.which("chromium"), "args": args},
                "goog:loggingPrefs": {"performance": "ALL", "browser": "ALL"}}
        value = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}}, timeout=60)
        self.session = value["sessionId"]

    def cmd(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def run(self, script):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": []})

    def log(self, kind):
        return self.cmd("POST", "/se/log", {"type": kind})

    def quit(self):
        if self.session:
            try:
                self.call("DELETE", f"/session/{self.session}", timeout=10)
            except (OSError, RuntimeError):
                pass


def shown_rate(driver, element_id="rps"):
    """The rate the page shows in `element_id` ("12345", or "12345/s" in a
    legend), or None while it shows none."""
    text = driver.run(f"const e = document.getElementById('{element_id}'); return e ? e.textContent : null;")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(?:/s)?", text or "")
    return float(m.group(1)) if m else None


# The browser's own pages (its new-tab page before the test navigates):
# their requests are not the page's.
BROWSER_SCHEMES = ("chrome", "chrome-untrusted", "about", "data", "devtools")


def requested_urls(driver):
    """Every URL asked for from a document that is not one of the
    browser's own, and that document's URL, from the DevTools Network
    events; and how many events were the browser's own pages'."""
    urls, others = [], 0
    for entry in driver.log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        params = message["params"]
        document = params.get("documentURL", "")
        if urllib.parse.urlsplit(document).scheme in BROWSER_SCHEMES:
            others += 1
        else:
            urls += [params["request"]["url"], document]
    return urls, others


def check_first_paint(panels):
    """Every panel shows data or its waiting state, and its headline says
    what its number is."""
    if len(panels) < 8:
        fail(f"the page shows {len(panels)} panels, not 8")
    for p in panels:
        if p["state"] == "data":
            if not re.search(r"\d", p["value"]):
                fail(f"panel {p['id']} says it has data but shows {p['value']!r}")
        elif p["waiting"] != "waiting for the first second":
            fail(f"panel {p['id']} shows neither data ({p['value']!r}) nor its waiting state: {p}")
        if not p["head"].endswith("all workers") or not re.search(r"/s|p99|open|mean", p["head"]):
            fail(f"panel {p['id']}: its headline does not name its statistic: {p['head']!r}")
    latency = next(p for p in panels if p["id"] == "latency")
    if not latency["head"].startswith("p99"):
        fail(f"the service time's headline does not say p99: {latency['head']!r}")


def check_colours_and_scales(panels, workers):
    """One colour per worker on every panel, the one its lines are drawn
    in; the axes in k/M."""
    seen = {}
    for p in panels:
        for name, colour in p["colors"].items():
            seen.setdefault(name, {})[p["id"]] = colour
            if p["state"] == "data" and colour not in p["strokes"]:
                fail(f"panel {p['id']}: {name}'s swatch is {colour}, its lines not "
                     f"(strokes {sorted(set(p['strokes']))})")
        if re.search(r"\d{5}", p["scale"]):
            fail(f"panel {p['id']}: an axis label is a long number: {p['scale']!r}")
    for w in range(workers):
        by_panel = seen.get(f"w{w}", {})
        if len(by_panel) < 3 or len(set(by_panel.values())) != 1:
            fail(f"worker {w}'s colour is not one on every panel: {by_panel}")
    firsts = [next(iter(seen[f"w{w}"].values())) for w in range(workers)]
    if len(set(firsts)) != workers:
        fail(f"two workers share a colour: {firsts}")
    rps = next(p for p in panels if p["id"] == "rps")
    if "k/s" not in rps["scale"]:
        fail(f"under load, the request rate's axis is not in thousands: {rps['scale']!r}")
    print(f"colours: {', '.join(f'w{w} {c}' for w, c in enumerate(firsts))}; "
          f"the request rate's scale: {rps['scale']}")


def open_under_load(driver, origin, port, build):
    """Asks for the page during a short load (wrk -t1 -c8), reads its panels
    and takes a screenshot at once: the first paint, within
    FIRST_PAINT_SECONDS (asked again, up to FIRST_PAINT_TRIES times in all,
    where a busy machine made the screenshot late; every try's panels are
    checked); then waits for the page's first rate and the load's end."""
    wrk = subprocess.Popen(["wrk", "-t1", "-c8", f"-d{FIRST_LOAD_SECONDS}s", f"http://127.0.0.1:{port}/"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # the server under load, and its last second's service time known
    path = os.path.join(build, "live-page-first.png")
    for attempt in range(1, FIRST_PAINT_TRIES + 1):
        asked = time.monotonic()
        driver.cmd("POST", "/url", {"url": origin + "/"})  # returns once the page has loaded
        opened = time.monotonic()
        panels = driver.run(PANELS_SCRIPT)
        shot = driver.cmd("GET", "/screenshot")
        took = time.monotonic() - opened
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot))
        states = ", ".join(f"{p['id']} {p['state']}" for p in panels)
        print(f"first paint (try {attempt}): loaded {opened - asked:.2f} s after asking, screenshot "
              f"{took:.2f} s after that ({path}): {states}")
        check_first_paint(panels)
        if took <= FIRST_PAINT_SECONDS * time_scale():
            break
    else:
        fail(f"the first screenshot came over {FIRST_PAINT_SECONDS} s after the page opened, "
             f"{FIRST_PAINT_TRIES} times")
    if wait_until(lambda: shown_rate(driver) is not None, 10) is None:
        fail("the page shows no request rate (#rps) after 10 s")
    wrk.wait(timeout=FIRST_LOAD_SECONDS + 30)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--seconds", type=int, default=20, help="wrk's duration (default 20)")
    args = p.parse_args()
    for tool in ("chromium", "chromedriver", "wrk"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} is not installed (scripts/setup --tests)")
            sys.exit(77)
    port, admin, driver_port = free_port(), free_port(), free_port()
    origin = f"http://127.0.0.1:{admin}"
    tmp = tempfile.mkdtemp(prefix="hello-live-")
    server = subprocess.Popen(
        [os.path.join(args.build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(port), "-w", "2",
         "--admin", f"127.0.0.1:{admin}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chromedriver = subprocess.Popen(["chromedriver", f"--port={driver_port}"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    driver = WebDriver(driver_port)
    try:
        if not wait_until(lambda: urllib.request.urlopen(origin + "/healthz", timeout=1).read(), 10):
            fail("the admin port did not answer")
        if not wait_until(lambda: driver.call("GET", "/status", timeout=1)["ready"], 10):
            fail("chromedriver did not become ready")
        driver.start(os.path.join(tmp, "profile"))
        open_under_load(driver, origin, port, args.build)
        driver.run(STROKES_SCRIPT)

        # The page open before this load, so that its readings and wrk's
        # count span the same seconds.
        wrk = subprocess.Popen(["wrk", "-t1", "-c64", f"-d{args.seconds}s", f"http://127.0.0.1:{port}/"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started = time.monotonic()
        readings, shot = [], None
        while wrk.poll() is None and time.monotonic() - started < args.seconds + 30:
            at = time.monotonic() - started
            if EDGE_SECONDS <= at <= args.seconds - EDGE_SECONDS:
                readings.append(shown_rate(driver))
            if shot is None and at >= args.seconds - EDGE_SECONDS:
                shot = driver.cmd("GET", "/screenshot")
                check_colours_and_scales(driver.run(PANELS_SCRIPT), 2)
            time.sleep(0.5)
        out = wrk.communicate(timeout=30)[0]
        m = re.search(r"Requests/sec:\s+([\d.]+)", out)
        if not m:
            fail(f"no rate from wrk:\n{out}")
        wrk_rate = float(m.group(1))
        readings = [r for r in readings if r is not None]
        if not readings:
            fail("no reading of the page's rate during the load")
        # The mean, as wrk's rate is: on a busy machine the rate of single
        # seconds swings, and its median is not its mean.
        page_rate = statistics.mean(readings)
        print(f"wrk: {wrk_rate:.0f} requests/s; the page (#rps, mean of {len(readings)} readings): "
              f"{page_rate:.0f} (median {statistics.median(readings):.0f}, min {min(readings):.0f}, "
              f"max {max(readings):.0f})")
        if abs(page_rate - wrk_rate) > TOLERANCE * wrk_rate:
            fail(f"the page shows {page_rate:.0f}/s, wrk {wrk_rate:.0f}/s: more than {TOLERANCE:.0%} apart")
        for k in range(2):
            if shown_rate(driver, f"rps-w{k}") is None:
                fail(f"the page shows no rate for worker {k} (#rps-w{k})")

        if shot:
            path = os.path.join(args.build, "live-page.png")
            with open(path, "wb") as f:
                f.write(base64.b64decode(shot))
            print(f"screenshot: {path}")

        urls, others = requested_urls(driver)
        entries = driver.run("return performance.getEntries().filter(e => e.name.includes(':'))"
                             ".map(e => e.name);")
        stats = [u for u in urls[::2] if urllib.parse.urlsplit(u).path == "/stats"]
        print(f"the page's requests: {len(urls) // 2} ({len(stats)} to /stats; {others} of the browser's own "
              f"pages left aside), {len(entries)} Performance entries")
        if not stats:
            fail(f"no request to /stats among the browser's: {urls[:5]}")
        for u in urls + entries:
            s = urllib.parse.urlsplit(u)
            if f"{s.scheme}://{s.netloc}" != origin:
                fail(f"the browser asked for {u}, outside the admin port {origin}")
        errors = [e for e in driver.log("browser") if e.get("level") == "SEVERE"]
        if errors:
            fail(f"the browser logged errors: {errors[:3]}")
        print("PASS")
    finally:
        driver.quit()
        stop(chromedriver, server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
