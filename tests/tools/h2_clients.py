#!/usr/bin/python3
"""Real HTTP/2 clients against every persona with --h2 (issue 23, item 1).

For each framework persona of servers/personas.txt, starts hello-NAME --h2
on a free loopback port, and again with --h2 --tls and a certificate made
with openssl for the run, and has each client GET the persona's fixture
endpoints (tests/fixtures/personas/NAME/: /, /index, /json, and /nope for a
404). Every client must get the status and body that the same server gives
over HTTP/1.1 on the same port, and that HTTP/1.1 answer must still be the
fixture's bytes (Date aside): every fixture case is replayed over plain TCP
and over TLS without ALPN.

The clients: curl --http2-prior-knowledge, curl --http2 -k (TLS) and curl
--http2 in clear (Upgrade: h2c), nghttp -nv (prior knowledge and TLS) and
nghttp -nvu (Upgrade), h2load -n 200 -c 4 -m 10 (h2c and h2), python3-h2
(h2_clients/python_client.py, prior knowledge and TLS), Go's net/http
(h2_clients/go_client.go, TLS only: Go 1.19 has no h2c without x/net) and
Node's http2 (h2_clients/node_client.mjs, both). A client that is not
installed is one "skipped" line, and the run a skip (77), not a pass. How each client is run and its output
read is h2_clients/runners.py; this file starts the servers, finds the
clients and reports.

Upgrade: h2c: an Upgrade client must get the 101 and then the right
HTTP/2 answer; --upgrade pending (for a server without Upgrade) reports a
right answer over HTTP/1.1 without the 101 as "expected to fail" instead.

Loopback only; every client and server is bounded by a timeout, and every
server is stopped (SIGTERM, then SIGKILL) even when a check fails, and
dies with this process if it is killed (PR_SET_PDEATHSIG).

Exit status: 0 when every check ran and none failed, 1 when a check
failed, 2 for bad arguments, 77 (ctest's skip) when none failed but a
client was not installed (scripts/test installs them all). Go's h2c,
impossible offline, is a "skipped" line that does not make the run a skip.

    usage: h2_clients.py [--bin-dir DIR] [--work-dir DIR] [--persona NAME]...
                         [--client SUBSTRING]... [--upgrade pending|expect]
                         [--jobs N] [--verbose]
"""
import argparse
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "h2_clients"))
from runners import (CLIENTS, FAIL, PASS, PERSONAS_FILE, SKIP, SOURCE, XFAIL, Result,  # noqa: E402
                     check_fixtures, curl, curl_upgrade, h2load, http1_answer, json_client, nghttp,
                     persona_paths, read_personas, run, shell_line)

# --- what is installed ---------------------------------------------------------


class Context:
    """The machine: which clients are there, the certificate, the Go build."""

    def __init__(self, args):
        self.bin_dir = args.bin_dir
        self.upgrade = args.upgrade
        self.tmp = tempfile.mkdtemp(prefix="h2_clients.")
        self.skipped = []
        self.go_build_error = ""
        self.have = {tool: shutil.which(tool) is not None
                     for tool in ("curl", "nghttp", "h2load", "node", "go", "openssl")}
        self.python_h2 = self.find_python_h2()
        self.go_client = self.build_go(args.work_dir) if self.have["go"] else None
        self.tls_flags = self.make_certificate()
        # nghttp reads the system's CA bundle on every start (150 ms here);
        # pointed at the run's certificate instead it starts in 10 ms. It
        # checks nothing either way: nghttp only warns.
        self.tls_client_env = None
        if self.tls_flags[0] == "--tls-cert":
            self.tls_client_env = dict(os.environ, SSL_CERT_FILE=self.tls_flags[1])

    def find_python_h2(self):
        for python in (sys.executable, "/usr/bin/python3"):
            if python and os.path.exists(python) and run([python, "-c", "import h2"])[0] == 0:
                return python
        return None

    def build_go(self, work_dir):
        """go build of go_client.go into work_dir, offline, its cache beside it."""
        os.makedirs(work_dir, exist_ok=True)
        source = os.path.join(CLIENTS, "go_client.go")
        binary = os.path.join(work_dir, "go_client")
        if os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source):
            return binary
        env = dict(os.environ, GOCACHE=os.path.join(work_dir, "gocache"), GOPROXY="off",
                   GO111MODULE="off", GOFLAGS="", GOPATH=os.path.join(work_dir, "gopath"))
        try:
            p = subprocess.run(["go", "build", "-o", binary, source], env=env, capture_output=True,
                               timeout=120)
        except subprocess.TimeoutExpired:
            self.go_build_error = "go build timed out after 120 s"
            return None
        if p.returncode != 0:
            self.go_build_error = p.stderr.decode(errors="replace").strip()
            return None
        return binary

    def make_certificate(self):
        """--tls-cert and --tls-key for a P-256 certificate made for the run;
        without openssl, the server's own made at start (--tls)."""
        if not self.have["openssl"]:
            self.skipped.append("openssl: not installed; --tls makes the certificate at start instead")
            return ["--tls"]
        cert, key = os.path.join(self.tmp, "cert.pem"), os.path.join(self.tmp, "key.pem")
        rc, _out, err = run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                             "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-keyout", key,
                             "-out", cert, "-subj", "/CN=localhost",
                             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        if rc != 0:
            raise SystemExit(f"h2_clients: openssl req failed: {err.decode(errors='replace')}")
        return ["--tls-cert", cert, "--tls-key", key]

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def checks(ctx):
    """(label, server mode 'clear' or 'tls', tool needed or None, function(ctx, port, expected))."""
    go_h2c = ("Go 1.19's standard library has no h2c by prior knowledge (that needs "
              "golang.org/x/net/http2, not available offline)")
    node = os.path.join(CLIENTS, "node_client.mjs")
    python = os.path.join(CLIENTS, "python_client.py")
    clear = lambda port: f"http://127.0.0.1:{port}"
    tls = lambda port: f"https://127.0.0.1:{port}"
    return [
        ("http/1.1 fixtures", "clear", None, lambda c, port, e, p: check_fixtures(p, port, False)),
        ("curl --http2-prior-knowledge", "clear", "curl",
         lambda c, port, e, p: curl(c, clear(port), e, ["--http2-prior-knowledge"])),
        ("curl --http2 (Upgrade)", "clear", "curl",
         lambda c, port, e, p: curl_upgrade(c, clear(port), e)),
        ("nghttp -nv (h2c)", "clear", "nghttp", lambda c, port, e, p: nghttp(c, clear(port), e)),
        ("nghttp -nvu (Upgrade)", "clear", "nghttp",
         lambda c, port, e, p: nghttp(c, clear(port), e, upgrade=True)),
        ("h2load h2c", "clear", "h2load", lambda c, port, e, p: h2load(c, clear(port), e, "h2c")),
        ("python3-h2 (h2c)", "clear", "python3-h2",
         lambda c, port, e, p: json_client(c, [c.python_h2, python, str(port), *e], e, "h2c")),
        ("go net/http (h2c)", "clear", f"skip:{go_h2c}", None),
        ("node http2 (h2c)", "clear", "node",
         lambda c, port, e, p: json_client(c, ["node", node, clear(port), *e], e, "h2c")),
        ("http/1.1 fixtures (TLS)", "tls", None, lambda c, port, e, p: check_fixtures(p, port, True)),
        ("http/1.1 fixtures (TLS, ALPN http/1.1)", "tls", None,
         lambda c, port, e, p: check_fixtures(p, port, True, ["http/1.1"])),
        ("curl --http2 -k (TLS)", "tls", "curl",
         lambda c, port, e, p: curl(c, tls(port), e, ["--http2", "-k"])),
        ("nghttp -nv (TLS)", "tls", "nghttp", lambda c, port, e, p: nghttp(c, tls(port), e)),
        ("h2load h2 (TLS)", "tls", "h2load", lambda c, port, e, p: h2load(c, tls(port), e, "h2")),
        ("python3-h2 (TLS)", "tls", "python3-h2",
         lambda c, port, e, p: json_client(c, [c.python_h2, python, "--tls", str(port), *e], e, "h2")),
        ("go net/http (TLS)", "tls", "go",
         lambda c, port, e, p: json_client(c, [c.go_client, str(port), *e], e, "HTTP/2.0")),
        ("node http2 (TLS)", "tls", "node",
         lambda c, port, e, p: json_client(c, ["node", node, tls(port), *e], e, "h2")),
    ]


def missing_reason(ctx, tool):
    """Why a check cannot run here, or None."""
    if tool is None:
        return None
    if tool.startswith("skip:"):
        return tool[len("skip:"):]
    if tool == "python3-h2":
        return None if ctx.python_h2 else "python3-h2 not installed (no python3 here imports h2)"
    if tool == "go" and ctx.have["go"] and ctx.go_client is None:
        return None  # installed but the build failed: reported as a failure
    return None if ctx.have[tool] else f"{tool} not installed"


# --- the servers -----------------------------------------------------------------


def die_with_parent():
    # PR_SET_PDEATHSIG (1): the server gets SIGKILL if this driver dies first.
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


class Server:
    """hello-NAME --h2 [TLS flags] on 127.0.0.1, a free port (-p 0)."""

    def __init__(self, ctx, persona, flags):
        self.argv = [os.path.join(ctx.bin_dir, f"hello-{persona}"), "-H", "127.0.0.1", "-p", "0",
                     "--h2", *flags]
        self.err_path = os.path.join(ctx.tmp, f"{persona}.{os.getpid()}.{id(self)}.err")
        self.err = open(self.err_path, "wb+")
        self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.err,
                                        preexec_fn=die_with_parent)
        self.port = None
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.process.poll() is None:
            with open(self.err_path, "rb") as f:
                m = re.search(rb"^listening on https?://127\.0\.0\.1:(\d+)", f.read(), re.M)
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.02)

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace").strip()

    def stop(self):
        """SIGTERM, then SIGKILL after 5 s; None if it exited with 0, else why not."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = "killed (no exit 5 s after SIGTERM)"
        self.err.close()
        return None if code == 0 else f"{shell_line(self.argv)} exited with {code}: {self.stderr()[-2000:]}"


def run_persona(ctx, persona, selected):
    """Every selected check against one persona: {label: Result}."""
    results = {}
    paths = persona_paths(persona)
    for mode, flags in (("clear", []), ("tls", ctx.tls_flags)):
        mine = [c for c in selected if c[1] == mode]
        runnable = []
        for label, _mode, tool, fn in mine:
            reason = missing_reason(ctx, tool)
            if reason:
                results[label] = Result(SKIP, reason)
            else:
                runnable.append((label, tool, fn))
        if not runnable:
            continue
        server = Server(ctx, persona, flags)
        try:
            if server.port is None:
                for label, _tool, _fn in runnable:
                    results[label] = Result(FAIL, f"{shell_line(server.argv)} did not start: {server.stderr()}")
                continue
            expected = {p: http1_answer(server.port, mode == "tls", p) for p in paths}
            for label, tool, fn in runnable:
                if tool == "go" and ctx.go_client is None:
                    results[label] = Result(FAIL, f"go build failed: {ctx.go_build_error}")
                    continue
                try:
                    results[label] = fn(ctx, server.port, expected, persona)
                except Exception as e:  # a client's output we could not read is that client's failure
                    results[label] = Result(FAIL, f"{type(e).__name__}: {e}")
        finally:
            stopped = server.stop()
        if stopped:
            for label, _tool, _fn in runnable:
                if results[label].outcome != FAIL:
                    results[label] = Result(FAIL, stopped)
    return results


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", default=os.path.join(SOURCE, "build"),
                        help="where the hello-* binaries are (default: build/)")
    parser.add_argument("--work-dir", help="where go_client and its Go cache are built "
                                           "(default: BIN_DIR/tests/h2_clients)")
    parser.add_argument("--persona", action="append", help="only these personas")
    parser.add_argument("--client", action="append", help="only checks whose label holds this")
    parser.add_argument("--upgrade", choices=("pending", "expect"), default="expect",
                        help="pending: a missing 101 is expected to fail; expect: a failure")
    parser.add_argument("--jobs", type=int, default=2, help="personas checked at once")
    parser.add_argument("--verbose", action="store_true", help="print each pass's detail too")
    args = parser.parse_args(argv)
    args.work_dir = args.work_dir or os.path.join(args.bin_dir, "tests", "h2_clients")
    personas = read_personas()
    for p in args.persona or []:
        if p not in personas:
            print(f"h2_clients: no framework persona {p!r} in {PERSONAS_FILE}", file=sys.stderr)
            return 2
    personas = args.persona or personas
    missing_binaries = [p for p in personas if not os.access(os.path.join(args.bin_dir, f"hello-{p}"), os.X_OK)]
    if missing_binaries:
        print(f"h2_clients: no hello-{missing_binaries[0]} in {args.bin_dir} (build first)", file=sys.stderr)
        return 2

    started = time.monotonic()
    ctx = Context(args)
    try:
        selected = [c for c in checks(ctx) if not args.client or any(s in c[0] for s in args.client)]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            per_persona = dict(zip(personas, pool.map(lambda p: run_persona(ctx, p, selected), personas)))
    finally:
        ctx.close()
    return report(ctx, personas, selected, per_persona, args.verbose, time.monotonic() - started)


def report(ctx, personas, selected, per_persona, verbose, seconds):
    width = max(len(c[0]) for c in selected)
    made = "a certificate made with openssl" if ctx.tls_flags[0] != "--tls" else "the server's own"
    print(f"h2_clients: {len(personas)} personas with --h2 on 127.0.0.1, in clear and with --tls ({made})")
    print(" " * width + "  " + " ".join(f"{p:>9}" for p in personas))
    counts = {PASS: 0, FAIL: 0, XFAIL: 0, SKIP: 0}
    notes = []
    for label, *_ in selected:
        row = [per_persona[p][label] for p in personas]
        print(f"{label:<{width}}  " + " ".join(f"{r.outcome:>9}" for r in row))
        for p, r in zip(personas, row):
            counts[r.outcome] += 1
        # One line per distinct reason, naming the personas it applies to.
        by_reason = {}
        for p, r in zip(personas, row):
            if r.outcome != PASS or verbose:
                by_reason.setdefault((r.outcome, r.detail), []).append(p)
        for (outcome, detail), who in by_reason.items():
            where = "every persona" if len(who) == len(personas) and len(personas) > 1 else " ".join(who)
            notes.append((outcome, f"{label} [{where}]: {detail}"))
    names = {FAIL: "FAILED", XFAIL: "expected to fail", SKIP: "skipped", PASS: "passed"}
    for outcome in (FAIL, XFAIL, SKIP, PASS):
        for o, line in notes:
            if o == outcome:
                print(f"{names[outcome]}: {line}")
    for line in ctx.skipped:
        print(f"note: {line}")
    summary = (f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[XFAIL]} expected to fail, "
               f"{counts[SKIP]} skipped, {seconds:.1f} s")
    if counts[FAIL]:
        print(f"h2_clients: FAIL ({summary})")
        return 1
    not_installed = [label for label, _m, tool, _f in selected
                     if tool is not None and not tool.startswith("skip:")
                     and any(per_persona[p][label].outcome == SKIP for p in personas)]
    if not_installed:
        print(f"h2_clients: skipped, not installed for: {', '.join(not_installed)} ({summary})")
        return 77
    print(f"h2_clients: ok ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
