#!/usr/bin/python3
"""Real WebSocket clients against every persona with an echo endpoint, in
clear and over TLS (README.md beside this file): python3-websockets,
python3-wsproto, Node's ws, gorilla/websocket and curl's handshake. Starts
each hello-NAME of BUILD_DIR on an ephemeral loopback port, runs the
clients one after the other (curl beside them), stops it by its PID.

    run.py BUILD_DIR [--cache DIR] [--persona NAME]... [--client NAME]...

One line per check, `[persona transport] PASS|FAIL|INFO|SKIP client ...`,
then a table. Exit 0 only if every check passed; Node's ws is skipped (a
SKIP line, not a failure) when node or npm is missing or npm cannot
install it. --cache (default BUILD_DIR/peers/ws_clients) keeps the Go
client's binary and Node's ws between runs.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PYTHON = "/usr/bin/python3"
NODE_APPS = os.path.join(ROOT, "scripts", "peers", "websocket", "apps")
GOCODE = "/usr/share/gocode"
# name, path, largest message, permessage-deflate agreed (docs/websocket.md)
PERSONAS = [("sanic", "/feed", 1 << 20, False), ("tornado", "/websocket", 10 << 20, False),
            ("aiohttp", "/ws", (4 << 20) - 1, True), ("starlette", "/ws", 16 << 20, True),
            ("spring", "/myHandler", 8 << 10, False)]
CLIENTS = ("websockets", "wsproto", "node-ws", "gorilla", "curl")
CLIENT_SECONDS = 100  # one client's run against one server
ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  # RFC 6455 1.3's key dGhlIHNhbXBsZSBub25jZQ==


def node_ws(build, cache):
    """NODE_PATH with the pinned ws in it, or a SKIP reason (str, False)."""
    with open(os.path.join(NODE_APPS, "package-lock.json")) as f:
        want = json.load(f)["packages"]["node_modules/ws"]["version"]
    if not shutil.which("node"):
        return "node is not installed (nodejs)", False
    places = [os.path.join(build, "peers", "node_ws"), os.path.join(ROOT, "build", "peers", "node_ws"),
              os.path.join(cache, "node_ws")]
    for place in places:
        try:
            with open(os.path.join(place, "node_modules", "ws", "package.json")) as f:
                if json.load(f).get("version") == want:
                    return os.path.join(place, "node_modules"), True
        except (OSError, ValueError):
            pass
    npm = shutil.which("npm")
    if not npm:
        return "npm is not installed (it comes with nodejs)", False
    where = places[-1]
    os.makedirs(where, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(NODE_APPS, name), where)
    try:
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--fetch-retries=0",
                               "--fetch-timeout=20000"], cwd=where, capture_output=True, text=True, timeout=90)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "npm ci of ws %s did not finish: %s" % (want, e), False
    if done.returncode:
        first = ((done.stderr or done.stdout).strip().splitlines() or ["exit %d" % done.returncode])[0]
        return "npm ci of ws %s failed: %s" % (want, first), False
    return os.path.join(where, "node_modules"), True


def gorilla(cache):
    """The Go client's binary, built offline in GOPATH mode against Debian's
    gorilla/websocket (as scripts/benchlib/ws_targets.py builds its echo),
    or (error, False)."""
    source = os.path.join(HERE, "gorilla_client")
    out = os.path.join(cache, "gorilla")
    binary = os.path.join(out, "gorilla_client")
    main_go = os.path.join(source, "main.go")
    if os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(main_go):
        return binary, True
    if not shutil.which("go"):
        return "go is not installed (golang-go)", False
    if not os.path.isdir(os.path.join(GOCODE, "src", "github.com", "gorilla", "websocket")):
        return "gorilla/websocket is not installed (golang-github-gorilla-websocket-dev)", False
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOCACHE=os.path.join(out, "gocache"),
               GOPATH="%s:%s" % (GOCODE, os.path.join(out, "gopath")), HOME=out, CGO_ENABLED="0")
    try:
        done = subprocess.run(["go", "build", "-o", binary, "."], cwd=source, env=env, capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "go build: %s" % e, False
    if done.returncode:
        return "go build failed: " + " | ".join(done.stderr.strip().splitlines()[-3:]), False
    return binary, True


class Server:
    """hello-NAME on 127.0.0.1, an ephemeral port, with --tls if asked."""

    def __init__(self, binary, tls, tmp):
        self.err = os.path.join(tmp, "server.err")
        argv = [binary, "-H", "127.0.0.1", "-p", "0"] + (["--tls"] if tls else [])
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        self.port = None
        deadline = time.monotonic() + 10
        while self.port is None and time.monotonic() < deadline and self.proc.poll() is None:
            m = re.search(r"^listening on https?://127\.0\.0\.1:(\d+)", self.log(), re.M)
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.05)

    def log(self):
        with open(self.err, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM by PID, SIGKILL after 5 s; the exit status, or None if
        it had to be killed."""
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def curl_start(url, tls):
    argv = ["curl", "-sS", "-i", "-N", "--http1.1", "--max-time", "2", "-H", "Connection: Upgrade",
            "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
            "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="] + (["-k"] if tls else []) + [url]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def curl_finish(proc):
    """curl's handshake: the 101 and RFC 6455's Sec-WebSocket-Accept
    (curl then waits for frames until --max-time: exit 28)."""
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    head = out.decode("latin-1").split("\r\n\r\n", 1)[0]
    status = head.split("\r\n", 1)[0]
    accept = re.search(r"^sec-websocket-accept:\s*(\S+)", head, re.M | re.I)
    lines = ["%s curl: handshake status %s" % ("PASS" if re.match(r"HTTP/1\.1 101( |$)", status) else "FAIL",
                                               status or "(none: %s)" % err.decode(errors="replace").strip())]
    got = accept.group(1) if accept else "(no Sec-WebSocket-Accept)"
    lines.append("%s curl: Sec-WebSocket-Accept %s" % ("PASS" if got == ACCEPT else "FAIL", got))
    return lines


def run_client(name, argv, env):
    """The client's PASS, FAIL and INFO lines; a FAIL line of our own when it
    timed out, crashed or checked nothing."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                              timeout=CLIENT_SECONDS, errors="replace")
        out, err, rc = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timed out after %d s" % CLIENT_SECONDS, "timeout"
    lines = [ln for ln in out.splitlines() if ln.split(" ", 1)[0] in ("PASS", "FAIL", "INFO")]
    bad = rc != 0 and not any(ln.startswith("FAIL") for ln in lines)
    if bad or not any(ln.startswith("PASS") for ln in lines):
        tail = " | ".join(err.strip().splitlines()[-3:])
        lines.append("FAIL %s: exit %s with %d checks (%s)" % (name, rc, len(lines), tail))
    return lines


def clients_run(url, args, tls, tools, chosen):
    """Every chosen client against the server at url: {client: [lines]};
    curl's handshake runs beside the others."""
    results = {}
    curl = curl_start(url.replace("ws", "http", 1), tls) if "curl" in chosen else None
    commands = {"websockets": [PYTHON, os.path.join(HERE, "py_websockets.py")],
                "wsproto": [PYTHON, os.path.join(HERE, "py_wsproto.py")],
                "node-ws": ["node", os.path.join(HERE, "node_ws.js")],
                "gorilla": [tools.get("gorilla", ("",))[0]]}
    try:
        for client, command in commands.items():
            if client not in chosen:
                continue
            found, ok = tools.get(client, (None, True))
            if not ok:
                word = "SKIP" if client == "node-ws" else "FAIL"
                results[client] = ["%s %s: %s" % (word, client, found)]
                continue
            env = dict(os.environ, NODE_PATH=found) if client == "node-ws" else dict(os.environ)
            results[client] = run_client(client, command + args, env)
    finally:
        if curl:
            results["curl"] = curl_finish(curl)
    return results


def persona_run(build, persona, tls, tools, chosen):
    """One server, started, run against and stopped: {client: [lines]}."""
    name, path, limit, deflate = persona
    with tempfile.TemporaryDirectory(prefix="ws-clients-") as tmp:
        server = Server(os.path.join(build, "hello-" + name), tls, tmp)
        try:
            if server.port is None:
                return {"server": ["FAIL server: did not start (exit %s): %s" % (server.proc.poll(),
                                                                              server.log().strip()[-300:])]}
            url = "%s://127.0.0.1:%d%s" % ("wss" if tls else "ws", server.port, path)
            results = clients_run(url, [url, str(limit), "yes" if deflate else "no"], tls, tools, chosen)
            alive = server.proc.poll() is None
        finally:
            code = server.stop()
        if not alive or code not in (0, -signal.SIGTERM):
            results["server"] = ["FAIL server: %s (exit %s): %s" % ("died during the clients" if not alive else
                                 "did not stop cleanly on SIGTERM", code, server.log().strip()[-300:])]
    return results


def table(rows):
    """persona x transport, and per client passed/checked."""
    print("\n%-10s %-6s %s" % ("persona", "tls", "  ".join("%-12s" % c for c in CLIENTS)))
    for (name, transport), results in rows:
        cells = []
        for client in CLIENTS:
            lines = results.get(client, [])
            passed = sum(ln.startswith("PASS") for ln in lines)
            failed = sum(ln.startswith("FAIL") for ln in lines)
            skipped = any(ln.startswith("SKIP") for ln in lines)
            cells.append("%-12s" % ("SKIP" if skipped else "-" if not lines else
                                    "%d/%d%s" % (passed, passed + failed, " FAIL" if failed else "")))
        server = " server FAIL" if "server" in results else ""
        print("%-10s %-6s %s%s" % (name, transport, "  ".join(cells), server))


def main():
    # A TERM (timeout, ctest) ends the run through the finally blocks that stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("ws_real_clients: terminated"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--cache")
    parser.add_argument("--persona", action="append", choices=[p[0] for p in PERSONAS])
    parser.add_argument("--client", action="append", choices=CLIENTS)
    opts = parser.parse_args()
    build = os.path.abspath(opts.build)
    cache = os.path.abspath(opts.cache or os.path.join(build, "peers", "ws_clients"))
    chosen = opts.client or CLIENTS
    started = time.monotonic()
    tools = {}
    if "node-ws" in chosen:
        tools["node-ws"] = node_ws(build, cache)
        if not tools["node-ws"][1]:
            print("SKIP node-ws: " + tools["node-ws"][0], flush=True)
    if "gorilla" in chosen:
        tools["gorilla"] = gorilla(cache)
    rows = []
    for persona in PERSONAS:
        if opts.persona and persona[0] not in opts.persona:
            continue
        for tls in (False, True):
            transport = "tls" if tls else "clear"
            results = persona_run(build, persona, tls, tools, chosen)
            for lines in results.values():
                for ln in lines:
                    print("[%s %s] %s" % (persona[0], transport, ln), flush=True)
            rows.append(((persona[0], transport), results))
    table(rows)
    every = [ln for _, results in rows for lines in results.values() for ln in lines]
    counts = {w: sum(ln.startswith(w) for ln in every) for w in ("PASS", "FAIL", "SKIP")}
    print("\nws_real_clients: %(PASS)d passed, %(FAIL)d failed, %(SKIP)d skipped" % counts,
          "in %.0f s" % (time.monotonic() - started))
    return 1 if counts["FAIL"] or not counts["PASS"] else 0


if __name__ == "__main__":
    sys.exit(main())
