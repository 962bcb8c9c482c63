"""Load tools: how to run each in each mode, pinned to the tool CPUs."""
import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

from . import parsers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PIPELINE_LUA = os.path.join(ROOT, "scripts", "wrk", "pipeline.lua")
# The echo mode: POST a ~1 KiB JSON document to /echo, a route of ECHO_ROUTES.
ECHO_LUA = os.path.join(ROOT, "scripts", "wrk", "echo.lua")
ECHO_ROUTES = os.path.join(ROOT, "scripts", "wrk", "echo-routes.json")
LOCUSTFILE = os.path.join(ROOT, "scripts", "peers", "locustfile.py")
# Depth of the pipeline mode (wrk's Lua script; h2load's -m).
PIPELINE_DEPTH = 16

# tls_resume and ws_load are programs of this project (tests/), built
# beside the personas: their paths follow --build-dir (use_build_dir).
BINARIES = {"ab": "ab", "wrk": "wrk", "h2load": "h2load", "locust": "locust",
            "tls_resume": os.path.join(ROOT, "build", "tests", "tls_resume"),
            "ws_load": os.path.join(ROOT, "build", "tests", "ws_load")}
# The test programs among them (scripts/test builds them).
BUILT = ("tls_resume", "ws_load")
# The tools and modes a matrix run takes (--tool, --mode). tls_resume and
# its mode, "resume" (one connection per request, each resuming the
# session of the one before), belong to --tls.
LOAD_TOOLS = ("ab", "wrk", "h2load", "locust")
MODES = ("close", "keepalive", "pipeline", "echo")
# scripts/bench --h2's modes: h2load speaking HTTP/2 (h2c by prior
# knowledge to http://, h2 by ALPN to https://) with this many streams at
# once on each connection (its -m). They belong to --h2, as "resume" to --tls.
H2_STREAMS = {"m1": 1, "m10": 10, "m100": 100}
# scripts/bench --ws's modes: ws_load echoing WS_MESSAGE_SIZE-byte text
# messages with this many in flight on each connection (its --in-flight).
WS_IN_FLIGHT = {"ws1": 1, "ws16": 16}
WS_MESSAGE_SIZE = 16
# ws_load's warm-up before its window: none, so that its window is the
# whole run, over which the server's CPU time is read (as for wrk).
WS_WARMUP = 0


class Unsupported(Exception):
    """This tool cannot run this mode."""


def split(tool):
    """("locust", 2) for "locust-w2", locust's distributed mode with 2
    worker processes (scripts/bench --locust-workers 2); (tool, 0) else."""
    m = re.fullmatch(r"locust-w([1-9][0-9]*)", tool)
    return ("locust", int(m.group(1))) if m else (tool, 0)


def label(tool, locust_workers=0):
    """The tool's name in the results: "locust-w2" for locust with 2 workers."""
    return f"{tool}-w{locust_workers}" if tool == "locust" and locust_workers else tool


def use_build_dir(build_dir):
    """Runs tls_resume and ws_load from `build_dir` (scripts/bench --build-dir)."""
    for tool in BUILT:
        BINARIES[tool] = os.path.join(build_dir, "tests", tool)


def missing(tool):
    """None if the tool is installed, else a sentence saying what to do."""
    tool = split(tool)[0]
    if shutil.which(BINARIES[tool]) is None:
        if tool in BUILT:
            return f"{BINARIES[tool]} is not built (scripts/test builds it)"
        return f"{tool} is not installed (scripts/setup --bench installs it)"
    return None


def tls_resume_command(url, threads, duration=None, requests=None):
    """tls_resume's argv against `url` (https://HOST:PORT/PATH): `threads`
    threads, each making one connection at a time, for `duration` seconds
    or `requests` connections in all, TLS 1.3, its figures as JSON."""
    parts = urllib.parse.urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    argv = [BINARIES["tls_resume"], "--port", str(parts.port or 443), "--host", parts.hostname or "127.0.0.1",
            "--path", path]
    argv += ["--count", str(requests)] if requests else ["--duration", str(duration)]
    return argv + ["--threads", str(threads), "--tls-max", "1.3", "--json"]


def ws_load_command(url, connections, in_flight, duration):
    """ws_load's argv against `url` (its host, port and path; the scheme
    is not read): `connections`
    upgraded connections, each with `in_flight` WS_MESSAGE_SIZE-byte text
    messages in flight, for `duration` seconds; its figures as JSON into
    @JSON@, which run() fills in."""
    parts = urllib.parse.urlsplit(url)
    return [BINARIES["ws_load"], "--host", parts.hostname or "127.0.0.1", "--port", str(parts.port or 80),
            "--path", parts.path or "/", "--connections", str(connections), "--in-flight", str(in_flight),
            "--size", str(WS_MESSAGE_SIZE), "--seconds", str(duration), "--warmup", str(WS_WARMUP),
            "--json", "@JSON@"]


def locust_command(url, connections, duration, csv_prefix, workers=0, port=None):
    """locust's argv: one headless process, or with `workers` the master
    of the distributed mode, bound to 127.0.0.1:`port`, which waits for
    its workers (at most WORKER_WAIT seconds) and writes the aggregate CSV."""
    host = "/".join(url.split("/", 3)[:3])
    argv = ["locust", "-f", LOCUSTFILE]
    if workers:
        argv += ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port),
                 "--expect-workers", str(workers), "--expect-workers-max-wait", str(WORKER_WAIT)]
    return argv + ["--headless", "-u", str(connections), "-r", str(connections), "-t", f"{duration}s",
                   "-H", host, "--only-summary", "--csv", csv_prefix]


def locust_worker_command(port):
    """The argv of one worker of locust's distributed mode (the master on 127.0.0.1:`port`)."""
    return ["locust", "-f", LOCUSTFILE, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]


# Seconds a locust master waits for its workers; a worker's grace to stop.
WORKER_WAIT = 30
WORKER_STOP = 10


def command(tool, mode, url, connections, duration=None, requests=None, threads=1):
    """The argv that runs `tool` in `mode` against `url` with `threads`
    threads (wrk and h2load; benchlib.plan.tool_load says how many, and
    makes `connections` a multiple of them). For locust with workers, the
    master's argv; @CSV@ and @PORT@ are filled in by run()."""
    tool, workers = split(tool)
    if mode == "echo" and tool != "wrk":
        raise Unsupported("the echo mode is a wrk script")
    if mode in H2_STREAMS and tool != "h2load":
        raise Unsupported("HTTP/2 is h2load's")
    if (mode == "resume") != (tool == "tls_resume"):
        raise Unsupported("a resumed TLS handshake per request is tls_resume's mode, and its only one")
    if (mode in WS_IN_FLIGHT) != (tool == "ws_load"):
        raise Unsupported("a WebSocket echo is ws_load's mode, and its only one")
    if tool == "tls_resume":
        return tls_resume_command(url, connections, duration, requests)
    if tool == "ws_load":
        if requests:
            raise Unsupported("ws_load runs for a duration")
        return ws_load_command(url, connections, WS_IN_FLIGHT[mode], duration)
    if tool == "ab":
        if mode == "pipeline":
            raise Unsupported("ab cannot pipeline")
        argv = ["ab", "-q", "-c", str(connections)]
        if mode == "keepalive":
            argv.append("-k")
        if requests:
            argv += ["-n", str(requests)]
        else:
            # -t alone caps ab at 50,000 requests; give it room for the duration.
            argv += ["-t", str(duration), "-n", "100000000"]
        return argv + [url]
    if tool == "wrk":
        if requests:
            raise Unsupported("wrk runs for a duration, not a request count")
        argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
        if mode == "close":
            argv += ["-H", "Connection: close"]
        if mode == "pipeline":
            argv += ["-s", PIPELINE_LUA]
        if mode == "echo":
            argv += ["-s", ECHO_LUA]
        return argv + [url]
    if tool == "h2load":
        if mode == "close":
            raise Unsupported("h2load keeps connections open")
        argv = ["h2load"] + ([] if mode in H2_STREAMS else ["--h1"]) + ["-t", str(threads), "-c", str(connections)]
        argv += ["-n", str(requests)] if requests else ["-D", str(duration)]
        if mode == "pipeline":
            argv += ["-m", str(PIPELINE_DEPTH)]
        if mode in H2_STREAMS:
            argv += ["-m", str(H2_STREAMS[mode])]
        return argv + [url]
    if tool == "locust":
        if mode != "keepalive":
            raise Unsupported("locust's users keep their connections open and do not pipeline")
        if requests:
            raise Unsupported("locust runs for a duration")
        return locust_command(url, connections, duration, "@CSV@", workers, "@PORT@")
    raise ValueError(tool)


def free_port():
    """A TCP port of 127.0.0.1 free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _file_text(path):
    """The text of `path`, or "" if the tool did not write it."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _tail(text):
    return (text.strip().splitlines() or ["?"])[-1]


def run_locust_distributed(argv, workers, port, cpus, env, limit):
    """Runs the master `argv` and `workers` workers on `cpus`, waits for the
    master (at most `limit` s), then stops the workers (terminate, then kill
    after WORKER_STOP s). Returns the master's stderr; raises ParseError when
    a worker or the master fails."""
    logs = [tempfile.TemporaryFile("w+") for _ in range(workers + 1)]
    procs = []
    try:
        procs.append(subprocess.Popen(["taskset", "-c", cpus] + argv, env=env, stdout=subprocess.DEVNULL,
                                      stderr=logs[0], text=True))
        for log in logs[1:]:
            procs.append(subprocess.Popen(["taskset", "-c", cpus] + locust_worker_command(port), env=env,
                                          stdout=subprocess.DEVNULL, stderr=log, text=True))
        master = procs[0]
        try:
            master.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            raise parsers.ParseError(f"the locust master did not finish within {limit} s")
        # Workers quit with status 0 when their master tells them the run is
        # over; one that exited otherwise failed (e.g. it could not start).
        dead = [i for i, p in enumerate(procs) if i and p.poll() not in (None, 0)]
        logs[0].seek(0)
        err = logs[0].read()
        if dead:
            logs[dead[0]].seek(0)
            raise parsers.ParseError(f"{len(dead)} of {workers} locust workers failed (status "
                                     f"{procs[dead[0]].returncode}): {_tail(logs[dead[0]].read())}")
        if "missing" in err and "heartbeat" in err:
            raise parsers.ParseError("a locust worker stopped answering during the run: " + next(
                line for line in err.splitlines() if "heartbeat" in line))
        if "Gave up waiting for workers" in err or master.returncode not in (0, 1):
            raise parsers.ParseError(f"the locust master did not get its {workers} workers "
                                     f"(status {master.returncode}): {_tail(err)}")
        return err
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + WORKER_STOP
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in logs:
            log.close()


def run(tool, mode, url, connections, cpus, duration=None, requests=None, threads=1):
    """Runs one load and returns the parsed result with the tool's own CPU
    time (user + system of every process it ran, `tool_cpu_seconds`) and
    its wall time (`tool_wall_seconds`). Raises Unsupported or ParseError."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    result = _run(tool, mode, url, connections, cpus, duration, requests, threads)
    if mode in H2_STREAMS and result.get("protocol") not in ("h2", "h2c"):
        # A server that did not take HTTP/2 answers HTTP/1.1 (ALPN) or not at all.
        result["error"] = f"h2load spoke {result.get('protocol') or 'no protocol'}, not HTTP/2"
    wall, after = time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    # Every process the tool ran has been waited for by now (locust's
    # workers too), so the children's usage holds all of it.
    result["tool_cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result["tool_wall_seconds"] = wall
    return result


def _run(tool, mode, url, connections, cpus, duration, requests, threads):
    argv = command(tool, mode, url, connections, duration, requests, threads)
    tool, workers = split(tool)
    env = dict(os.environ, PIPELINE_DEPTH=str(PIPELINE_DEPTH))
    with tempfile.TemporaryDirectory(prefix="bench-tool-") as tmp:
        csv_prefix, json_path = os.path.join(tmp, "locust"), os.path.join(tmp, "ws_load.json")
        port = free_port() if workers else None
        argv = [a.replace("@CSV@", csv_prefix).replace("@PORT@", str(port)).replace("@JSON@", json_path)
                for a in argv]
        if tool == "locust":
            # The path of http://host:port/path, which locust requests.
            env["LOCUST_PATH"] = "/" + (url.split("/", 3) + [""])[3]
        limit = (duration or 60) * 3 + 60
        if workers:
            stderr = run_locust_distributed(argv, workers, port, cpus, env, limit + WORKER_WAIT)
            try:
                with open(csv_prefix + "_stats.csv") as f:
                    return parsers.parse_locust_csv(f.read())
            except OSError:
                raise parsers.ParseError("the locust master wrote no CSV: " + _tail(stderr))
        try:
            done = subprocess.run(["taskset", "-c", cpus] + argv, env=env, capture_output=True, text=True,
                                  timeout=limit)
        except subprocess.TimeoutExpired:
            raise parsers.ParseError(f"{tool} did not finish within {limit} s")
        if tool == "locust":
            try:
                with open(csv_prefix + "_stats.csv") as f:
                    return parsers.parse_locust_csv(f.read())
            except OSError:
                raise parsers.ParseError("locust wrote no CSV: " + (done.stderr.strip().splitlines() or ["?"])[-1])
        if tool == "ws_load":
            return parsers.parse_ws_load(_file_text(json_path), done.returncode, done.stdout + done.stderr)
        return parsers.PARSERS[tool](done.stdout + done.stderr)
