"""The soaked server seen from outside: started with its flags, its admin
port, its CPU, descriptors and VmRSS (/proc), and the quiesce that waits
for it to close every connection."""
import os
import re
import subprocess
import threading
import time

from .counting import KindStats
from .settings import (EXTRA_FLAGS, HEADER_TIMEOUT_S, HOST, MAX_HEADER_BYTES, QUIESCE_CLIENTS_S,
                       QUIESCE_SERVER_S, SHUTDOWN_TIMEOUT_S)
from .wire import Conn, Lost, Wrong


def admin_get(port, path):
    c = Conn(port, KindStats("admin"))
    try:
        c.send(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        r = c.response(time.monotonic() + 3.0)
        c.expect_close(time.monotonic() + 3.0)
        return r
    finally:
        c.close()


def gauge(admin_port, name):
    """A /metrics gauge summed over the workers; None if /metrics has none."""
    r = admin_get(admin_port, "/metrics")
    if r.status != 200:
        raise Wrong(f"/metrics answered {r.status}")
    total = None
    for ln in r.body.decode("latin-1").splitlines():
        if ln.startswith(name + "{") or ln.startswith(name + " "):
            total = (total or 0) + int(float(ln.rsplit(None, 1)[1]))
    return total


def open_connections(admin_port):
    total = gauge(admin_port, "hello_connections_open")
    if total is None:
        raise Wrong("/metrics has no hello_connections_open")
    return total


def websocket_open(admin_port, failures, when):
    """hello_websocket_connections_open once no connection is open: 0
    expected (within 2 s); None if /metrics has none."""
    end = time.monotonic() + 2.0
    while True:
        try:
            n = gauge(admin_port, "hello_websocket_connections_open")
        except (Lost, Wrong, OSError) as e:
            n = f"unread ({e})"
        if n is None or n == 0:
            return n
        if time.monotonic() > end:
            failures.append(f"{when}: hello_websocket_connections_open is {n} with no connection open")
            return n
        time.sleep(0.1)


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return None


class Sampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(1.0):
            v = rss_kib(self.pid)
            if v is None:
                return
            self.samples.append(v)


def quiesce(ctl, proc, admin_port, failures, when):
    """Clients close and park; waits for the server to have no connection.

    Returns (fds, rss KiB, seconds it took, WebSocket connections open) or None."""
    t = time.monotonic()
    ctl.set("pause")
    if not ctl.wait_parked(QUIESCE_CLIENTS_S):
        failures.append(f"{when}: the clients did not close their connections within {QUIESCE_CLIENTS_S:g} s")
        return None
    end = time.monotonic() + QUIESCE_SERVER_S
    last = None
    while True:
        if proc.poll() is not None:
            failures.append(f"{when}: the server exited (status {proc.returncode}) during the run")
            return None
        try:
            last = open_connections(admin_port)
        except (Lost, Wrong, OSError) as e:
            last = f"admin port: {e}"
        if last == 0:
            break
        if time.monotonic() > end:
            failures.append(f"{when}: the server still had {last} connection(s) open "
                            f"{QUIESCE_SERVER_S:g} s after the clients had closed theirs")
            return None
        time.sleep(0.1)
    ws_open = websocket_open(admin_port, failures, when)
    # Our own admin connection may take a moment to go: the fewest of a few.
    fds = []
    for _ in range(5):
        time.sleep(0.1)
        fds.append(fd_count(proc.pid))
    return min(f for f in fds if f is not None), rss_kib(proc.pid), time.monotonic() - t, ws_open


def start_server(args, tmp):
    stats_json = os.path.join(tmp, "stats.json")
    log = os.path.join(tmp, "server.stderr")
    cmd = [args.binary, "-H", HOST, "-p", "0", "-w", str(args.workers), "--shape",
           "--admin", f"{HOST}:0", "--header-timeout", str(HEADER_TIMEOUT_S),
           "--max-header-bytes", str(MAX_HEADER_BYTES), "--shutdown-timeout", str(SHUTDOWN_TIMEOUT_S),
           "--stats-json", stats_json] + EXTRA_FLAGS.get(args.persona, [])
    out = open(log, "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                            close_fds=True, start_new_session=True)
    out.close()
    port = admin = None
    end = time.monotonic() + 10
    while time.monotonic() < end and (port is None or admin is None):
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        m = re.search(r"listening on http://\S+:([0-9]+) \(", text)
        port = int(m.group(1)) if m else None
        m = re.search(r"admin on http://\S+:([0-9]+)", text)
        admin = int(m.group(1)) if m else None
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    return proc, port, admin, cmd, log, stats_json


def tail(path, n=8):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").splitlines()[-n:]
    except OSError:
        return []
