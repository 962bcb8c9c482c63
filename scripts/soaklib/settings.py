"""scripts/soak's settings: the server's limits it starts with, the clients'
timeouts, the checks' tolerances, each persona's routes and bodies, and
the kinds of client with their threads and paces."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HOST = "127.0.0.1"

HEADER_TIMEOUT_S = 2
MAX_HEADER_BYTES = 8192
SHUTDOWN_TIMEOUT_S = 5
OP_TIMEOUT_S = 5.0           # one request's answer, one connect
QUIESCE_CLIENTS_S = 15.0     # clients park (a slowloris waits for its 408)
QUIESCE_SERVER_S = 10.0      # the server closes what the clients closed
FD_TOLERANCE = 2
RSS_TOLERANCE_FRACTION = 0.10
RSS_TOLERANCE_KIB = 2048
MAX_BODY = 32 << 20
MAX_HEAD = 64 << 10
ERRORS_KEPT = 8

PATTERN = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/"

# Each persona's routes and their bodies (README.md); the first is shaped.
ROUTES = {
    "sanic": [("/", b"Hello!!!"), ("/json", b'{"hello":"world"}')],
    "flask": [("/", b"Hello!!!"), ("/index", b"hello world"), ("/json", b'{"hello":"world"}\n')],
    "gunicorn": [("/", b"Hello!!!"), ("/index", b"hello world"), ("/json", b'{"hello":"world"}\n')],
    "tornado": [("/", b"Hello, world"), ("/json", b'{"hello": "world"}')],
    "spring": [("/", b"Hello!!!"), ("/json", b'{"hello":"world"}')],
    "aiohttp": [("/index", b"Hello World"), ("/json", b'{"hello": "world"}')],
    "starlette": [("/", b"Hello!!!"), ("/index", b'{"hello":"world"}'), ("/json", b'{"hello":"world"}')],
}
# Flags a persona needs to be soaked like the others: flask and gunicorn
# close every connection unless told to keep it alive.
EXTRA_FLAGS = {"flask": ["--keep-alive"], "gunicorn": ["--keep-alive"]}

# Threads and paces (operations a second per thread): about half a CPU of
# Python on this 2-CPU machine, leaving the server room.
KINDS = [
    # kind, threads, rate
    ("keepalive", 2, 500.0),
    ("close", 1, 50.0),
    ("pipelined", 1, 15.0),   # bursts of 16
    ("delay", 1, 60.0),
    ("drip", 2, 8.0),
    ("abort", 1, 5.0),
    ("slowloris", 1, 0.0),    # 3 connections, a byte a second each
    ("oversized", 1, 4.0),
]
# The WebSocket kinds (scripts/soaklib/ws_clients.py), where the persona
# has an echo path.
WS_KINDS = [
    ("ws-echo", 1, 40.0),     # bursts of 1 to 4 messages
    ("ws-frag", 1, 20.0),
    ("ws-deflate", 1, 20.0),
    ("ws-ping", 1, 40.0),     # bursts of 1 or 3 pings
    ("ws-abort", 1, 4.0),     # connections
    ("ws-close", 1, 10.0),    # connections
]
# Each persona's WebSocket echo path and largest message (servers/*.cc).
WEBSOCKET = {
    "sanic": ("/feed", 1 << 20),
    "tornado": ("/websocket", 10 << 20),
    "aiohttp": ("/ws", (4 << 20) - 1),
    "starlette": ("/ws", 16 << 20),
    "spring": ("/myHandler", 8192),
}
WS_MESSAGE_MAX = 64 << 10   # random message sizes: up to this, or the persona's largest
WS_CUT_MAX = 1 << 20        # the message whose echo a reset cuts: this, or the largest
PIPELINE_DEPTH = 16
SLOWLORIS_CONNECTIONS = 3


def pattern(n):
    reps = n // len(PATTERN) + 1
    return (PATTERN * reps)[:n]



def kinds(persona):
    """The kinds of client for a persona: the WebSocket ones too if it has an echo path."""
    return KINDS + (WS_KINDS if persona in WEBSOCKET else [])
