"""Load tools: how to run each in each mode, pinned to the tool CPUs."""
import os
import shutil
import subprocess
import tempfile

from . import parsers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PIPELINE_LUA = os.path.join(ROOT, "scripts", "wrk", "pipeline.lua")
# The echo mode: POST a ~1 KiB JSON document to /echo, a route of ECHO_ROUTES.
ECHO_LUA = os.path.join(ROOT, "scripts", "wrk", "echo.lua")
ECHO_ROUTES = os.path.join(ROOT, "scripts", "wrk", "echo-routes.json")
LOCUSTFILE = os.path.join(ROOT, "scripts", "peers", "locustfile.py")
# Depth of the pipeline mode (wrk's Lua script; h2load's -m).
PIPELINE_DEPTH = 16

BINARIES = {"ab": "ab", "wrk": "wrk", "h2load": "h2load", "locust": "locust"}
MODES = ("close", "keepalive", "pipeline", "echo")


class Unsupported(Exception):
    """This tool cannot run this mode."""


def missing(tool):
    """None if the tool is installed, else a sentence saying what to do."""
    if shutil.which(BINARIES[tool]) is None:
        return f"{tool} is not installed (scripts/setup --bench installs it)"
    return None


def command(tool, mode, url, connections, duration=None, requests=None):
    """The argv that runs `tool` in `mode` against `url`."""
    if mode == "echo" and tool != "wrk":
        raise Unsupported("the echo mode is a wrk script")
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
        argv = ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency"]
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
        argv = ["h2load", "--h1", "-c", str(connections)]
        argv += ["-n", str(requests)] if requests else ["-D", str(duration)]
        if mode == "pipeline":
            argv += ["-m", str(PIPELINE_DEPTH)]
        return argv + [url]
    if tool == "locust":
        if mode != "keepalive":
            raise Unsupported("locust's users keep their connections open and do not pipeline")
        if requests:
            raise Unsupported("locust runs for a duration")
        base = url.split("/", 3)
        return ["locust", "-f", LOCUSTFILE, "--headless", "-u", str(connections), "-r", str(connections),
                "-t", f"{duration}s", "-H", "/".join(base[:3]), "--only-summary", "--csv", "@CSV@"]
    raise ValueError(tool)


def run(tool, mode, url, connections, cpus, duration=None, requests=None):
    """Runs one load and returns the parsed result. Raises Unsupported or ParseError."""
    argv = command(tool, mode, url, connections, duration, requests)
    env = dict(os.environ, PIPELINE_DEPTH=str(PIPELINE_DEPTH))
    with tempfile.TemporaryDirectory(prefix="bench-tool-") as tmp:
        csv_prefix = os.path.join(tmp, "locust")
        argv = [a.replace("@CSV@", csv_prefix) for a in argv]
        if tool == "locust":
            # The path of http://host:port/path, which locust requests.
            env["LOCUST_PATH"] = "/" + (url.split("/", 3) + [""])[3]
        limit = (duration or 60) * 3 + 60
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
        return parsers.PARSERS[tool](done.stdout + done.stderr)
