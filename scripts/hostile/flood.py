#!/usr/bin/env python3
"""1,000 simultaneous connections against a server limited to 256 descriptors.

Starts hello-sanic under `ulimit -n 256` with N workers, opens 1,000
connections at once, measures the server's CPU time over 3 s of the flood
(spinning on accept would be about 100% of a core), closes them, and checks
that 40 new clients are served. Loopback only; every loop is bounded.

usage: scripts/hostile/flood.py [WORKERS] [BUILD_DIR]
"""
import os
import socket
import subprocess
import sys
import time

workers = sys.argv[1] if len(sys.argv) > 1 else "2"
build = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "build")
binary = os.path.join(build, "hello-sanic")
server = subprocess.Popen(["bash", "-c", f"ulimit -n 256; exec taskset -c 1 {binary} -H 127.0.0.1 -p 0 -w {workers}"],
                          stderr=subprocess.PIPE, text=True)
port = int(server.stderr.readline().split(":")[2].split()[0])
hz = os.sysconf("SC_CLK_TCK")


def cpu_ticks():
    with open(f"/proc/{server.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


flood = []
for _ in range(1000):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    flood.append(s)
time.sleep(0.5)
before = cpu_ticks()
time.sleep(3)
used = cpu_ticks() - before
alive = server.poll() is None
print(f"{workers} workers, ulimit -n 256, 1000 connections held 3 s: server CPU {used / hz:.2f} s "
      f"({100 * used / hz / 3:.0f}% of a core), {'still running' if alive else 'DIED'}")
for s in flood:
    s.close()
time.sleep(0.5)
ok = 0
for _ in range(40):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        if c.recv(4096).startswith(b"HTTP/1.1 200"):
            ok += 1
print(f"after the flood: {ok}/40 new clients served")
server.terminate()
print("exit status", server.wait())
print(server.stderr.read().strip())
