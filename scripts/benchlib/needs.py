"""What a bench run needs installed and built, and scripts/setup asked for
exactly that: the lines of packages.txt it uses (the load tools of its jobs,
the peers it starts, matplotlib for the charts) and either the persona
binaries alone or, for the runs that use the test programs (tls_resume,
session_benchmark, allocation_tests), the whole build."""
import os
import subprocess
import sys

from . import plan, targets, tools

PACKAGES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "packages.txt")
# The peers each run kind starts whatever --peers says (run_*.py).
KIND_PEERS = {
    "performance": ("nginx", "h2o", "go", "node"),
    "scaling": ("nginx", "h2o"),
    "tls": ("nginx", "h2o"),
    "h2": ("h2o", "nginx", "nghttpd", "go", "tomcat"),
    "ws": ("tornado", "aiohttp", "starlette", "tomcat", "gorilla", "node"),
}
# What else a kind needs: h2load for the h2c jobs of --performance and
# --compare, the openssl
# CLI for the certificates of --tls and --h2 (benchlib/tls.py), Python's
# h2 for --h2's idle HTTP/2 connections (benchlib/http2.py).
KIND_EXTRAS = {"performance": ("h2load",), "compare": ("h2load",), "tls": ("openssl",),
               "h2": ("openssl", "python-h2")}
# The kinds that run programs of tests/ (scripts/setup builds everything):
# tls_resume, ws_load, session_benchmark, allocation_tests.
WHOLE_BUILD = ("performance", "tls", "ws")


def packages_table(path=PACKAGES_FILE):
    """packages.txt as {what: [Debian packages]}, in its order."""
    table = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                table[fields[0]] = fields[1:]
    return table


def kind_of(args):
    """The run kind of parsed options (options.KINDS' flag), or "matrix"."""
    for flag in ("performance", "shaping", "live_page", "compare", "scaling", "tls", "h2", "ws"):
        if getattr(args, flag, None):
            return flag
    return "matrix"


def run_needs(args):
    """(what, build): the lines of packages.txt the run uses, in the
    table's order, and the targets to build (None: everything)."""
    kind = kind_of(args)
    wanted = {"charts"}
    wanted.update(tools.split(tool)[0] for tool, _mode, _conns in args.jobs)
    wanted.update(KIND_PEERS.get(kind, ()))
    wanted.update(KIND_EXTRAS.get(kind, ()))
    if kind == "matrix" and args.peers:
        wanted.update(p.name for p in targets.peers()
                      if args.peers == "all" or p.name in plan.listing(args.peers))
    table = packages_table()
    what = [w for w in table if w in wanted]
    if kind in WHOLE_BUILD:
        return what, None
    return what, [f"hello-{name}" for name in targets.PERSONAS]


def setup_command(root, what, build):
    """scripts/setup's argv for run_needs' answer."""
    argv = [os.path.join(root, "scripts", "setup")]
    if what:
        argv.append("--bench=" + ",".join(what))
    if build is None:
        return argv
    argv.append("--serve")
    for target in build:
        argv += ["--target", target]
    return argv


def describe(what, build):
    """One line: what the run uses and what scripts/setup builds for it."""
    table = packages_table()
    uses = ", ".join(f"{w} ({' '.join(table[w])})" for w in what)
    built = "everything (the test programs too)" if build is None else "the hello-* personas"
    return f"scripts/bench: this run uses {uses}; installing what is missing, building {built}"


def install(args, root):
    """Installs what the run needs and builds it (scripts/setup), saying so."""
    what, build = run_needs(args)
    print(describe(what, build), file=sys.stderr)
    subprocess.run(setup_command(root, what, build), check=True, stdout=subprocess.DEVNULL)
