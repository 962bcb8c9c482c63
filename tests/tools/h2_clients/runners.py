"""What tests/tools/h2_clients.py runs and how it reads each answer.

The personas' endpoints and their HTTP/1.1 answers (fixtures replayed on
the --h2 port, and the live answer every HTTP/2 client must match), and
one function per client: it runs the client on every path, parses what
the client printed, and returns a Result (pass, FAIL, xfail, skip and a
line saying why). No server is started here.
"""
import base64
import json
import os
import re
import socket
import ssl
import subprocess
import tempfile
import time

CLIENTS = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(CLIENTS)))
PERSONAS_FILE = os.path.join(SOURCE, "servers", "personas.txt")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "personas")

# Every client process gets this long; a run of every client against one
# persona takes about 2 s here, so a client near it has hung.
CLIENT_TIMEOUT = 10
# The path every persona answers with 404 (the fixtures' missing route).
MISSING = "/nope"

PASS, FAIL, XFAIL, SKIP = "pass", "FAIL", "xfail", "skip"


class Result:
    """One client in one mode against one persona."""

    def __init__(self, outcome, detail=""):
        self.outcome = outcome
        self.detail = detail


# --- personas and their answers -------------------------------------------


def read_personas():
    """The framework personas of servers/personas.txt, with their ports."""
    personas = []
    with open(PERSONAS_FILE) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, _port, kind = line.split()[:3]
            if kind == "framework":
                personas.append(name)
    if not personas:
        raise SystemExit(f"h2_clients: no framework persona in {PERSONAS_FILE}")
    return personas


def fixture_cases(persona):
    """(name, request bytes, response bytes, 'open' or 'close') for every case.
    The WebSocket handshakes (websocket.*) are HTTP/1.1's alone, and left
    out: over HTTP/2 (no RFC 8441) their path is one the persona does not
    know (docs/websocket.md); the fixture test replays them."""
    folder = os.path.join(FIXTURES, persona)
    cases = []
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".request") or entry.startswith("websocket."):
            continue
        base = os.path.join(folder, entry[: -len(".request")])
        with open(base + ".request", "rb") as f:
            request = f.read()
        with open(base + ".response", "rb") as f:
            response = f.read()
        with open(base + ".after") as f:
            after = f.read().strip()
        cases.append((entry[: -len(".request")], request, response, after))
    return cases


def persona_paths(persona):
    """The GET paths of the persona's fixture cases, and /nope (404)."""
    paths = []
    for _name, request, _response, _after in fixture_cases(persona):
        method, target = request.split(b" ", 2)[:2]
        if method == b"GET" and target.decode() not in paths:
            paths.append(target.decode())
    if MISSING not in paths:
        paths.append(MISSING)
    # "/" first where it is a route: h2load and the Upgrade checks use paths[0].
    return sorted(paths, key=lambda p: (p == MISSING, p != "/", p))


def mask_date(data):
    return re.sub(rb"(?im)^(date:[ \t]*)[^\r\n]*", rb"\1<date>", data)


def parse_http1(data):
    """(status, body) of one HTTP/1.1 answer, its chunked body de-chunked."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    fields = {l.split(b":", 1)[0].strip().lower(): l.split(b":", 1)[1].strip() for l in lines[1:]}
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        plain = b""
        while True:
            size_line, _, body = body.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            plain += body[:size]
            body = body[size + 2:]
        body = plain
    elif b"content-length" in fields:
        body = body[: int(fields[b"content-length"])]
    return status, body


# --- HTTP/1.1 on the same port ----------------------------------------------


def connect(port, tls, alpn=None):
    sock = socket.create_connection(("127.0.0.1", port), timeout=3)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        if alpn:
            context.set_alpn_protocols(alpn)
        sock = context.wrap_socket(sock, server_hostname="localhost")
    return sock


def read_exactly(sock, n):
    data = b""
    deadline = time.monotonic() + 3
    while len(data) < n and time.monotonic() < deadline:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def read_to_eof(sock):
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ssl.SSLError, ConnectionResetError):
        pass
    return data


def http1_answer(port, tls, path):
    """The server's HTTP/1.1 (status, body) for GET path: what HTTP/2 must match."""
    with connect(port, tls) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        return parse_http1(read_to_eof(sock))


def check_fixtures(persona, port, tls, alpn=None):
    """Every fixture case, byte for byte (Date aside), on the --h2 port."""
    failures = []
    cases = fixture_cases(persona)
    if not cases:
        return Result(FAIL, f"no fixture case in {os.path.join(FIXTURES, persona)}")
    for name, request, response, after in cases:
        try:
            with connect(port, tls, alpn) as sock:
                sock.sendall(request)
                got = read_exactly(sock, len(response))
                if mask_date(got) != mask_date(response):
                    failures.append(f"{name}: got {got!r}")
                    continue
                if after == "close":
                    sock.settimeout(3)
                    rest = read_to_eof(sock)
                    if rest:
                        failures.append(f"{name}: bytes after the answer: {rest!r}")
        except (OSError, socket.timeout) as e:
            failures.append(f"{name}: {e}")
    if failures:
        return Result(FAIL, "; ".join(failures))
    return Result(PASS, f"{len(cases)} cases")


# --- the clients ---------------------------------------------------------------


def run(argv, cwd=None, env=None):
    """Runs a client; (exit status, stdout, stderr), status -1 at the timeout."""
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=CLIENT_TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return -1, e.stdout or b"", (e.stderr or b"") + b" (timed out)"


def shell_line(argv):
    return " ".join(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else repr(a) for a in argv)


def compare(path, expected, status, body, proto=None, want_proto=None):
    """None if (status, body) is the HTTP/1.1 answer; else what differs."""
    if want_proto is not None and proto != want_proto:
        return f"{path}: protocol {proto!r}, not {want_proto!r}"
    if (status, body) != expected:
        return f"{path}: got {status} {body!r}, HTTP/1.1 says {expected[0]} {expected[1]!r}"
    return None


def verdict(problems, passed_detail):
    problems = [p for p in problems if p]
    return Result(FAIL, "; ".join(problems)) if problems else Result(PASS, passed_detail)


def curl(ctx, url, expected, flags):
    problems = []
    with tempfile.TemporaryDirectory(dir=ctx.tmp) as tmp:
        for path, answer in expected.items():
            argv = ["curl", "-sS", "--max-time", "5", *flags, "-o", os.path.join(tmp, "body"),
                    "-w", "%{http_code} %{http_version}", url + path]
            rc, out, err = run(argv)
            if rc != 0:
                problems.append(f"{shell_line(argv)}: exit {rc}: {err.decode(errors='replace').strip()}")
                continue
            code, version = out.decode().split()
            with open(os.path.join(tmp, "body"), "rb") as f:
                body = f.read()
            problems.append(compare(path, answer, int(code), body, version, "2"))
    return verdict(problems, f"{len(expected)} paths over HTTP/2")


def curl_upgrade(ctx, url, expected):
    """curl --http2 in clear: Upgrade: h2c on the request, h2 after a 101."""
    problems, pending = [], []
    with tempfile.TemporaryDirectory(dir=ctx.tmp) as tmp:
        for path, answer in expected.items():
            argv = ["curl", "-sS", "--max-time", "5", "--http2", "-o", os.path.join(tmp, "body"),
                    "-w", "%{http_code} %{http_version}", url + path]
            rc, out, err = run(argv)
            if rc != 0:
                problems.append(f"{shell_line(argv)}: exit {rc}: {err.decode(errors='replace').strip()}")
                continue
            code, version = out.decode().split()
            with open(os.path.join(tmp, "body"), "rb") as f:
                body = f.read()
            wrong = compare(path, answer, int(code), body)
            if wrong:
                problems.append(wrong)
            elif version != "2":
                # curl says 1.1 only when no 101 came: the answer was HTTP/1.1's.
                pending.append(path)
    return upgrade_verdict(ctx, problems, pending, expected)


def upgrade_verdict(ctx, problems, pending, expected):
    problems = [p for p in problems if p]
    if problems:
        return Result(FAIL, "; ".join(problems))
    if pending:
        detail = (f"upgrade: not supported yet (answered HTTP/1.1 without 101, right answer "
                  f"over HTTP/1.1: {' '.join(pending)})")
        return Result(FAIL if ctx.upgrade == "expect" else XFAIL, detail)
    return Result(PASS, f"{len(expected)} paths upgraded to HTTP/2")


NGHTTP_SEND_HEADERS = re.compile(r"send HEADERS frame <.*stream_id=(\d+)>")
NGHTTP_PATH = re.compile(r"^\s+:path: (.*)$")
NGHTTP_STATUS = re.compile(r"recv \(stream_id=(\d+)\) :status: (\d+)")
NGHTTP_DATA = re.compile(r"recv DATA frame <length=(\d+), flags=0x[0-9a-f]+, stream_id=(\d+)>")
NGHTTP_RST = re.compile(r"recv RST_STREAM frame .*|recv GOAWAY frame .*\n.*error_code=(?!NO_ERROR).*")


def parse_nghttp(log, first_path=None):
    """{path: (status, data length)} from nghttp -nv's log. Stream 1 is the
    upgraded request (nghttp -u sends no HEADERS for it)."""
    path_of, status_of, length_of = {}, {}, {}
    if first_path is not None:
        path_of[1] = first_path
    stream = None
    for line in log.splitlines():
        if m := NGHTTP_SEND_HEADERS.search(line):
            stream = int(m.group(1))
        elif stream is not None and (m := NGHTTP_PATH.match(line)):
            path_of[stream] = m.group(1)
            stream = None
        elif m := NGHTTP_STATUS.search(line):
            status_of[int(m.group(1))] = int(m.group(2))
        elif m := NGHTTP_DATA.search(line):
            length_of[int(m.group(2))] = length_of.get(int(m.group(2)), 0) + int(m.group(1))
    return {path: (status_of.get(s), length_of.get(s, 0)) for s, path in path_of.items()}


def nghttp(ctx, url, expected, upgrade=False):
    """nghttp -nv (or -nvu) on every path on one connection: each stream's
    :status and DATA length; then plain `nghttp URL` (-u) for each body."""
    flag = "-nvu" if upgrade else "-nv"
    argv = ["nghttp", flag, "-t", "5", *[url + p for p in expected]]
    rc, out, err = run(argv, env=ctx.tls_client_env)
    log = out.decode(errors="replace")
    problems, pending = [], []
    if upgrade and "HTTP Upgrade failed" in err.decode(errors="replace"):
        # No 101: nghttp shows the HTTP/1.1 answer it got and stops.
        first, answer = next(iter(expected.items()))
        response = log.partition("HTTP Upgrade response\n")[2].encode()
        if response and parse_http1(response) == answer:
            pending.append(first)
        else:
            problems.append(f"{shell_line(argv)}: HTTP Upgrade failed, and the answer was {response!r}")
        return upgrade_verdict(ctx, problems, pending, expected)
    if rc != 0 or "Some requests were not processed" in err.decode(errors="replace"):
        return Result(FAIL, f"{shell_line(argv)}: exit {rc}: {err.decode(errors='replace').strip()}")
    if m := NGHTTP_RST.search(log):
        return Result(FAIL, f"{shell_line(argv)}: {m.group(0).strip()}")
    seen = parse_nghttp(log, next(iter(expected)) if upgrade else None)
    for path, answer in expected.items():
        status, length = seen.get(path, (None, 0))
        if (status, length) != (answer[0], len(answer[1])):
            problems.append(f"{path}: :status {status} and {length} bytes of DATA, HTTP/1.1 says "
                            f"{answer[0]} and {len(answer[1])} bytes ({shell_line(argv)})")
            continue
        body_argv = ["nghttp", "-t", "5", *(["-u"] if upgrade else []), url + path]
        rc, body, err = run(body_argv, env=ctx.tls_client_env)
        problems.append(f"{shell_line(body_argv)}: exit {rc}: {err.decode(errors='replace').strip()}"
                        if rc != 0 else compare(path, answer, status, body))
    if upgrade:
        return upgrade_verdict(ctx, problems, pending, expected)
    return verdict(problems, f"{len(expected)} paths on one connection")


H2LOAD_REQUESTS = re.compile(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded")
H2LOAD_PROTOCOL = re.compile(r"Application protocol: (\S+)")
H2LOAD_DATA = re.compile(r"^traffic: .*\((\d+)\) data", re.M)


def h2load(ctx, url, expected, want_protocol):
    path, answer = next(iter(expected.items()))
    argv = ["h2load", "-n", "200", "-c", "4", "-m", "10", "-T", "5", url + path]
    rc, out, err = run(argv)
    text = out.decode(errors="replace")
    requests = H2LOAD_REQUESTS.search(text)
    protocol = H2LOAD_PROTOCOL.search(text)
    summary = next((l for l in text.splitlines() if l.startswith("requests:")), "no requests line")
    if rc != 0 or not requests or not protocol:
        return Result(FAIL, f"{shell_line(argv)}: exit {rc}: {summary} {err.decode(errors='replace').strip()}")
    if protocol.group(1) != want_protocol:
        return Result(FAIL, f"{shell_line(argv)}: application protocol {protocol.group(1)}")
    if answer[0] != 200 or requests.group(4) != "200":
        return Result(FAIL, f"{shell_line(argv)}: {summary}")
    # h2load shows no body; its DATA byte count must be 200 bodies.
    data = H2LOAD_DATA.search(text)
    if not data or int(data.group(1)) != 200 * len(answer[1]):
        return Result(FAIL, f"{shell_line(argv)}: {data.group(0) if data else 'no traffic line'}, "
                            f"not 200 x {len(answer[1])} bytes of data")
    return Result(PASS, f"{path}: {summary}")


def json_client(ctx, argv, expected, want_proto):
    """A client of h2_clients/ that prints one JSON line per path."""
    rc, out, err = run(argv)
    answers = {}
    for line in out.decode(errors="replace").splitlines():
        try:
            a = json.loads(line)
            answers[a["path"]] = a
        except (ValueError, KeyError):
            pass
    if rc != 0 or not answers:
        # A traceback's last lines say enough.
        return Result(FAIL, f"{shell_line(argv)}: exit {rc}: {out.decode(errors='replace').strip()} "
                            f"{err.decode(errors='replace').strip()[-600:]}")
    problems = []
    for path, answer in expected.items():
        a = answers.get(path)
        if a is None:
            problems.append(f"{path}: no answer ({shell_line(argv)})")
        elif a.get("error"):
            problems.append(f"{path}: {a['error']} ({shell_line(argv)})")
        else:
            problems.append(compare(path, answer, int(a["status"]), base64.b64decode(a["body"]),
                                    a["proto"], want_proto))
    return verdict(problems, f"{len(expected)} paths on one connection, {want_proto}")
