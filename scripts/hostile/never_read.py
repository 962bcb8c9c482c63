#!/usr/bin/env python3
"""A client pipelines 100,000 requests and never reads the answers.

Starts hello-sanic on a free loopback port, then reports the server's RSS
growth, how many other clients were served meanwhile, and when the server
closed the reader (expected: at --send-timeout, default 30 s, plus up to a
second). Loopback only; every loop is bounded in count and time.

usage: scripts/hostile/never_read.py [BUILD_DIR]
"""
import errno
import os
import socket
import subprocess
import sys
import threading
import time

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "build")
server = subprocess.Popen(["taskset", "-c", "1", os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", "0"],
                          stderr=subprocess.PIPE, text=True)
port = int(server.stderr.readline().split(":")[2].split()[0])


def rss_kib():
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return -1


base = peak = rss_kib()
hog = socket.create_connection(("127.0.0.1", port))
batch = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" * 1000
sent = 0


def write_all():
    global sent
    try:
        for _ in range(100):
            hog.sendall(batch)
            sent += 1000
    except OSError:
        pass


writer = threading.Thread(target=write_all, daemon=True)
start = time.time()
writer.start()
served = 0
closed_at = None
while time.time() - start < 45:
    peak = max(peak, rss_kib())
    with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        if c.recv(4096).startswith(b"HTTP/1.1 200"):
            served += 1
    err = hog.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        closed_at = (time.time() - start, errno.errorcode[err])
        break
    time.sleep(0.5)
print(f"requests pipelined by the reader that never reads: {sent}")
print(f"server RSS: {base} KiB before, {peak} KiB at most, growth {peak - base} KiB")
print(f"other clients served meanwhile: {served}")
print("reader closed by the server: " + (f"after {closed_at[0]:.1f} s ({closed_at[1]})" if closed_at else "NO"))
server.terminate()
server.wait()
