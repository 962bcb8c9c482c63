#!/usr/bin/python3
"""RSS added per idle keep-alive connection: hello-sanic beside nginx.

Starts each server on a free loopback port (1 worker, CPU 1), opens N
connections that each make one keep-alive request and then stay idle, and
reports (RSS with N connections - RSS with one) / N, summed over the
server's processes. Loopback only; bounded by N and a timeout per step.

usage: scripts/idle_rss.py [N]     default 10000
"""
import os
import resource
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import targets  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, N + 1000), hard))


def rss_kib(target):
    total = 0
    for pid in targets.process_tree(target.proc.pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def measure(target):
    target.workers = 1
    target.start()
    request = f"GET {target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    socks = []
    try:
        def open_one():
            s = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            s.sendall(request)
            s.recv(4096)
            socks.append(s)

        open_one()
        time.sleep(0.5)
        base = rss_kib(target)
        while len(socks) < N:
            open_one()
        time.sleep(1)
        full = rss_kib(target)
        return base, full
    finally:
        for s in socks:
            s.close()
        target.stop()


root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
for target in (targets.Persona("sanic", os.path.join(root, "build"), cpus="1"), targets.Nginx("nginx", path="/", cpus="1")):
    base, full = measure(target)
    print(f"{target.label}: RSS {base} KiB with 1 connection, {full} KiB with {N}: "
          f"{(full - base) * 1024 / (N - 1):.0f} bytes per idle connection")
