#!/usr/bin/python3
"""The JSON access log (--access-log-format json, docs/observability.md).

  tests/observability/access_log_json_test.py BUILD_DIR load
  tests/observability/access_log_json_test.py BUILD_DIR hostile

load: hello-sanic -w 2 --shape --admin with the JSON log answers 100,000
pipelined keep-alive requests of a known mix (200, HEAD 200, 201 and 503
by shaping, 404); the log must then hold 100,000 lines, each parsed by
Python's json with exactly the documented fields, whose counts by status
are the mix's, whose counts by worker and status class are /metrics'
hello_http_requests_total, with no line dropped. The same load with the
CLF log must give the same counts by status.

hostile: targets holding every byte llhttp lets through (quotes,
backslashes, DEL, bytes 0x80-0xff, ill-formed UTF-8, a multi-byte character
cut at the log's 256 bytes) and header values with quotes, backslashes,
tabs and invalid UTF-8, each on a connection of its own; every line must
parse, and each target must read back as the raw bytes decoded with
errors="replace" (one U+FFFD per maximal ill-formed subpart). Then HTTP/2
:path values with ill-formed UTF-8 (python3-h2): each answered and logged,
or, with a control byte or a space, reset by nghttp2. Every request is
accounted for: answered over HTTP/1, logged or refused, or reset. Without
python3-h2 for this python, exit 77 (skipped) once the HTTP/1 half passed.

Everything listens on 127.0.0.1 and every wait is bounded.
"""
import collections
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from obs_support import fail, free_port, get, time_scale, wait_for_port

REQUESTS = 100_000
CONNECTIONS = 10
BATCH = 200  # requests pipelined per send on a connection
# The mix, one request each per round of len(MIX): (request, status, method, target, decision).
MIX = [
    (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200, "GET", "/", None),
    (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200, "GET", "/", None),
    (b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 200, "HEAD", "/", None),
    (b"GET /?status=503 HTTP/1.1\r\nHost: a\r\n\r\n", 503, "GET", "/?status=503", "status=503"),
    (b"GET /?status=201 HTTP/1.1\r\nHost: a\r\n\r\n", 201, "GET", "/?status=201", "status=201"),
    (b"GET /nope HTTP/1.1\r\nHost: a\r\n\r\n", 404, "GET", "/nope", None),
    (b"GET /nope?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 404, "GET", "/nope?x=1", None),
    (b"GET / HTTP/1.1\r\nHost: a\r\nX-Hello-Shape: status=500\r\n\r\n", 500, "GET", "/", "status=500"),
]
FIELDS = {"time", "peer", "worker", "method", "target", "protocol", "status", "bytes", "service_us"}
DEADLINE_S = 60 * time_scale()  # for the whole load


class Server:
    """hello-sanic with the log to `log_path` in `log_format`, and --admin."""

    def __init__(self, build, log_path, log_format, workers=2, extra=()):
        self.port, self.admin = free_port(), free_port()
        self.proc = subprocess.Popen(
            [os.path.join(build, "hello-sanic"), "-H", "127.0.0.1", "-p", str(self.port),
             "-w", str(workers), "--shape", f"--access-log={log_path}",
             "--access-log-format", log_format, "--admin", f"127.0.0.1:{self.admin}", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not wait_for_port(self.port, 10) or not wait_for_port(self.admin, 10):
            self.proc.kill()
            fail(f"hello-sanic did not listen: {self.proc.communicate()[1]}")

    def metrics(self):
        text = get(f"http://127.0.0.1:{self.admin}/metrics")
        found = {}
        for m in re.finditer(r'^(hello_http_requests_total|hello_access_log_lines_dropped_total)'
                             r'\{worker="(\d+)"(?:,code="(\w+)")?\} (\d+)$', text, re.M):
            found[(m.group(1), int(m.group(2)), m.group(3))] = int(m.group(4))
        return found

    def stop(self):
        """SIGTERM; the log is flushed by the time it exits 0."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("hello-sanic did not stop within 20 s of SIGTERM")
        if self.proc.returncode != 0:
            fail(f"hello-sanic exited {self.proc.returncode}: {err}")
        return err


def answers_in(data):
    # Every answer starts with its status line; no body holds one.
    return data.count(b"HTTP/1.1 ")


def load(port):
    """REQUESTS requests of MIX over CONNECTIONS keep-alive connections,
    BATCH pipelined at a time; returns the expected count by status and the
    clients' ports."""
    expected = collections.Counter()
    per_connection = REQUESTS // CONNECTIONS
    assert per_connection * CONNECTIONS == REQUESTS and per_connection % BATCH == 0
    assert BATCH % len(MIX) == 0
    batch = b"".join(m[0] for m in MIX) * (BATCH // len(MIX))
    for m in MIX:
        expected[m[1]] += REQUESTS // len(MIX)
    socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(CONNECTIONS)]
    ports = {s.getsockname()[1] for s in socks}
    end = time.monotonic() + DEADLINE_S
    try:
        for _ in range(per_connection // BATCH):
            for s in socks:
                s.sendall(batch)
            for s in socks:
                got, tail = 0, b""
                while got < BATCH:
                    if time.monotonic() > end:
                        fail(f"the load took over {DEADLINE_S} s")
                    data = s.recv(1 << 20)
                    if not data:
                        fail("the server closed a connection")
                    # A status line split across two reads counts once.
                    joined = tail + data
                    got += answers_in(joined) - answers_in(tail)
                    tail = joined[-8:]
                if got != BATCH:
                    fail(f"{got} answers to a batch of {BATCH}")
    finally:
        for s in socks:
            s.close()
    return expected, ports


def check_json_line(line, ports, by_target):
    try:
        r = json.loads(line)
    except ValueError as e:
        fail(f"a line json does not parse ({e}): {line!r}")
    keys = set(r)
    if keys != FIELDS and keys != FIELDS | {"shape_decision"}:
        fail(f"fields {sorted(keys)}: {line!r}")
    t = datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%f%z")
    if not r["time"].endswith("Z") or len(r["time"]) != 24:
        fail(f"time not RFC 3339 UTC to the millisecond: {line!r}")
    if abs((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()) > 120:
        fail(f"time is not now: {line!r}")
    host, _, port = r["peer"].rpartition(":")
    if host != "127.0.0.1" or int(port) not in ports:
        fail(f"peer is not one of the client's sockets: {line!r}")
    want = by_target.get((r["method"], r["target"], r["status"]))
    if want is None:
        fail(f"no request of the mix gives {line!r}")
    if r.get("shape_decision") != want[4]:
        fail(f"shape_decision should be {want[4]!r}: {line!r}")
    if r["protocol"] != "HTTP/1.1" or r["worker"] not in (0, 1):
        fail(f"protocol or worker: {line!r}")
    body = 0 if r["method"] == "HEAD" else len(b"Hello!!!") if r["status"] != 404 else None
    if not isinstance(r["bytes"], int) or (body is not None and r["bytes"] != body):
        fail(f"bytes: {line!r}")
    if not isinstance(r["service_us"], float) or not 0 <= r["service_us"] < 10e6:
        fail(f"service_us: {line!r}")
    return r


def run_load(build, tmp, log_format):
    path = os.path.join(tmp, f"access.{log_format}")
    server = Server(build, path, log_format)
    started = time.monotonic()
    expected, ports = load(server.port)
    seconds = time.monotonic() - started
    metrics = server.metrics()
    server.stop()
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    if lines[-1] != "":
        fail("the log does not end in a line end")
    lines.pop()
    print(f"{log_format}: {REQUESTS} requests in {seconds:.1f} s, {len(lines)} lines")
    if len(lines) != REQUESTS:
        fail(f"{len(lines)} {log_format} lines for {REQUESTS} requests")
    dropped = sum(v for (name, _, _), v in metrics.items() if name.endswith("dropped_total"))
    if dropped != 0:
        fail(f"{dropped} lines dropped")
    by_status = collections.Counter()
    by_worker_class = collections.Counter()
    if log_format == "json":
        by_target = {(m[2], m[3], m[1]): m for m in MIX}
        for line in lines:
            r = check_json_line(line, ports, by_target)
            by_status[r["status"]] += 1
            by_worker_class[(r["worker"], f"{r['status'] // 100}xx")] += 1
    else:
        clf = re.compile(r'^127\.0\.0\.1 - - \[[^]]+\] "(GET|HEAD) (\S+) HTTP/1\.1" (\d{3}) (\d+|-)$')
        for line in lines:
            m = clf.match(line)
            if not m:
                fail(f"a CLF line does not match: {line!r}")
            by_status[int(m.group(3))] += 1
    if by_status != expected:
        fail(f"{log_format} counts by status {dict(by_status)}, sent {dict(expected)}")
    # /metrics counts by worker and class; the JSON lines say which worker.
    classes = collections.Counter()
    for (name, worker, code), v in metrics.items():
        if name == "hello_http_requests_total" and v:
            classes[(worker, code)] += v
            if log_format == "json" and by_worker_class[(worker, code)] != v:
                fail(f"worker {worker} {code}: /metrics {v}, JSON lines {by_worker_class[(worker, code)]}")
    if sum(classes.values()) != REQUESTS:
        fail(f"/metrics counts {sum(classes.values())} requests")
    print(f"{log_format}: by status {dict(sorted(by_status.items()))}; /metrics {dict(sorted(classes.items()))}")
    return by_status


def test_load(build):
    tmp = tempfile.mkdtemp(prefix="hello-jsonlog-")
    try:
        json_counts = run_load(build, tmp, "json")
        clf_counts = run_load(build, tmp, "clf")
        if json_counts != clf_counts:
            fail(f"JSON {dict(json_counts)} and CLF {dict(clf_counts)} differ")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def hostile_requests():
    """(raw request, the target as sent) pairs; the target None where the
    header value is the hostile part."""
    out = []
    # Every byte but those that end a target (space, CR, LF, '#' ends only
    # the path) in the middle of one: llhttp refuses some (a 400, logged
    # without a request line), and the rest are logged as the target.
    for b in range(256):
        if b in (0x20, 0x0d, 0x0a):
            continue
        target = b"/a" + bytes([b]) + b"z"
        out.append((b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n", target))
    for target in (b'/"quoted"\\back\\slash', b'/\\"', b"/%22%5C", b"/caf\xc3\xa9",
                   b"/\xc3(", b"/\xff\xfe", b"/\xed\xa0\x80", b"/\xe2\x82", b"/\xf0\x9f\x98",
                   b"/\xc0\xaf", b"/\x7f\x7f", b'/?status=503&q="\xff\\',
                   b"/" + b"a" * 254 + "é".encode(),  # cut inside the character at 256 bytes
                   b"/" + b"\xff" * 600, b"http://a/\"x\\y\xff"):
        out.append((b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n", target))
    hostile_value = b'"q\\uote\\"\t\xff\xfe\xc3(\x80 '
    for name in (b"User-Agent", b"Referer", b"X-Forwarded-For", b"X-Hello-Shape"):
        out.append((b"GET / HTTP/1.1\r\nHost: a\r\n" + name + b": " + hostile_value + b"\r\n\r\n",
                    None))
    out.append((b"GET / HTTP/1.0\r\nUser-Agent: " + hostile_value + b"\r\n\r\n", None))
    return out


def exchange(port, request):
    """Sends `request` and reads until the server closes or 2 s pass: one
    answer (Connection: close below), or the 400 that closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request.replace(b"Host: a\r\n", b"Host: a\r\nConnection: close\r\n", 1)
                  if b"Host: a\r\n" in request else request)
        s.settimeout(2)
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return data


H2_PATHS = [b"/\xff\xfe", b"/caf\xc3\xa9", b'/"q\\', b"/\xed\xa0\x80", b"/\xe2\x82", b"/\x80/\xc0\xaf",
            b"/" + b"a" * 254 + "\u20ac".encode(), b"/" + b"\xf0\x9f\x98" * 300,
            b"/\x01\x7f", b"/a b"]


def nghttp2_refuses(path):
    """nghttp2 resets the stream of a :path with a control byte or a space
    (RFC 9113 section 8.2.1's field value rules): no answer, no line."""
    return any(b <= 0x20 or b == 0x7f for b in path)


def h2_exchange(port, paths):
    """Over one HTTP/2 connection (h2c, prior knowledge), each of `paths`
    in turn, sent as it is; returns the status of each (None: the stream
    was reset: nghttp2 refuses a :path with a control byte or a space)."""
    import h2.config
    import h2.connection
    import h2.events
    conn = h2.connection.H2Connection(h2.config.H2Configuration(
        client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False))
    statuses = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        conn.initiate_connection()
        s.sendall(conn.data_to_send())
        for path in paths:
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"http"), (b":authority", b"a"),
                                    (b":path", path)], end_stream=True)
            s.sendall(conn.data_to_send())
            status, ended = None, False
            end = time.monotonic() + 5
            while not ended and time.monotonic() < end:
                data = s.recv(65536)
                if not data:
                    fail("the server closed the HTTP/2 connection")
                for e in conn.receive_data(data):
                    if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid:
                        status = int(dict(e.headers)[b":status"])
                    if isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) and e.stream_id == sid:
                        ended = True
                s.sendall(conn.data_to_send())
            if not ended:
                fail(f"no end to the HTTP/2 stream of {path!r}")
            statuses.append(status)
    return statuses


def test_hostile(build):
    tmp = tempfile.mkdtemp(prefix="hello-jsonlog-")
    try:
        path = os.path.join(tmp, "access.json")
        server = Server(build, path, "json", workers=1, extra=["--h2"])
        requests = hostile_requests()
        statuses = []
        for request, _ in requests:
            answer = exchange(server.port, request)
            m = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
            statuses.append(int(m.group(1)) if m else None)
        for (request, _), status in zip(requests, statuses):
            if status is None:
                fail(f"no answer over HTTP/1 to {request!r}")
        try:
            import h2  # noqa: F401 (Debian's python3-h2)
            h2_sent = True
        except ImportError:
            h2_sent = False
        if h2_sent:
            requests += [(b"HTTP/2 " + p, p) for p in H2_PATHS]
            h2_statuses = h2_exchange(server.port, H2_PATHS)
            for h2_path, status in zip(H2_PATHS, h2_statuses):
                if (status is None) != nghttp2_refuses(h2_path):
                    fail(f"HTTP/2 :path {h2_path!r}: " + ("reset, not answered" if status is None else
                                                      f"answered {status}, not reset by nghttp2"))
            statuses += h2_statuses
        server.stop()
        with open(path, "rb") as f:
            raw = f.read()
        lines = raw.split(b"\n")
        if lines.pop() != b"":
            fail("the log does not end in a line end")
        answered = [s for s in statuses if s is not None]
        if len(lines) != len(answered):
            fail(f"{len(lines)} lines for {len(answered)} answers")
        accepted = refused = ill_formed = 0
        for (request, target), status, line in zip(
                [r for r, s in zip(requests, statuses) if s is not None], answered, lines):
            try:
                r = json.loads(line.decode("utf-8"))  # strict: the line is UTF-8 and JSON
            except ValueError as e:
                fail(f"a line does not parse ({e}) for {request!r}: {line!r}")
            if set(r) - {"shape_decision"} != FIELDS:
                fail(f"fields {sorted(r)} for {request!r}")
            if r["status"] != status:
                fail(f"status {r['status']} logged, {status} sent, for {request!r}")
            if r["method"] is None:
                # Refused by llhttp: the 400 has no request line to log.
                if status != 400:
                    fail(f"no request line logged for a {status}: {request!r}")
                refused += 1
                continue
            accepted += 1
            if target is not None:
                want = target[:256].decode("utf-8", "replace")
                if r["target"] != want:
                    fail(f"target {r['target']!r}, want {want!r} for {request!r}")
                ill_formed += "\ufffd" in want
            want_protocol = "HTTP/2.0" if request.startswith(b"HTTP/2 ") else \
                "HTTP/1.0" if b" HTTP/1.0\r\n" in request else "HTTP/1.1"
            if r["protocol"] != want_protocol:
                fail(f"protocol {r['protocol']}, want {want_protocol}, for {request!r}")
        print(f"hostile: {len(lines)} lines parse: {accepted} with the target read back exactly "
              f"({ill_formed} of them ill-formed UTF-8, replaced), {refused} requests refused by "
              f"llhttp (400, no request line), {len(statuses) - len(answered)} HTTP/2 streams "
              "refused by nghttp2 (reset, no line)")
        # llhttp lets 0x21-0x7e but none of 0x80-0xff through in a target:
        # some 90 of the byte-by-byte targets and the lists' ASCII ones.
        if accepted < 90:
            fail(f"only {accepted} hostile requests were accepted: the test tests too little")
        # Every request accounted for: a line read back, a 400 without a
        # request line, or an HTTP/2 stream that nghttp2 reset.
        reset = len(statuses) - len(answered)
        if accepted + refused + reset != len(requests):
            fail(f"{len(requests)} requests, but {accepted} accepted, {refused} refused, {reset} reset")
        return h2_sent
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    what = sys.argv[2] if len(sys.argv) > 2 else "load"
    if what == "load":
        test_load(build)
    elif not test_hostile(build):
        # The HTTP/1 half passed; without the HTTP/2 half that is no pass.
        print(f"SKIP: the HTTP/2 :path values were not sent: no python3-h2 for {sys.executable} "
              "(scripts/setup installs it)")
        sys.exit(77)
    print("PASS")


if __name__ == "__main__":
    main()
