"""The servers a bench run measures: personas, the real frameworks, Tomcat
(Spring's engine), nginx, h2o, Go's net/http, Node's http and nghttpd.

A Target knows how to start itself on a port with N workers, pinned to the
server CPUs, how to tell it is ready, and how to stop it gracefully. While
it runs, its CPU time and peak RSS are read from /proc over its whole
process tree (gunicorn, uvicorn and Tornado fork workers).
"""
import atexit
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from typing import NamedTuple

from .procs import StartError, _hwm_kib, _stat, free_port, process_tree, stop_group  # noqa: F401
from .peer_conf import (_tls_values, fill, protocol_label, render_h2o_conf,  # noqa: F401
                        render_nginx_conf, render_openssl_conf, render_tomcat_server_xml, tomcat_h2_server_xml)
from .tls import server_flags

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEERS = os.path.join(ROOT, "scripts", "peers")
PERSONAS_FILE = os.path.join(ROOT, "servers", "personas.txt")
# The real frameworks are Debian's packages, importable by Debian's python3.
PYTHON = "/usr/bin/python3"


class PersonaInfo(NamedTuple):
    """One line of servers/personas.txt."""
    name: str
    port: int
    kind: str  # "framework", or "calibration" for hello-floor
    summary: str


def read_personas(path=PERSONAS_FILE):
    """Every persona of servers/personas.txt, in its order."""
    personas = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split(None, 3)
            if len(fields) != 4 or not fields[1].isdigit() or fields[2] not in ("framework", "calibration"):
                raise ValueError(f"{path}:{number}: not NAME PORT KIND SUMMARY: {line.strip()!r}")
            personas.append(PersonaInfo(fields[0], int(fields[1]), fields[2], fields[3].strip()))
    return personas


_PERSONAS = read_personas()
PERSONAS = [p.name for p in _PERSONAS]
# hello-floor: every target's CPU per request is reported against it.
CALIBRATION = next(p.name for p in _PERSONAS if p.kind == "calibration")
# The path each article measured, for the persona and the real framework alike.
PERSONA_PATHS = {"aiohttp": "/index", "starlette": "/index"}


class Target:
    """One server to measure. Subclasses say how to start it."""

    kind = "persona"

    def __init__(self, name, path="/", workers=1, cpus="1", extra=(), tls=None, http2=False):
        self.name = name
        self.path = path
        self.workers = workers
        self.cpus = cpus
        self.extra = list(extra)
        # A benchlib.tls.Certificate: the target serves HTTPS with it.
        self.tls = tls
        # The target is started to speak HTTP/2 (scripts/bench --h2): h2 by
        # ALPN with `tls`, else h2c by prior knowledge.
        self.http2 = http2
        self.port = None
        self.proc = None
        self.log = None
        self.tmp = None

    @property
    def label(self):
        return self.name

    @property
    def scheme(self):
        return "https" if self.tls else "http"

    def supports_workers(self, n):
        return True

    def command(self):
        raise NotImplementedError

    def env(self):
        return dict(os.environ, PORT=str(self.port), WORKERS=str(self.workers))

    def ready(self, deadline):
        """Waits until the target accepts connections on its port."""
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.1)
        return False

    def start(self, timeout=20):
        self.port = free_port()
        self.tmp = tempfile.mkdtemp(prefix=f"bench-{self.name}-")
        self.log = open(os.path.join(self.tmp, "stderr.log"), "w+")
        try:
            cmd = ["taskset", "-c", self.cpus] + self.command()
        except StartError:
            self.stop()
            raise
        self.proc = subprocess.Popen(cmd, cwd=PEERS, env=self.env(), stdout=subprocess.DEVNULL,
                                     stderr=self.log, start_new_session=True)
        if not self.ready(time.time() + timeout):
            tail = self.stderr_tail()
            self.stop()
            raise StartError(f"{self.label} did not start: {tail or 'no output'}")

    def stderr_lines(self):
        if not self.log:
            return []
        self.log.flush()
        self.log.seek(0)
        return [line.strip() for line in self.log.read().splitlines() if line.strip()]

    def stderr_tail(self, lines=3):
        return " | ".join(self.stderr_lines()[-lines:])

    def cpu_seconds(self):
        hz = os.sysconf("SC_CLK_TCK")
        return sum((_stat(p) or {"ticks": 0})["ticks"] for p in process_tree(self.proc.pid)) / hz

    def peak_rss_kib(self):
        return sum(_hwm_kib(p) for p in process_tree(self.proc.pid))

    def stop(self):
        stop_group(self.proc, 15)
        if self.log:
            self.log.close()
            self.log = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


class Persona(Target):
    """One of our hello-* binaries. With `admin` (the default) it is started
    with --admin 127.0.0.1:PORT on a free port of its own, so that a run can
    read the server's own service time (benchlib.admin)."""
    kind = "persona"

    def __init__(self, name, build_dir, admin=True, **kw):
        kw.setdefault("path", PERSONA_PATHS.get(name, "/"))
        super().__init__(name, **kw)
        self.binary = os.path.join(build_dir, f"hello-{name}")
        self.admin = admin
        self.admin_port = None

    def start(self, timeout=20):
        self.admin_port = None
        if self.admin:
            # Not the port Target.start picks next: that one is free again once found.
            self.admin_port = free_port()
        super().start(timeout)
        if self.admin_port == self.port:
            self.stop()
            raise StartError(f"{self.label}: admin port {self.port} picked twice")

    @property
    def label(self):
        label = f"hello-{self.name}" + (" +log" if any(a.startswith("--access-log") for a in self.extra) else "")
        if "json" in self.extra and "--access-log-format" in self.extra:
            label += " (json)"
        if "--shape" in self.extra:
            label += " +shape"
        label += protocol_label(self.tls, self.http2)
        return label + (f" {self.path[self.path.index('?'):]}" if "?" in self.path else "")

    def command(self):
        extra = [a.replace("@TMP@", self.tmp) for a in self.extra]
        admin = ["--admin", f"127.0.0.1:{self.admin_port}"] if self.admin_port else []
        tls = server_flags(self.tls) if self.tls else []
        h2 = ["--h2"] if self.http2 else []
        return ([self.binary, "-H", "127.0.0.1", "-p", str(self.port), "-w", str(self.workers)] + admin + h2 + tls
                + extra)

    def ready(self, deadline):
        # Our servers say when every worker listens, then (with --admin) when
        # the admin port does. Without that second line within a second, the
        # target still runs: each run then notes that the admin port is silent.
        listening = None
        while time.time() < deadline:
            tail = self.stderr_tail(5)
            if "listening on" in tail:
                if not self.admin_port or "admin on" in tail:
                    return True
                listening = listening or time.time()
                if time.time() - listening > 1.0:
                    return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False


class Peer(Target):
    kind = "peer"

    def __init__(self, name, argv, path, max_workers=None, label=None, **kw):
        super().__init__(name, path=path, **kw)
        self.argv = argv
        self.max_workers = max_workers
        self._label = label

    @property
    def label(self):
        return self._label or f"{self.name} (real)"

    def supports_workers(self, n):
        return self.max_workers is None or n <= self.max_workers

    def command(self):
        return [a.replace("@PORT@", str(self.port)).replace("@WORKERS@", str(self.workers)) for a in self.argv]


class Nginx(Target):
    """nginx from nginx.conf.in, or over TLS from nginx-tls.conf.in; with
    `http2`, its listener speaks HTTP/2 (`listen ... http2`)."""
    kind = "peer"

    @property
    def label(self):
        return "nginx" + protocol_label(self.tls, self.http2)

    def command(self):
        with open(os.path.join(PEERS, "nginx-tls.conf.in" if self.tls else "nginx.conf.in")) as f:
            conf = render_nginx_conf(f.read(), self.workers, self.port, self.tmp, self.tls, self.http2)
        path = os.path.join(self.tmp, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["/usr/sbin/nginx", "-p", self.tmp, "-c", path]


class H2o(Target):
    """h2o answering with a static file, hello.txt, written into its temp
    dir; over TLS from h2o-tls.conf.in (h2 by ALPN always offered), its
    TLS 1.3 suites, if `tls` sets them, from an OPENSSL_CONF file there;
    with `http2` in clear h2c by prior knowledge."""
    kind = "peer"
    binary = "/usr/bin/h2o"

    @property
    def label(self):
        return "h2o 2.2.5 (static file)" + protocol_label(self.tls, self.http2)

    def env(self):
        forced = {"OPENSSL_CONF": os.path.join(self.tmp, "openssl.cnf")} if self.tls and self.tls.suites else {}
        return dict(super().env(), **forced)

    def command(self):
        if not os.access(self.binary, os.X_OK):
            raise StartError(f"{self.label} did not start: {self.binary} is not installed")
        with open(os.path.join(self.tmp, "hello.txt"), "w") as f:
            f.write("Hello!!!")
        with open(os.path.join(PEERS, "h2o-tls.conf.in" if self.tls else "h2o.conf.in")) as f:
            conf = render_h2o_conf(f.read(), self.port, self.workers, self.tmp, pwd.getpwuid(os.getuid()).pw_name,
                                   self.tls, self.http2)
        path = os.path.join(self.tmp, "h2o.conf")
        with open(path, "w") as f:
            f.write(conf)
        if self.tls and self.tls.suites:
            with open(self.env()["OPENSSL_CONF"], "w") as f:
                f.write(render_openssl_conf(self.tls.suites))
        return [self.binary, "-c", path]


GO = "/usr/bin/go"
GO_SOURCE = os.path.join(PEERS, "go_hello")


def go_build_result(name, cmd, env, cwd):
    """Runs a peer's `go build` (as go_build() makes it): the binary (cmd[3],
    its -o), or the StartError naming `name` with Go's last lines."""
    try:
        done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    except OSError as e:
        done = subprocess.CompletedProcess(cmd, 1, "", f"{type(e).__name__}: {e}")
    if done.returncode:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return StartError(f"{name} did not build: {tail or done.returncode}")
    return cmd[3]


def go_build(out_dir, go=GO, source=GO_SOURCE):
    """The command, environment and working directory that build go_hello
    into out_dir offline: GOPATH mode (no modules, standard library only),
    and the build cache and HOME in out_dir, so it works as root on a fresh
    machine."""
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOCACHE=os.path.join(out_dir, "gocache"),
               GOPATH=os.path.join(out_dir, "gopath"), HOME=out_dir, CGO_ENABLED="0")
    return [go, "build", "-o", os.path.join(out_dir, "go_hello"), "."], env, source


class GoHello(Target):
    """scripts/peers/go_hello, built once per run; GOMAXPROCS is its worker
    count. Over TLS (TLS_CERT and TLS_KEY) it offers h2 by ALPN, as Go's
    standard library does; h2c needs golang.org/x/net, which is not here."""
    kind = "peer"
    _built = None  # the binary, or the StartError of the build, once per run

    @property
    def label(self):
        return "Go 1.19 net/http" + protocol_label(self.tls, self.http2)

    def env(self):
        return dict(super().env(), **({"TLS_CERT": self.tls.cert, "TLS_KEY": self.tls.key} if self.tls else {}))

    @classmethod
    def build(cls):
        if cls._built is None:
            out = tempfile.mkdtemp(prefix="bench-go-")
            atexit.register(shutil.rmtree, out, True)
            if not os.access(GO, os.X_OK):
                cls._built = StartError(f"Go 1.19 net/http did not start: {GO} is not installed")
            else:
                cls._built = go_build_result("Go 1.19 net/http", *go_build(out))
        if isinstance(cls._built, StartError):
            raise cls._built
        return cls._built

    def command(self):
        return [self.build()]


TOMCAT_HOME = "/usr/share/tomcat10"
JAVAC = "/usr/bin/javac"
SERVLET_API = "/usr/share/java/tomcat10-servlet-api.jar"
TOMCAT_SOURCE = os.path.join(PEERS, "tomcat_hello")


def javac_command(out_dir, javac=JAVAC, servlet_api=SERVLET_API, source=TOMCAT_SOURCE):
    """The command that compiles tomcat_hello's servlet into out_dir."""
    return [javac, "-cp", servlet_api, "-d", out_dir, os.path.join(source, "HelloServlet.java")]


class Tomcat(Target):
    """Debian's Tomcat 10.1, the engine Spring Boot 3 embeds, serving
    scripts/peers/tomcat_hello's servlet (compiled once per run) from a
    private CATALINA_BASE in its temp dir, in the foreground (`catalina.sh
    run`). Its worker count is its request threads (server.xml.in). With
    `http2`, its connector has Tomcat's HTTP/2 protocol (tomcat_h2_server_xml),
    over TLS with `tls`, and at least H2_THREADS request threads."""
    kind = "peer"
    home = TOMCAT_HOME
    javac = JAVAC
    servlet_api = SERVLET_API
    # The JVM and Tomcat take a few seconds to start, more on a busy CPU.
    start_timeout = 60
    # Spring Boot's request threads at start (minSpareThreads). With one,
    # Tomcat's HTTP/2 under h2load -c100 stalls: over TLS no run of
    # scripts/bench --h2 finished, in clear -m100 made 80 requests a second.
    H2_THREADS = 10
    _built = {}  # (javac, servlet API jar): the classes dir, or the StartError of the build, once per run
    web_xml = os.path.join(TOMCAT_SOURCE, "web.xml")

    @property
    def label(self):
        return "Tomcat 10.1 servlet (Spring's engine, without Spring MVC)" + protocol_label(self.tls, self.http2)

    @classmethod
    def build(cls, javac, servlet_api):
        key = (javac, servlet_api)
        if key not in cls._built:
            for path, package in ((javac, "default-jdk-headless"), (servlet_api, "tomcat10-common")):
                if not os.path.exists(path):
                    cls._built[key] = StartError(
                        f"Tomcat 10.1 servlet did not start: {path} is not installed ({package})")
                    break
            else:
                out = tempfile.mkdtemp(prefix="bench-tomcat-")
                atexit.register(shutil.rmtree, out, True)
                done = subprocess.run(javac_command(out, javac, servlet_api), capture_output=True, text=True)
                if done.returncode:
                    tail = " | ".join(done.stderr.strip().splitlines()[-3:])
                    cls._built[key] = StartError(f"Tomcat 10.1 servlet did not build: {tail or done.returncode}")
                else:
                    cls._built[key] = out
        if isinstance(cls._built[key], StartError):
            raise cls._built[key]
        return cls._built[key]

    def start(self, timeout=None):
        super().start(timeout or self.start_timeout)

    def request_threads(self):
        return max(self.workers, self.H2_THREADS) if self.http2 else self.workers

    @property
    def base(self):
        return os.path.join(self.tmp, "base")

    def command(self):
        catalina = os.path.join(self.home, "bin", "catalina.sh")
        if not os.access(catalina, os.X_OK):
            raise StartError(f"{self.label} did not start: {catalina} is not installed (tomcat10-common)")
        classes = self.build(self.javac, self.servlet_api)
        app = os.path.join(self.base, "webapps", "ROOT", "WEB-INF")
        for sub in ("conf", "logs", "temp", "work"):
            os.makedirs(os.path.join(self.base, sub))
        shutil.copytree(classes, os.path.join(app, "classes"))
        shutil.copy(self.web_xml, app)
        with open(os.path.join(TOMCAT_SOURCE, "server.xml.in")) as f:
            conf = render_tomcat_server_xml(f.read(), self.port, self.request_threads())
        if self.http2:
            conf = tomcat_h2_server_xml(conf, *((self.tls.cert, self.tls.key) if self.tls else ()))
        with open(os.path.join(self.base, "conf", "server.xml"), "w") as f:
            f.write(conf)
        return [catalina, "run"]

    def env(self):
        # Exit, rather than run without a listener, when the port cannot be bound.
        opts = " ".join(filter(None, (os.environ.get("CATALINA_OPTS"),
                                      "-Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true")))
        return dict(super().env(), CATALINA_HOME=self.home, CATALINA_BASE=self.base,
                    CATALINA_TMPDIR=os.path.join(self.base, "temp"), CATALINA_OPTS=opts)

    def stderr_lines(self):
        # A Java stack trace says what went wrong in its exception lines
        # ("Caused by: java.net.BindException: ..."), not in its frames.
        return [line for line in super().stderr_lines()
                if not line.startswith("at ") and not (line.startswith("... ") and line.endswith(" more"))]

    def ready(self, deadline):
        # Tomcat binds its port before it deploys the servlet: wait for its
        # last line of startup, then for the port.
        while time.time() < deadline:
            if "Server startup in" in self.stderr_tail(20):
                return super().ready(deadline)
            if self.proc.poll() is not None:
                return False
            time.sleep(0.1)
        return False


class NgHttpd(Target):
    """nghttp2's own server, nghttpd 1.52 (nghttp2-server), answering with a
    static file, index.html ("Hello!!!") in its temp dir: h2c by prior
    knowledge (--no-tls), or h2 by ALPN with `tls`. It speaks HTTP/2 only;
    its worker count is its threads (-n)."""
    kind = "peer"
    binary = "/usr/sbin/nghttpd"

    def __init__(self, name, **kw):
        kw["http2"] = True
        super().__init__(name, **kw)

    @property
    def label(self):
        return "nghttpd 1.52 (static file)" + protocol_label(self.tls, self.http2)

    def command(self):
        if not os.access(self.binary, os.X_OK):
            raise StartError(f"{self.label} did not start: {self.binary} is not installed (nghttp2-server)")
        with open(os.path.join(self.tmp, "index.html"), "w") as f:
            f.write("Hello!!!")
        argv = [self.binary, "-a", "127.0.0.1", "-n", str(self.workers), "-d", self.tmp]
        return argv + ([str(self.port), self.tls.key, self.tls.cert] if self.tls else ["--no-tls", str(self.port)])


def peers(**kw):
    """The real frameworks of the articles (Spring as its engine, Tomcat,
    with a servlet), nginx, and the peers users pick instead of us: h2o,
    Go's net/http and Node's http."""
    return [
        Peer("flask", [PYTHON, "flask_app.py"], "/", max_workers=1, **kw),
        Peer("gunicorn", ["/usr/bin/gunicorn", "-w", "@WORKERS@", "-b", "127.0.0.1:@PORT@", "flask_app:app"], "/", **kw),
        Peer("tornado", [PYTHON, "tornado_app.py"], "/", **kw),
        Peer("aiohttp", [PYTHON, "aiohttp_app.py"], PERSONA_PATHS["aiohttp"], max_workers=1, **kw),
        Peer("starlette", [PYTHON, "starlette_app.py"], PERSONA_PATHS["starlette"], max_workers=1, **kw),
        Tomcat("tomcat", path="/", **kw),
    ] + fast_peers(**kw)


def fast_peers(**kw):
    """nginx and the other servers users pick instead of us: --performance
    runs them all."""
    return [
        Nginx("nginx", path="/", **kw),
        H2o("h2o", path="/", **kw),
        GoHello("go", path="/", **kw),
        Peer("node", ["/usr/bin/node", "node_hello.js"], "/", max_workers=1, label="Node 20 http", **kw),
    ]
