"""The WebSocket echo servers scripts/bench --ws measures beside the
personas: the real frameworks' echo apps of scripts/peers/websocket/apps
(Tornado, aiohttp, Starlette on uvicorn, Tomcat 10.1's JSR 356 endpoint, as
capture_ws.py runs them), gorilla/websocket's echo (Go, Debian's package,
built offline in GOPATH mode) and Node's ws (from npm, pinned by the
package-lock.json beside its app). What is built or installed goes into a
cache outside git, build/peers/; a peer whose parts are missing does not
start, and says which package it lacks."""
import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile

from . import targets
from .procs import StartError

WS_APPS = os.path.join(targets.PEERS, "websocket", "apps")
# Where the peers built or installed for --ws are kept between runs (git ignores /build*/).
CACHE = os.path.join(targets.ROOT, "build", "peers")
# uvicorn's WebSocket protocol for Starlette: wsproto, the one
# scripts/peers/websocket captured (uvicorn's "auto" picks websockets where
# python3-websockets is installed).
UVICORN_WS = "wsproto"
GOCODE = "/usr/share/gocode"
GORILLA_SOURCE = os.path.join(WS_APPS, "gorilla_echo")
GORILLA_PACKAGE = os.path.join(GOCODE, "src", "github.com", "gorilla", "websocket")
NODE = "/usr/bin/node"
NODE_LOCK = os.path.join(WS_APPS, "package-lock.json")
WS_JARS = ("/usr/share/java/tomcat10-servlet-api.jar", "/usr/share/java/tomcat10-websocket-api.jar",
           "/usr/share/java/tomcat10-websocket-client-api.jar")
TOMCAT_WS_SOURCE = os.path.join(WS_APPS, "tomcat_ws")


class WsPeer(targets.Peer):
    """A peer started from scripts/peers/websocket/apps with `env` added to
    its environment; `prepare`, if given, is called before it starts and
    raises StartError when what it needs is missing."""

    def __init__(self, name, argv, path, label, env=None, prepare=None, **kw):
        super().__init__(name, argv, path, max_workers=1, label=label, **kw)
        self.extra_env = dict(env or {})
        self.prepare = prepare

    def env(self):
        return dict(super().env(), **self.extra_env)

    def command(self):
        if self.prepare:
            self.prepare(self)
        return super().command()


def python_modules(*modules):
    """A WsPeer `prepare` that checks Debian's python3 can import each
    (module, Debian package) of `modules`."""
    def check(target):
        for module, package in modules:
            if importlib.util.find_spec(module) is None:
                raise StartError(f"{target.label} did not start: Python's {module} is not installed ({package})")
    return check


def gorilla_build(out_dir, go=targets.GO, source=GORILLA_SOURCE, gocode=GOCODE):
    """The command, environment and working directory that build
    gorilla_echo into out_dir offline: GOPATH mode with Debian's Go sources
    (/usr/share/gocode) first, the build cache and HOME in out_dir."""
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOCACHE=os.path.join(out_dir, "gocache"),
               GOPATH=f"{gocode}:{os.path.join(out_dir, 'gopath')}", HOME=out_dir, CGO_ENABLED="0")
    return [go, "build", "-o", os.path.join(out_dir, "gorilla_echo"), "."], env, source


class Gorilla(targets.Target):
    """gorilla/websocket's echo (scripts/peers/websocket/apps/gorilla_echo),
    built once per run into CACHE/gorilla (Go's build cache there makes it
    quick after the first); GOMAXPROCS is its worker count."""
    kind = "peer"
    _built = None  # the binary, or the StartError of the build, once per run

    @property
    def label(self):
        return "gorilla/websocket 1.5 (Go 1.19)"

    @classmethod
    def build(cls, cache=CACHE):
        if cls._built is None:
            if not os.access(targets.GO, os.X_OK):
                cls._built = StartError(f"gorilla/websocket did not start: {targets.GO} is not installed (golang-go)")
            elif not os.path.isdir(GORILLA_PACKAGE):
                cls._built = StartError(f"gorilla/websocket did not start: {GORILLA_PACKAGE} is not installed "
                                        "(golang-github-gorilla-websocket-dev)")
            else:
                out = os.path.join(cache, "gorilla")
                os.makedirs(out, exist_ok=True)
                cls._built = targets.go_build_result("gorilla/websocket", *gorilla_build(out))
        if isinstance(cls._built, StartError):
            raise cls._built
        return cls._built

    def command(self):
        return [self.build()]


def node_ws_version(lock=NODE_LOCK):
    """The ws version package-lock.json pins."""
    with open(lock) as f:
        return json.load(f)["packages"]["node_modules/ws"]["version"]


def node_ws_install(cache=CACHE, lock=NODE_LOCK, npm=None):
    """CACHE/node_ws/node_modules with the pinned ws in it: `npm ci` there
    from the package.json and package-lock.json beside the app, unless the
    pinned version is installed already. Raises StartError if it cannot."""
    where = os.path.join(cache, "node_ws")
    modules = os.path.join(where, "node_modules")
    want = node_ws_version(lock)
    try:
        with open(os.path.join(modules, "ws", "package.json")) as f:
            if json.load(f).get("version") == want:
                return modules
    except (OSError, ValueError):
        pass
    npm = npm or shutil.which("npm")
    if not npm:
        raise StartError(f"Node ws {want} did not start: npm is not installed (it comes with nodejs)")
    try:
        os.makedirs(where, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(os.path.dirname(lock), name), where)
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=where, capture_output=True, text=True,
                              timeout=300)
    except subprocess.TimeoutExpired:
        raise StartError(f"Node ws {want} did not start: npm ci took more than 300 s")
    except OSError as e:
        raise StartError(f"Node ws {want} did not start: {type(e).__name__}: {e}")
    if done.returncode:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
        raise StartError(f"Node ws {want} did not start: npm ci failed: {tail or done.returncode}")
    return modules


def node_ws_prepare(target):
    if not os.access(NODE, os.X_OK):
        raise StartError(f"{target.label} did not start: {NODE} is not installed (nodejs)")
    target.extra_env["NODE_PATH"] = node_ws_install()


class TomcatWs(targets.Tomcat):
    """Tomcat 10.1 with the JSR 356 echo of scripts/peers/websocket/apps/
    tomcat_ws on /myHandler (registered by its listener, beside
    tomcat_hello's servlet), compiled once per run, with Spring Boot's 10
    request threads at start, as capture_ws.py runs it."""
    THREADS = 10
    _built = {}
    web_xml = os.path.join(TOMCAT_WS_SOURCE, "web.xml")

    @property
    def label(self):
        return "Tomcat 10.1 JSR 356 (Spring's engine)"

    @classmethod
    def build(cls, javac, servlet_api):
        key = (javac, servlet_api)
        if key not in cls._built:
            missing = [p for p in (javac,) + WS_JARS if not os.path.exists(p)]
            if missing:
                cls._built[key] = StartError(f"Tomcat 10.1 JSR 356 did not start: {missing[0]} is not installed "
                                             "(tomcat10-common, default-jdk-headless)")
            else:
                out = tempfile.mkdtemp(prefix="bench-tomcat-ws-")
                atexit.register(shutil.rmtree, out, True)
                sources = [os.path.join(TOMCAT_WS_SOURCE, "EchoEndpoint.java"),
                           os.path.join(TOMCAT_WS_SOURCE, "EchoListener.java"),
                           os.path.join(targets.TOMCAT_SOURCE, "HelloServlet.java")]
                done = subprocess.run([javac, "-cp", ":".join(WS_JARS), "-d", out] + sources, capture_output=True,
                                      text=True)
                if done.returncode:
                    tail = " | ".join(done.stderr.strip().splitlines()[-3:])
                    cls._built[key] = StartError(f"Tomcat 10.1 JSR 356 did not build: {tail or done.returncode}")
                else:
                    cls._built[key] = out
        if isinstance(cls._built[key], StartError):
            raise cls._built[key]
        return cls._built[key]

    def request_threads(self):
        return max(self.workers, self.THREADS)


def ws_peers(**kw):
    """Every WebSocket peer of --ws, 1 worker each, in the report's order."""
    app = lambda name: os.path.join(WS_APPS, name)  # noqa: E731
    return [
        WsPeer("tornado", [targets.PYTHON, app("tornado_ws.py")], "/websocket", "Tornado 6.2",
               prepare=python_modules(("tornado", "python3-tornado")), **kw),
        WsPeer("aiohttp", [targets.PYTHON, app("aiohttp_ws.py")], "/ws", "aiohttp 3.8",
               prepare=python_modules(("aiohttp", "python3-aiohttp")), **kw),
        WsPeer("starlette", [targets.PYTHON, app("starlette_ws.py")], "/ws",
               f"Starlette 0.26 on uvicorn 0.17 ({UVICORN_WS})", env={"UVICORN_WS": UVICORN_WS},
               prepare=python_modules(("starlette", "python3-starlette"), ("uvicorn", "uvicorn"),
                                      (UVICORN_WS, f"python3-{UVICORN_WS}")), **kw),
        TomcatWs("tomcat", path="/myHandler", **kw),
        Gorilla("gorilla", path="/ws", **kw),
        WsPeer("node_ws", [NODE, app("node_ws_echo.js")], "/ws", f"Node 20 ws {node_ws_version()}",
               prepare=node_ws_prepare, **kw),
    ]


WS_PEERS = ("tornado", "aiohttp", "starlette", "tomcat", "gorilla", "node_ws")
