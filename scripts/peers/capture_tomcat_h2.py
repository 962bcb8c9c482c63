#!/usr/bin/python3
"""Captures what Tomcat 10.1 sends over HTTP/2, as Spring Boot 3 runs it with
server.http2.enabled: the frames, their order and the header lists the spring
persona's --h2 must reproduce. One JSON file per endpoint and case:

    scripts/peers/capture_tomcat_h2.py [--out DIR] [--threads N]

It compiles tomcat_hello's servlet, starts Debian's Tomcat on a private
CATALINA_BASE with tomcat_hello/server.xml.in plus Tomcat's HTTP/2 upgrade
protocol on its connector and a second, TLS, connector beside it (a
self-signed ECDSA P-256 certificate made by the openssl CLI), captures every
case on loopback with h2_recorder's client and stops Tomcat. The cases, the
client's fixed frames and what is normalised are in
tests/fixtures/personas/spring/h2/README.md.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    from h2_recorder import MODES, capture, dumps
except ImportError as e:
    raise SystemExit(f"capture_tomcat_h2: {e.name} is missing: Debian's python3 with python3-h2 "
                     "(scripts/setup --bench)")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib.targets import (ROOT, TOMCAT_HOME, TOMCAT_SOURCE, javac_command, render_tomcat_server_xml,  # noqa: E402
                              tomcat_h2_server_xml)
from benchlib.procs import free_port, listening  # noqa: E402
from benchlib.tls import certificate_command  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "personas", "spring", "h2")
ENDPOINTS = (("text", "/"), ("json", "/json"))
METHODS = ("GET", "HEAD")
# The JVM and Tomcat take a few seconds to start, more on a busy CPU.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0


class Tomcat:
    """catalina.sh run on a private CATALINA_BASE, niced, its log in a file."""

    def __init__(self, tmp, threads):
        self.tmp = tmp
        self.base = os.path.join(tmp, "base")
        self.port, self.tls_port = free_port(), free_port()
        self.catalina = os.path.join(TOMCAT_HOME, "bin", "catalina.sh")
        self.env = dict(os.environ, CATALINA_HOME=TOMCAT_HOME, CATALINA_BASE=self.base,
                        CATALINA_TMPDIR=os.path.join(self.base, "temp"),
                        # Exit, rather than run without a listener, when a port cannot be bound.
                        CATALINA_OPTS="-Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true")
        app = os.path.join(self.base, "webapps", "ROOT", "WEB-INF")
        for sub in ("conf", "logs", "temp", "work", os.path.join(app, "classes")):
            os.makedirs(os.path.join(self.base, sub))
        run(javac_command(os.path.join(app, "classes")), "javac")
        shutil.copy(os.path.join(TOMCAT_SOURCE, "web.xml"), app)
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        run(certificate_command("ecdsa", cert, key), "openssl")
        with open(os.path.join(TOMCAT_SOURCE, "server.xml.in")) as f:
            # h2c on the connector, and h2 on a copy of it on tls_port.
            conf = tomcat_h2_server_xml(render_tomcat_server_xml(f.read(), self.port, threads), cert, key,
                                        self.tls_port)
        with open(os.path.join(self.base, "conf", "server.xml"), "w") as f:
            f.write(conf)
        self.proc = None

    def version(self):
        out = run([self.catalina, "version"], "catalina.sh version", env=self.env)
        return re.search(r"Server version: *(.*)", out).group(1).strip()

    def start(self):
        self.log = os.path.join(self.tmp, "catalina.out")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(["nice", "-n", "10", self.catalina, "run"], stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"capture_tomcat_h2: Tomcat exited at start ({self.tail()})")
            with open(self.log, "rb") as f:
                started = b"Server startup in" in f.read()
            # Tomcat binds its ports before it deploys the servlet: wait for
            # its last line of startup, then for the ports.
            if started and all(listening(p) for p in (self.port, self.tls_port)):
                return
            time.sleep(0.2)
        raise SystemExit(f"capture_tomcat_h2: Tomcat did not start within {START_TIMEOUT:.0f} s ({self.tail()})")

    def tail(self):
        with open(self.log, "rb") as f:
            lines = [line for line in f.read().decode("utf-8", "replace").splitlines()
                     if line.strip() and not line.lstrip().startswith("at ")]
        return " | ".join(lines[-3:])

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT)


def run(cmd, what, **kw):
    """A helper command's stdout; one line and exit when it fails."""
    if shutil.which(cmd[0]) is None:
        raise SystemExit(f"capture_tomcat_h2: {cmd[0]} is not installed (scripts/setup --bench)")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"capture_tomcat_h2: {what} did not finish within 120 s")
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or [f"status {done.returncode}"])[-1]
        raise SystemExit(f"capture_tomcat_h2: {what} failed: {tail}")
    return done.stdout


def cases():
    """(name, mode, method, path, goaway) of every case: each endpoint and
    method in each mode, then GET / in each mode closed with no GOAWAY."""
    for route, path in ENDPOINTS:
        for method in METHODS:
            for mode in MODES:
                yield f"{route}.{method.lower()}-{mode}", mode, method, path, True
    for mode in MODES:
        yield f"text.get-{mode}-nogoaway", mode, "GET", "/", False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=OUT, help="where the JSON files go (default: %(default)s)")
    # Spring Boot starts its Tomcat with 10 request threads (minSpareThreads).
    parser.add_argument("--threads", type=int, default=10, help="Tomcat's request threads (default: %(default)s)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="capture-tomcat-h2-") as tmp:
        tomcat = Tomcat(tmp, args.threads)
        version = tomcat.version()
        try:
            tomcat.start()
            for case, mode, method, path, goaway in cases():
                port = tomcat.tls_port if mode == "h2-tls" else tomcat.port
                try:
                    record = dict(case=case, server=version, **capture(mode, method, path, port, goaway))
                except OSError as e:
                    raise SystemExit(f"capture_tomcat_h2: {case}: {e}")
                with open(os.path.join(args.out, case + ".json"), "w") as f:
                    f.write(dumps(record) + "\n")
                print(f"capture_tomcat_h2: {case}", file=sys.stderr)
        finally:
            tomcat.stop()


if __name__ == "__main__":
    main()
