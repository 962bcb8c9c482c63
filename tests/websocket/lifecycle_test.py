#!/usr/bin/env python3
"""A WebSocket persona's life around its echoes (docs/websocket.md), end to
end against the real binary: /metrics counts upgrades, open connections,
messages, bytes and closes; the access log has one line per WebSocket
connection at its end (101, payload bytes sent); a graceful stop sends each
open connection a close frame with the persona's code (1001; uvicorn's
1012 for hello-starlette) and exits once the clients have answered; the
exit's --stats-json has the websocket counts. A connection stalled in the
middle of a frame never holds up the others.

usage: lifecycle_test.py BUILD_DIR   (runs hello-sanic and hello-starlette)
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsclient  # noqa: E402


class Opts:
    host = "127.0.0.1"
    tls = False

    def __init__(self, port, path):
        self.port = port
        self.path = path


def start(binary, tmp):
    err = open(os.path.join(tmp, "server.err"), "w+")
    log = os.path.join(tmp, "access.log")
    stats = os.path.join(tmp, "stats.json")
    proc = subprocess.Popen([binary, "-H", "127.0.0.1", "-p", "0", "--admin", "127.0.0.1:0",
                             "--access-log=" + log, "--stats-json", stats],
                            stdout=subprocess.DEVNULL, stderr=err)
    port = admin = None
    for _ in range(100):
        text = open(err.name).read()
        m = re.search(r"^listening on http://127\.0\.0\.1:(\d+)", text, re.M)
        a = re.search(r"admin on http://127\.0\.0\.1:(\d+)", text)
        if m and a:
            port, admin = int(m.group(1)), int(a.group(1))
            break
        time.sleep(0.05)
    if port is None:
        proc.kill()
        raise SystemExit("did not start: " + open(err.name).read())
    return proc, port, admin, log, stats


def metric(admin, name):
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % admin, timeout=5).read()
    total = 0
    for line in body.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def expect(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def echo(conn, payload):
    conn.send(wsclient.frame(0x1, payload))
    f = conn.read_frame()
    expect(f.opcode == 0x1 and f.payload == payload, "echo of %r: %s" % (payload, f.describe()))


def run(binary, path, going_away):
    with tempfile.TemporaryDirectory() as tmp:
        proc, port, admin, log, stats = start(binary, tmp)
        try:
            opts = Opts(port, path)
            conns = []
            for _ in range(3):
                c = wsclient.Conn.connect(opts)
                c.handshake(opts)
                conns.append(c)
            # A fourth stops in the middle of a frame's header: the others go on.
            stalled = wsclient.Conn.connect(opts)
            stalled.handshake(opts)
            stalled.send(b"\x81\xfe")
            for i, c in enumerate(conns):
                echo(c, b"hello %d" % i)
            expect(metric(admin, "hello_websocket_connections_open") == 4, "4 open")
            expect(metric(admin, "hello_websocket_upgrades_total") == 4, "4 upgrades")
            # The first leaves with a close of its own, echoed.
            conns[0].send(wsclient.frame(0x8, wsclient.close_payload(1000)))
            f = conns[0].read_frame()
            expect(f.opcode == 0x8 and f.payload[:2] == b"\x03\xe8", "close echoed")
            for _ in range(50):
                if metric(admin, "hello_websocket_connections_open") == 3:
                    break
                time.sleep(0.02)
            expect(metric(admin, "hello_websocket_connections_open") == 3, "3 open after a close")
            expect(metric(admin, "hello_websocket_messages_total") == 6, "3 in, 3 out")
            # A graceful stop: each open connection gets the persona's close.
            proc.send_signal(signal.SIGTERM)
            for c in conns[1:]:
                f = c.read_frame()
                expect(f.opcode == 0x8 and f.payload[:2] == going_away.to_bytes(2, "big"),
                       "close %d on stop: %s" % (going_away, f.describe()))
                c.send(wsclient.frame(0x8, f.payload[:2]))
            expect(proc.wait(timeout=15) == 0, "clean exit")
            lines = [l for l in open(log).read().splitlines() if '" 101 ' in l]
            expect(len(lines) == 4, "4 access-log lines with 101: %r" % lines)
            total = json.load(open(stats))["total"]["websocket"]
            expect(total["upgraded"] == 4 and total["messages_in"] == 3, "stats: %r" % total)
            expect(total["closes_received"] >= 3, "closes received: %r" % total)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print("ok", os.path.basename(binary))


def main():
    build = sys.argv[1]
    run(os.path.join(build, "hello-sanic"), "/feed", 1001)
    run(os.path.join(build, "hello-starlette"), "/ws", 1012)


if __name__ == "__main__":
    main()
