"""Unit tests of scripts/bench --ws: ws_load's argv and the parser of its
JSON, the options --ws sets and refuses, the upgrade and probe of
benchlib.websocket against small loopback servers, the peers' builds, and
the report's targets on made-up cells."""
import base64
import contextlib
import hashlib
import io
import os
import socket
import struct
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from benchlib import needs, parsers, plan, report_ws, tools, websocket, ws_targets  # noqa: E402
from benchlib.procs import StartError  # noqa: E402
import ctest_unittest  # noqa: E402
from test_parsers import load_bench  # noqa: E402

WS_LOAD_JSON = ('{"connections": 100, "in_flight": 16, "size": 16, "binary": false, "tls": false, "seconds": 5.0, '
                '"messages": 612345, "rate": 122469.0, "errors": 0, "handshake_failures": 0, "tool_cpu_s": 4.1, '
                '"tool_busy": 0.82}')


class WsLoadTest(unittest.TestCase):
    def test_argv(self):
        argv = tools.command("ws_load", "ws16", "http://127.0.0.1:8123/feed", 100, 5)
        self.assertEqual(argv[1:], ["--host", "127.0.0.1", "--port", "8123", "--path", "/feed", "--connections",
                                    "100", "--in-flight", "16", "--size", "16", "--seconds", "5", "--warmup", "0",
                                    "--json", "@JSON@"])
        self.assertEqual(tools.command("ws_load", "ws1", "http://127.0.0.1:1/ws", 100, 5)[10], "1")
        # One libuv loop: one thread, one CPU at most, whatever the tool CPUs.
        self.assertEqual(plan.tool_load("ws_load", 4, 100), plan.Load(1, 100, 100, 1))

    def test_its_modes_are_its_own(self):
        for tool, mode in (("wrk", "ws1"), ("ws_load", "keepalive"), ("h2load", "ws16")):
            with self.assertRaises(tools.Unsupported, msg=(tool, mode)):
                tools.command(tool, mode, "http://127.0.0.1:1/", 100, 5)

    def test_parse(self):
        r = parsers.parse_ws_load(WS_LOAD_JSON)
        self.assertEqual((r["requests"], r["rps"], r["failed"], r["non2xx"]), (612345, 122469.0, 0, 0))
        self.assertEqual((r["ws_in_flight"], r["ws_connections"], r["tool_own_busy"]), (16, 100, 0.82))
        self.assertNotIn("error", r)

    def test_failures_are_counted(self):
        text = WS_LOAD_JSON.replace('"errors": 0', '"errors": 3').replace('"handshake_failures": 0',
                                                                         '"handshake_failures": 2')
        text = text.replace("}", ', "failures": {"answered 404": 2, "echo differs": 3}}')
        r = parsers.parse_ws_load(text, status=1)
        self.assertEqual((r["failed"], r["ws_errors"], r["handshake_failures"]), (5, 3, 2))
        self.assertEqual(r["error"], "ws_load: 3 connections failed, 2 did not upgrade: 2 x answered 404; "
                                     "3 x echo differs")
        none = WS_LOAD_JSON.replace('"handshake_failures": 0', '"handshake_failures": 100').replace(
            '"messages": 612345', '"messages": 0')
        self.assertIn("none of 100 connections upgraded", parsers.parse_ws_load(none, status=1)["error"])

    def test_no_run(self):
        with self.assertRaisesRegex(parsers.ParseError, "status 2.*unknown flag --bogus"):
            parsers.parse_ws_load("", status=2, output="ws_load: unknown flag --bogus\n")
        with self.assertRaisesRegex(parsers.ParseError, "did not finish"):
            parsers.parse_ws_load('{"connections": 100}', status=0)

    def test_missing_says_build_it(self):
        saved = dict(tools.BINARIES)
        try:
            tools.use_build_dir("/nonexistent")
            self.assertEqual(tools.missing("ws_load"),
                             "/nonexistent/tests/ws_load is not built (scripts/test builds it)")
        finally:
            tools.BINARIES.update(saved)


class OptionsTest(unittest.TestCase):
    def test_defaults(self):
        args = load_bench().parse_args(["--ws"], available=[0, 1])
        self.assertEqual((args.targets, args.repeat, args.duration, args.idle_connections),
                         (["sanic"], 5, 5, 2000))
        self.assertEqual(args.jobs, [("ws_load", "ws1", 100), ("ws_load", "ws16", 100), ("wrk", "keepalive", 100)])
        self.assertEqual(needs.kind_of(args), "ws")
        what, build = needs.run_needs(args)
        self.assertIsNone(build)  # ws_load is a test program: the whole build
        self.assertTrue({"wrk", "tornado", "aiohttp", "starlette", "tomcat", "gorilla", "node"} <= set(what))

    def test_quick_is_a_check(self):
        args = load_bench().parse_args(["--ws", "--quick"], available=[0, 1])
        self.assertEqual((args.targets, args.duration, args.repeat, args.idle_connections), (["sanic"], 2, 1, 200))

    def test_refused(self):
        bench = load_bench()
        for bad in (["--tls"], ["--h2"], ["--performance"], ["--requests", "100"], ["--tool", "wrk"],
                    ["--mode", "keepalive"], ["--workers", "2"], ["--peers"], ["tornado"],
                    ["--quick", "--duration", "3"]):
            err = io.StringIO()
            with self.assertRaises(SystemExit, msg=bad), contextlib.redirect_stderr(err):
                bench.parse_args(["--ws"] + bad, available=[0, 1])
            self.assertIn("--ws", err.getvalue(), bad)

    def test_ws_modes_are_no_mode_of_a_matrix(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            load_bench().parse_args(["sanic", "--mode", "ws1"], available=[0, 1])


def serve_once(answer):
    """A loopback server for one connection: `answer(conn, request head)`; returns its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run():
        conn, _ = listener.accept()
        with conn, listener:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(4096)
            answer(conn, head)
    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()[1]


def echo_server(conn, head):
    key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(
        b"sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    data = conn.recv(4096)
    length, mask = data[1] & 0x7F, data[2:6]
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(data[6:6 + length]))
    conn.sendall(b"\x89\x00" + bytes([0x81, length]) + payload)  # a ping first, then the echo
    conn.recv(4096)


class WebSocketTest(unittest.TestCase):
    def test_accept_value(self):
        # RFC 6455 section 1.3's sample.
        self.assertEqual(websocket.accept_value("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_probe_echo(self):
        self.assertIsNone(websocket.probe(serve_once(echo_server), "/ws", timeout=5))

    def test_probe_not_upgraded(self):
        port = serve_once(lambda conn, head: conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
        self.assertEqual(websocket.probe(port, "/feed", timeout=5), "answered HTTP/1.1 404 Not Found")

    def test_probe_wrong_accept(self):
        port = serve_once(lambda conn, head: conn.sendall(
            b"HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: x\r\n\r\n"))
        self.assertIn("Sec-WebSocket-Accept 'x'", websocket.probe(port, "/ws", timeout=5))

    def test_read_frame_lengths(self):
        a, b = socket.socketpair()
        with a, b:
            b.sendall(struct.pack("!BBH", 0x82, 126, 300) + b"x" * 300 + b"\x81\x01y")
            opcode, payload, rest = websocket.read_frame(a)
            self.assertEqual((opcode, len(payload)), (2, 300))
            self.assertEqual(websocket.read_frame(a, rest)[:2], (1, b"y"))


class PeersTest(unittest.TestCase):
    def test_gorilla_build_offline(self):
        cmd, env, cwd = ws_targets.gorilla_build("/tmp/out")
        self.assertEqual(cmd[1:], ["build", "-o", "/tmp/out/gorilla_echo", "."])
        self.assertEqual((env["GO111MODULE"], env["GOPATH"], cwd),
                         ("off", "/usr/share/gocode:/tmp/out/gopath", ws_targets.GORILLA_SOURCE))

    def test_node_ws_is_pinned(self):
        self.assertRegex(ws_targets.node_ws_version(), r"^\d+\.\d+\.\d+$")

    def test_missing_parts_say_which_package(self):
        saved = ws_targets.GORILLA_PACKAGE, ws_targets.Gorilla._built
        try:
            ws_targets.GORILLA_PACKAGE, ws_targets.Gorilla._built = "/nonexistent/gorilla", None
            with self.assertRaisesRegex(StartError, "golang-github-gorilla-websocket-dev"):
                ws_targets.Gorilla.build()
        finally:
            ws_targets.GORILLA_PACKAGE, ws_targets.Gorilla._built = saved
        peer = ws_targets.ws_peers(cpus="1")[0]
        with self.assertRaisesRegex(StartError, r"Tornado 6.2 did not start: Python's no_such_module_here is not "
                                                r"installed \(python3-nothing\)"):
            ws_targets.python_modules(("no_such_module_here", "python3-nothing"))(peer)
        with tempfile.TemporaryDirectory() as cache:
            with self.assertRaisesRegex(StartError, "npm ci failed"):
                ws_targets.node_ws_install(cache=cache, npm="/bin/false")

    def test_every_peer(self):
        peers = ws_targets.ws_peers(cpus="1")
        self.assertEqual(tuple(p.name for p in peers), ws_targets.WS_PEERS)
        self.assertEqual([p.path for p in peers], ["/websocket", "/ws", "/ws", "/myHandler", "/ws", "/ws"])
        starlette = peers[2]
        starlette.port = 1
        self.assertEqual(starlette.env()["UVICORN_WS"], "wsproto")


def cell(name, kind, tool, mode, variant, cpu, error=None):
    return {"target": f"hello-{name}" if kind == "persona" else name, "name": name, "kind": kind, "workers": 1,
            "tool": tool, "mode": mode, "connections": 100, "variant": variant, "rps": 1000.0 if cpu else None,
            "cpu_us_per_request": cpu, "cpu_us_runs": [cpu] * 5 if cpu else [], "runs": 5,
            "clean_runs": 5 if cpu else 0, "error": error}


class ReportTest(unittest.TestCase):
    CELLS = [cell("sanic", "persona", "ws_load", "ws1", "ws", 3.0),
             cell("sanic", "persona", "ws_load", "ws16", "ws", 1.0),
             cell("gorilla", "peer", "ws_load", "ws1", "ws", 6.0),
             cell("gorilla", "peer", "ws_load", "ws16", "ws", 4.0),
             cell("node_ws", "peer", "ws_load", "ws1", "ws", 5.0),
             cell("node_ws", "peer", "ws_load", "ws16", "ws", 6.0),
             cell("tomcat", "peer", "ws_load", "ws1", "ws", None, error="did not start"),
             cell("sanic", "persona", "wrk", "keepalive", "http1", 2.8)]

    def test_cheapest_peer(self):
        self.assertEqual(report_ws.cheapest_peer(self.CELLS, "ws1")["name"], "node_ws")
        self.assertEqual(report_ws.cheapest_peer(self.CELLS, "ws16")["name"], "gorilla")

    def test_targets(self):
        result, met = report_ws.peer_result(self.CELLS, "sanic", "ws1", 0.60)
        self.assertIn("node_ws 5.00 µs: 0.600", result)
        self.assertEqual(met, "yes")
        self.assertEqual(report_ws.peer_result(self.CELLS, "sanic", "ws16", 0.20)[1], "**no**")  # 0.25
        result, met = report_ws.http_result(self.CELLS, "sanic")
        self.assertIn("1.071", result)
        self.assertEqual(met, "yes")

    def test_idle(self):
        idle = [{"name": "sanic", "kind": "persona", "protocol": "ws", "bytes_per_connection": 1000.0,
                 "connections": 2000},
                {"name": "sanic", "kind": "persona", "protocol": "http1", "bytes_per_connection": 500.0,
                 "connections": 2000}]
        self.assertEqual(report_ws.idle_result(idle, "sanic"),
                         ("WebSocket 1,000 bytes, HTTP/1.1 500 bytes (2,000 connections each): +500 bytes", "yes"))
        idle[0]["bytes_per_connection"] = 1013.0
        self.assertEqual(report_ws.idle_result(idle, "sanic")[1], "**no**")
        self.assertEqual(report_ws.idle_result(idle[1:], "sanic"), ("WebSocket: not measured", "not measured"))

    def test_missing_persona_is_not_measured(self):
        cells = [c for c in self.CELLS if c["kind"] == "peer"]
        cells.append(cell("sanic", "persona", "ws_load", "ws1", "ws", None, error="did not echo"))
        self.assertEqual(report_ws.peer_result(cells, "sanic", "ws1", 0.6), ("did not echo", "not measured"))
        meta = {"load": "5 s", "ws": {"personas": ["sanic"], "paths": {"sanic": "/feed"}, "peers": {
            "gorilla": "gorilla", "node_ws": "node_ws", "tomcat": "tomcat"}, "peer_paths": {}, "idle_rss": []}}
        table = report_ws.ws_table(meta, cells)
        self.assertIn("| tomcat | `-` | - | - | - | - | - | 0/5, - | did not start |", table)
        self.assertNotIn("**no**", table)


if __name__ == "__main__":
    ctest_unittest.main()
