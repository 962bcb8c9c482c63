#!/usr/bin/python3
"""Captures, byte for byte, what the real frameworks answer on their WebSocket
echo: the 101 handshake (plain and with permessage-deflate offered), bad
handshakes, a plain GET, an echoed text and binary frame, the close handshake,
an unmasked frame and messages at and over each framework's size limit.

    scripts/peers/websocket/capture_ws.py [--out DIR] [FRAMEWORK ...]

FRAMEWORK is any of tornado, aiohttp, starlette, tomcat (default: all whose
Debian packages are installed). Each server runs niced on a free loopback
port from apps/ beside this script and is stopped before the next starts.
The client side is stdlib sockets only, so the request bytes are exactly
what is written in each CASE.request and the answer exactly what came back.

Per framework, in DIR/FRAMEWORK/ (default captures/ beside this script):
  CASE.request  the bytes sent (for frame cases: the frame bytes)
  CASE.bin      the bytes received (big echoes: see CASE.txt, payloads elided)
  CASE.txt      both, escaped, plus the frames parsed and whether the server
                closed the TCP connection afterwards ("after")
  versions.txt  the Debian package versions the capture ran on
The Date header (where a framework sends one) is whatever the clock said.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from benchlib.procs import free_port, listening, stop_group  # noqa: E402
from benchlib.targets import TOMCAT_HOME, TOMCAT_SOURCE, render_tomcat_server_xml  # noqa: E402
from ws_wire import (ACCEPT, OPCODES, Conn, close_payload, describe_frames, elide, escape, escape_http,  # noqa: F401
                     frame, good_headers, head_end, http_complete, parse_frames, request)

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "apps")
MiB = 1024 * 1024
PY = "/usr/bin/python3"
JARS = ["/usr/share/java/tomcat10-servlet-api.jar", "/usr/share/java/tomcat10-websocket-api.jar",
        "/usr/share/java/tomcat10-websocket-client-api.jar"]

# limit: the default maximum message size (bytes) from the framework's source;
# None where nothing bounds it (uvicorn's wsproto protocol ignores ws_max_size).
FRAMEWORKS = {
    "tornado": dict(app="tornado_ws.py", path="/websocket", limit=10 * MiB,
                    pkgs=["python3-tornado"]),
    "aiohttp": dict(app="aiohttp_ws.py", path="/ws", limit=4 * MiB,
                    pkgs=["python3-aiohttp"]),
    "starlette": dict(app="starlette_ws.py", path="/ws", limit=None,
                      pkgs=["python3-starlette", "uvicorn", "python3-uvicorn", "python3-wsproto",
                            "python3-h11", "python3-websockets", "python3-httptools", "python3-uvloop"]),
    "tomcat": dict(app=None, path="/myHandler", limit=8192,
                   pkgs=["tomcat10-common", "libtomcat10-java", "default-jdk-headless"]),
}
START_TIMEOUT = 120.0


# --- packages ---------------------------------------------------------------

def pkg_version(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Status}|${Version}", pkg],
                         capture_output=True, text=True)
    if out.returncode or not out.stdout.startswith("install ok installed"):
        return None
    return out.stdout.split("|", 1)[1]


# --- frames -----------------------------------------------------------------

class Recorder:
    def __init__(self, out, name, info):
        self.dir = os.path.join(out, name)
        os.makedirs(self.dir, exist_ok=True)
        self.name, self.info, self.summary = name, info, []

    def save(self, case, sent, got, after, note="", http=False, sent_payload=None, sent_desc=None):
        with open(os.path.join(self.dir, case + ".request"), "wb") as f:
            f.write(sent if len(sent) <= 65536 else elide(sent))
        stored = got if len(got) <= 65536 else elide(got)
        with open(os.path.join(self.dir, case + ".bin"), "wb") as f:
            f.write(stored)
        txt = [f"# {self.name} {case}", ""]
        if note:
            txt += [note, ""]
        txt.append(f"sent ({len(sent)} bytes):")
        if http:
            txt.append(escape_http(sent))
        else:
            txt += describe_frames(sent)[0] if sent_desc is None else [sent_desc]
        txt += ["", f"received ({len(got)} bytes{', payloads over 4096 bytes elided in .bin' if stored != got else ''}):"]
        frames_part = got
        if got.startswith(b"HTTP/"):
            headp, _, rest = got.partition(b"\r\n\r\n")
            if headp.startswith(b"HTTP/1.1 101"):
                txt.append(escape_http(headp + b"\r\n\r\n"))
                frames_part = rest
            else:
                txt.append(escape_http(got))
                frames_part = b""
            if re.search(rb"(?im)^date:", headp):
                txt.append("(the Date value is the capture time: variable)")
        if frames_part:
            txt.append("frames:")
            txt += describe_frames(frames_part, sent_payload)[0]
        if not got:
            txt.append("(nothing)")
        txt += ["", f"after: {after}"]
        with open(os.path.join(self.dir, case + ".txt"), "w") as f:
            f.write("\n".join(txt) + "\n")
        first = got.split(b"\r\n", 1)[0] if got.startswith(b"HTTP/") else b""
        fr, _ = parse_frames(frames_part)
        fdesc = ",".join(OPCODES.get(f[2], str(f[2])) + (f"({struct.unpack('!H', f[5][:2])[0]})" if f[2] == 8 and len(f[5]) >= 2 else f"[{len(f[5])}]") for f in fr)
        self.summary.append(f"{case:18} {first.decode(errors='replace'):32} {fdesc:40} after={after}")
        print(f"capture_ws: {self.name} {case}: {first.decode(errors='replace')} {fdesc} after={after}", file=sys.stderr)


def upgrade(port, path, extra=()):
    c = Conn(port)
    req = request(path, port, *good_headers(extra))
    c.send(req)
    got = c.take(until=head_end)
    return c, req, got


def capture(rec, port, path, limit):
    # (a) the handshake, then on the same connection: text, binary, close.
    c, req, got = upgrade(port, path)
    ok = got.startswith(b"HTTP/1.1 101")
    rec.save("upgrade", req, got, "open" if ok else c.after(), http=True,
             note=f"Expected Sec-WebSocket-Accept: {ACCEPT}")
    if ok:
        for case, op, payload in (("echo-text", 1, b"hello"), ("echo-binary", 2, bytes(range(0, 256, 17)))):
            f = frame(op, payload)
            err = c.send(f)
            rec.save(case, f, c.take(), c.after(0.1), note=err or "", sent_payload=payload)
        f = frame(8, close_payload(1000))
        err = c.send(f)
        got = c.take(quiet=1.0)
        rec.save("close-1000", f, got, c.after(2.0), note=err or "")
    c.close()

    # (b) permessage-deflate offered, then "hello" twice (uncompressed from us)
    # to see whether and how the echo comes back compressed.
    ext = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"
    c, req, got = upgrade(port, path, [ext])
    ok = got.startswith(b"HTTP/1.1 101")
    rec.save("deflate", req, got, "open" if ok else c.after(), http=True,
             note=f"Offer: {ext}")
    if ok:
        f = frame(1, b"hello") + frame(1, b"hello")
        c.send(f)
        rec.save("deflate-echo", f, c.take(), c.after(0.1),
                 note="two uncompressed 'hello' text frames (RSV1 clear); a compressed echo has rsv=100 "
                      "and the payload is raw DEFLATE without the 00 00 ff ff tail (RFC 7692 7.2.1); "
                      "with context takeover the second echo is shorter")
        f = frame(8, close_payload(1000))
        c.send(f)
        c.take(quiet=1.0)
    c.close()

    # (c)-(g) bad handshakes and a plain GET.
    bad = {
        "version-8": good_headers(version="8"),
        "no-key": good_headers(key=False),
        "connection-keep-alive": good_headers(connection="keep-alive"),
        "upgrade-foo": good_headers(upgrade="foo"),
        "plain-get": [],
    }
    for case, headers in bad.items():
        c = Conn(port)
        req = request(path, port, *headers)
        c.send(req)
        got = c.take(until=http_complete)
        rec.save(case, req, got, c.after(1.5) if not got.startswith(b"HTTP/1.1 101") else "open", http=True)
        c.close()

    # An unmasked frame from the client (RFC 6455 5.1: the server MUST close).
    c, req, got = upgrade(port, path)
    if got.startswith(b"HTTP/1.1 101"):
        f = frame(1, b"hello", masked=False)
        c.send(f)
        rec.save("unmasked", f, c.take(quiet=1.0), c.after(2.0))
    c.close()

    # Big messages: 2 MiB, and exactly at / one byte over the default limit.
    sizes = [("big-2mib", 2 * MiB)]
    if limit is not None:
        sizes += [("at-limit", limit), ("over-limit", limit + 1)]
    else:
        sizes += [("16mib-plus-1", 16 * MiB + 1)]
    for case, size in sizes:
        c, req, got = upgrade(port, path)
        if not got.startswith(b"HTTP/1.1 101"):
            c.close()
            continue
        payload = (b"0123456789abcdef" * (size // 16 + 1))[:size]
        f = frame(2, payload)
        t0 = time.monotonic()
        err = c.send(f)
        # Wait for the whole echo (or a close frame, or EOF).
        def done(buf, size=size):
            frames, _ = parse_frames(buf)
            return any(fr[2] == 8 for fr in frames) or sum(len(fr[5]) for fr in frames if fr[2] in (0, 1, 2)) >= size
        got = c.take(until=done, cap=60.0)
        got += c.take(quiet=0.5, cap=3.0) if c.eof is None else b""
        took = time.monotonic() - t0
        frames, _ = parse_frames(got)
        reply = b""
        if any(fr[2] == 8 for fr in frames):
            code = [fr[5] for fr in frames if fr[2] == 8][0][:2]
            reply = frame(8, code)
            c.send(reply)  # complete the close handshake
        after = c.after(2.0)
        rec.save(case, f, got, after, sent_payload=payload,
                 sent_desc=f"  one masked binary frame, payload {size} bytes ({size / MiB:.6f} MiB), "
                           f"header {escape(f[:14])}",
                 note=(err + "\n" if err else "") + f"took {took:.2f} s" +
                      (f"; then sent a close frame back with the same code ({escape(reply)})" if reply else ""))
        if not reply and after == "open":
            cf = frame(8, close_payload(1000))
            c.send(cf)
            c.take(quiet=0.5, cap=3.0)
        c.close()


# --- servers ----------------------------------------------------------------

class Server:
    def __init__(self, name, info, tmp):
        self.name, self.info, self.tmp = name, info, tmp
        self.port = free_port()
        self.log = os.path.join(tmp, name + ".log")
        self.env = dict(os.environ, PORT=str(self.port), PYTHONDONTWRITEBYTECODE="1")
        self.ready = None
        if name == "tomcat":
            self._prepare_tomcat()
            self.cmd = ["nice", "-n", "10", os.path.join(TOMCAT_HOME, "bin", "catalina.sh"), "run"]
        else:
            self.cmd = ["nice", "-n", "10", PY, os.path.join(APPS, info["app"])]
        self.proc = None

    def _prepare_tomcat(self):
        base = os.path.join(self.tmp, "base")
        classes = os.path.join(base, "webapps", "ROOT", "WEB-INF", "classes")
        for sub in ("conf", "logs", "temp", "work"):
            os.makedirs(os.path.join(base, sub))
        os.makedirs(classes)
        src = os.path.join(APPS, "tomcat_ws")
        subprocess.run(["nice", "javac", "-cp", ":".join(JARS), "-d", classes,
                        os.path.join(src, "EchoEndpoint.java"), os.path.join(src, "EchoListener.java"),
                        os.path.join(TOMCAT_SOURCE, "HelloServlet.java")],
                       check=True, timeout=180)
        shutil.copy(os.path.join(src, "web.xml"), os.path.join(base, "webapps", "ROOT", "WEB-INF"))
        with open(os.path.join(TOMCAT_SOURCE, "server.xml.in")) as f:
            # Spring Boot starts 10 request threads (as capture_tomcat_h2 uses).
            conf = render_tomcat_server_xml(f.read(), self.port, 10)
        with open(os.path.join(base, "conf", "server.xml"), "w") as f:
            f.write(conf)
        self.env.update(CATALINA_HOME=TOMCAT_HOME, CATALINA_BASE=base, CATALINA_TMPDIR=os.path.join(base, "temp"),
                        CATALINA_OPTS="-Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true")
        self.ready = b"Server startup in"

    def start(self):
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         env=self.env, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start: {self.tail()}")
            started = True
            if self.ready:
                with open(self.log, "rb") as f:
                    started = self.ready in f.read()
            if started and listening(self.port):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not start within {START_TIMEOUT:.0f} s: {self.tail()}")

    def tail(self):
        with open(self.log, "rb") as f:
            return " | ".join(f.read().decode("utf-8", "replace").strip().splitlines()[-5:])

    def stop(self):
        # Its own process group (start_new_session): catalina.sh execs java,
        # nice execs python; signal that group only.
        stop_group(self.proc, 30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "captures"))
    parser.add_argument("frameworks", nargs="*", default=list(FRAMEWORKS))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.frameworks:
        info = FRAMEWORKS[name]
        versions = {p: pkg_version(p) for p in info["pkgs"]}
        needed = [p for p in info["pkgs"][:1 if name != "starlette" else 3]]
        missing = [p for p in needed if versions.get(p) is None and not (p == "uvicorn" and versions.get("python3-uvicorn"))]
        if missing:
            print(f"capture_ws: {name}: skipped, not installed: {', '.join(missing)}", file=sys.stderr)
            continue
        rec = Recorder(args.out, name, info)
        with tempfile.TemporaryDirectory(prefix=f"capture-ws-{name}-") as tmp:
            server = Server(name, info, tmp)
            try:
                server.start()
                capture(rec, server.port, info["path"], info["limit"])
            finally:
                server.stop()
                shutil.copy(server.log, os.path.join(rec.dir, "server.log"))
        with open(os.path.join(rec.dir, "versions.txt"), "w") as f:
            f.write(f"path {info['path']}\n")
            for p, v in versions.items():
                f.write(f"{p} {v or '(not installed)'}\n")
            f.write(f"python {sys.version.split()[0]} ({PY})\n")
        with open(os.path.join(rec.dir, "SUMMARY.txt"), "w") as f:
            f.write("\n".join(rec.summary) + "\n")


if __name__ == "__main__":
    main()
