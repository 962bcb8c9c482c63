"""scripts/soak's arguments: SECONDS, --persona, --binary and --workers;
a bad one raises UsageError (one line, exit 2)."""
import argparse
import os
import re

from .settings import ROOT, ROUTES


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def personas():
    names = []
    with open(os.path.join(ROOT, "servers", "personas.txt")) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#") and len(fields) >= 3 and fields[2] == "framework":
                names.append(fields[0])
    return names


def parse_args(argv, doc):
    """The arguments of `argv`; `doc` (scripts/soak's docstring) is --help's text."""
    p = Parser(prog="scripts/soak", description=doc.split("\n\n", 2)[2],
               formatter_class=argparse.RawDescriptionHelpFormatter,
               usage="scripts/soak SECONDS [--persona NAME] [--binary PATH] [--workers N]")
    p.add_argument("seconds", metavar="SECONDS", help="how long the load runs (10 to 86400)")
    p.add_argument("--persona", metavar="NAME", default="sanic", help="the persona (default sanic)")
    p.add_argument("--binary", metavar="PATH",
                   help="the server binary (default $HELLO_SOAK_BINARY, else build/hello-NAME)")
    p.add_argument("--workers", metavar="N", default="1", help="the server's -w (default 1, 1 to 64)")
    a = p.parse_args(argv)
    try:
        a.seconds = float(a.seconds)
    except ValueError:
        raise UsageError(f"SECONDS must be a number, not {a.seconds!r}")
    if not 10 <= a.seconds <= 86400:
        raise UsageError(f"SECONDS must be from 10 to 86400, not {a.seconds:g}")
    if not re.fullmatch(r"[0-9]+", a.workers) or not 1 <= int(a.workers) <= 64:
        raise UsageError(f"--workers must be a whole number from 1 to 64, not {a.workers!r}")
    a.workers = int(a.workers)
    known = personas()
    if a.persona not in known or a.persona not in ROUTES:
        raise UsageError(f"unknown persona {a.persona!r} (one of: {', '.join(n for n in known if n in ROUTES)})")
    if a.binary is None:
        a.binary = os.environ.get("HELLO_SOAK_BINARY") or os.path.join(ROOT, "build", f"hello-{a.persona}")
    if not (os.path.isfile(a.binary) and os.access(a.binary, os.X_OK)):
        raise UsageError(f"no executable server at {a.binary} (build it, or give --binary PATH)")
    return a
