#!/usr/bin/python3
"""RSS added per idle keep-alive connection: hello-sanic beside nginx.

Starts each server on a free loopback port (1 worker, CPU 1), opens N
connections that each make one keep-alive request and then stay idle, and
reports (RSS with N connections - RSS with one) / N, summed over the
server's processes. Loopback only; bounded by N and a timeout per step.
`scripts/bench --performance` runs the same measure beside the others.

usage: scripts/idle_rss.py [N]     default 10000
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import extras, targets  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
for target in (targets.Persona("sanic", os.path.join(root, "build"), cpus="1"), targets.Nginx("nginx", path="/", cpus="1")):
    r = extras.idle_rss(target, N)
    if r.get("error"):
        print(f"{target.label}: {r['error']}", file=sys.stderr)
        continue
    print(f"{target.label}: RSS {r['rss_kib_one']} KiB with 1 connection, {r['rss_kib_all']} KiB with {N}: "
          f"{r['bytes_per_connection']:.0f} bytes per idle connection")
