"""What a bench run ran: the commit, the build (type, compiler and its
version), the versions of the load tools and peers the cells used, and the
machine (CPU model, cores). scripts/bench puts them in results.json's meta
and report.md says them under its title, so that two runs can be told apart
and a figure traced to what made it."""
import glob
import importlib.metadata
import os
import platform
import re
import subprocess

from . import tools
from .targets import PYTHON, ROOT

# How each program the cells may name (a load tool, or a peer's name) says
# its version; the first line of its output that holds a digit is kept.
VERSION_COMMANDS = {
    "wrk": ["wrk", "-v"],
    "h2load": ["h2load", "--version"],
    "ab": ["ab", "-V"],
    "nginx": ["/usr/sbin/nginx", "-v"],
    "h2o": ["/usr/bin/h2o", "--version"],
    "nghttpd": ["/usr/sbin/nghttpd", "--version"],
    "go": ["go", "version"],
    "node": ["/usr/bin/node", "--version"],
    # Debian's locust prints no number for --version, and has no dist-info.
    "locust": ["dpkg-query", "-W", "-f", "python3-locust ${Version}", "python3-locust"],
    "tomcat": ["dpkg-query", "-W", "-f", "tomcat10-common ${Version}", "tomcat10-common"],
    # --ws's peers: gorilla/websocket's Debian package; Node and its ws from build/peers (benchlib.ws_targets).
    "gorilla": ["dpkg-query", "-W", "-f", "golang-github-gorilla-websocket-dev ${Version}",
                "golang-github-gorilla-websocket-dev"],
    "node_ws": ["/usr/bin/node", "-p", "`node ${process.version}, ws ${require('" + os.path.join(
        ROOT, "build", "peers", "node_ws", "node_modules", "ws", "package.json") + "').version}`"],
    "chromium": ["chromium", "--version"],
}
# The Python frameworks among the peers: their installed distribution's version.
PYTHON_PROGRAMS = {"flask": "flask", "gunicorn": "gunicorn", "tornado": "tornado", "aiohttp": "aiohttp",
                   "starlette": "starlette", "uvicorn": "uvicorn", "wsproto": "wsproto"}
# What the meta of a run holds from here (tests/bench/test_provenance.py).
KEYS = ("commit", "build_type", "compiler", "tool_versions", "cpu_model", "cores", "nproc", "kernel")


def _output(argv, cwd=None):
    """The stdout and stderr of `argv` together, or None if it cannot run."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout + done.stderr


def commit(root=ROOT):
    """`git rev-parse HEAD` of the tree, with "-dirty" if a tracked file
    differs from it; "unknown" outside a git checkout."""
    head = _output(["git", "-C", root, "rev-parse", "--verify", "-q", "HEAD"])
    if not head or not re.fullmatch(r"[0-9a-f]{40}", head.strip()):
        return "unknown"
    changed = _output(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
    return head.strip() + ("-dirty" if changed and changed.strip() else "")


def build(build_dir):
    """The build type and the compiler (id, version and path) of the CMake
    build in `build_dir`, from its cache; "unknown" for what it lacks."""
    cache = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"(CMAKE_BUILD_TYPE|CMAKE_CXX_COMPILER):[A-Z]+=(.*)", line)
                if m:
                    cache[m.group(1)] = m.group(2).strip()
    except OSError:
        pass
    compiler = "unknown"
    # CMake's own record of the compiler it found: what the build used.
    for path in sorted(glob.glob(os.path.join(build_dir, "CMakeFiles", "*", "CMakeCXXCompiler.cmake"))):
        with open(path) as f:
            found = dict(re.findall(r'set\(CMAKE_CXX_COMPILER_(ID|VERSION) "([^"]*)"\)', f.read()))
        if found.get("ID"):
            compiler = f"{found['ID']} {found.get('VERSION', '')}".strip()
    if cache.get("CMAKE_CXX_COMPILER"):
        compiler += f" ({cache['CMAKE_CXX_COMPILER']})"
    return {"build_type": cache.get("CMAKE_BUILD_TYPE") or "unknown", "compiler": compiler}


def version(name):
    """The version line of program `name` (VERSION_COMMANDS, PYTHON_PROGRAMS),
    "not installed", or None for a name this module does not know."""
    if name in PYTHON_PROGRAMS:
        try:
            return f"{PYTHON_PROGRAMS[name]} {importlib.metadata.version(PYTHON_PROGRAMS[name])} ({PYTHON})"
        except importlib.metadata.PackageNotFoundError:
            return "not installed"
    if name not in VERSION_COMMANDS:
        return None
    out = _output(VERSION_COMMANDS[name])
    if out is None:
        return "not installed"
    line = next((ln.strip() for ln in out.splitlines() if re.search(r"\d", ln)), "")
    return line[:120] or "unknown"


def tool_versions(cells, extra=()):
    """The version of every load tool and peer the cells used, and of the
    programs in `extra` (e.g. chromium): {name: version line}."""
    names = {tools.split(c["tool"])[0] for c in cells if c.get("tool")}
    names |= {c["name"] for c in cells if c.get("kind") == "peer"}
    found = {}
    for name in sorted(names | set(extra)):
        line = version(name)
        if line is not None:
            found[name] = line
    return found


def cpu():
    """The CPU model, the physical cores and the logical CPUs of this machine."""
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    cores = None
    listing = _output(["lscpu", "-p=CORE,SOCKET"])
    if listing:
        cores = len({line for line in listing.splitlines() if line and not line.startswith("#")}) or None
    if model is None:  # e.g. arm64, whose /proc/cpuinfo has no model name
        info = _output(["lscpu"]) or ""
        model = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                      if line.startswith("Model name:")), None)
    return {"cpu_model": model or "unknown", "cores": cores, "nproc": os.cpu_count(), "kernel": platform.release()}


def describe(build_dir, root=ROOT):
    """The meta of a run known before it starts: commit, build, machine."""
    return dict(cpu(), commit=commit(root), **build(build_dir))


def text(meta):
    """report.md's lines on what ran: commit, build and tool versions; ""
    for a results.json written before they were recorded."""
    if "commit" not in meta:
        return ""
    shown = (f"Commit `{meta['commit']}`, build {meta.get('build_type', 'unknown')}, compiler "
             f"{meta.get('compiler', 'unknown')}.")
    versions = meta.get("tool_versions") or {}
    if versions:
        shown += " Versions: " + "; ".join(f"{name}: {line}" for name, line in sorted(versions.items())) + "."
    return shown
