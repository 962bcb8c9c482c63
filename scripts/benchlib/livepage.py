"""scripts/bench --live-page: what the admin port's live page
(docs/observability.md) costs the server while it polls /stats once a
second. One persona, started once; its runs alternate without the page and
with it open (page-off, page-on, then page-on, page-off, ...), and the
report divides the medians of server CPU per request, on over off.

The page is Debian's Chromium, headless, pinned to the load tool's CPUs;
without Chromium, a Python thread asks what the page asks (GET / once,
then GET /stats once a second), which costs the server the same."""
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

from .targets import stop_group

# CPU per request with the page open over without it, within this.
TARGET = 0.02
# Seconds between opening the page and the run's start: Chromium's start
# (on the tool's CPUs) and the page's first polls are not the run's.
SETTLE_SECONDS = 3
VARIANTS = ("page-off", "page-on")


class Page:
    """The live page of one admin port, open between start() and stop()."""

    def __init__(self, admin_port, cpus):
        self.url = f"http://127.0.0.1:{admin_port}/"
        self.cpus = cpus
        self.proc = None
        self.profile = None
        self.thread = None
        self.stopping = threading.Event()
        self.kind = "chromium" if shutil.which("chromium") else "poller"

    def start(self):
        if self.kind == "chromium":
            self.profile = tempfile.mkdtemp(prefix="bench-page-")
            self.proc = subprocess.Popen(
                ["taskset", "-c", self.cpus, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-extensions",
                 f"--user-data-dir={self.profile}", self.url],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        else:
            self.stopping.clear()
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()
        time.sleep(SETTLE_SECONDS)

    def _poll(self):
        paths = ["", "stats"]
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                with urllib.request.urlopen(self.url + paths[0], timeout=2) as r:
                    r.read()
            except OSError:
                pass
            paths = ["stats"]
            self.stopping.wait(max(0.0, 1.0 - (time.monotonic() - started)))

    def stop(self):
        stop_group(self.proc, 10)
        self.proc = None
        if self.thread:
            self.stopping.set()
            self.thread.join(timeout=5)
            self.thread = None
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None


def rounds(repeat):
    """Each round's order of the two variants: off then on, then on then off, ..."""
    return [VARIANTS if i % 2 == 0 else VARIANTS[::-1] for i in range(repeat)]


def text(meta):
    live = meta["live_page"]
    return (f"hello-{live['persona']}, {live['workers']} worker(s), started once; the live page open "
            f"({live['page']}: {'headless Chromium on the tool CPUs' if live['page'] == 'chromium' else 'a poller asking what the page asks'}) "
            f"in every second run, {SETTLE_SECONDS} s before it starts, and closed after it. Rounds alternate "
            f"(page off then on, then on then off), {live['rounds']} rounds; each ratio divides two medians of "
            "this run, and the rounds' own ratios are shown beside it.")
