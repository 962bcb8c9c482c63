#!/usr/bin/python3
"""WebSocket conformance suite (RFC 6455, RFC 7692) against one echo server.

    conformance.py --port P --path /ws [--host 127.0.0.1] [--tls]
                   [--max-message BYTES] [--deflate] [--only REGEX] [--list]

One line per case, `ok NAME` or `FAIL NAME: why`; a summary on stderr.
Exit 0 if every case passed, 1 if one failed, 2 on a bad flag.
Loopback only; standard library only (zlib for --deflate)."""
import argparse
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree

import cases_control  # noqa: E402 (after the line above)
import cases_deflate  # noqa: E402
import cases_frames  # noqa: E402
import cases_load  # noqa: E402
import cases_text  # noqa: E402
from wsclient import Closed, Conn, Fail, Timeout, check_loopback  # noqa: E402

SUITE_CAP = 90.0  # seconds: cases not started by then are reported as failed, unrun
MODULES = (cases_frames, cases_control, cases_text, cases_load, cases_deflate)


class Ctx:
    """What a case gets: the options, and connections it opens (all closed
    when the case ends)."""

    def __init__(self, opts):
        self.opts = opts
        self.conns = []

    def tcp(self):
        conn = Conn.connect(self.opts)
        self.conns.append(conn)
        return conn

    def open(self, extensions=None, **kw):
        conn = self.tcp()
        conn.handshake(self.opts, extensions=extensions, **kw)
        return conn

    def close(self):
        for conn in self.conns:
            conn.close()


def all_cases(opts):
    out = []
    for module in MODULES:
        out += module.cases(opts)
    names = [name for name, _ in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise SystemExit("suite error: duplicate case names %s" % sorted(dupes))
    return out


def run_case(fn, opts):
    """None if the case passed, else a one-line reason."""
    ctx = Ctx(opts)
    try:
        fn(ctx)
        return None
    except Fail as e:
        return str(e)
    except Timeout:
        return "a write or read waited too long (the server stopped reading?)"
    except Closed as e:
        return str(e)
    except OSError as e:
        return "socket error: %s" % e
    except Exception as e:  # a bug in the suite, reported as a failure
        return "suite error: %s: %s" % (type(e).__name__, e)
    finally:
        ctx.close()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--tls", action="store_true", help="wss: TLS, certificate not verified")
    p.add_argument("--max-message", type=int, default=1 << 20, metavar="BYTES",
                   help="the server's message limit (default 1 MiB)")
    p.add_argument("--deflate", action="store_true",
                   help="the server negotiates permessage-deflate")
    p.add_argument("--only", metavar="REGEX", help="run the cases whose name matches")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    opts = p.parse_args(argv)
    if not 0 < opts.port < 65536:
        p.error("--port must be 1-65535")
    if not opts.path.startswith("/") or any(c in opts.path for c in " \r\n"):
        p.error("--path must start with / and hold no spaces")
    if not 8192 <= opts.max_message <= 16 << 20:
        p.error("--max-message must be 8 KiB to 16 MiB (the fixed cases send up to 5,000 bytes)")
    try:
        opts.only = re.compile(opts.only) if opts.only is not None else None
    except re.error as e:
        p.error("--only: %s" % e)
    if not opts.list and not check_loopback(opts.host):
        p.error("--host must be a loopback address")
    return opts


def main(argv=None):
    opts = parse_args(argv)
    cases = [(n, fn) for n, fn in all_cases(opts) if opts.only is None or opts.only.search(n)]
    if opts.list:
        for name, _ in cases:
            print(name)
        return 0
    start = time.monotonic()
    failed = 0
    for name, fn in cases:
        if time.monotonic() - start > SUITE_CAP:
            why = "not run: the suite passed its %g s cap" % SUITE_CAP
        else:
            why = run_case(fn, opts)
        if why is None:
            print("ok %s" % name, flush=True)
        else:
            failed += 1
            print("FAIL %s: %s" % (name, why.replace("\n", " ")), flush=True)
    print("%d cases, %d failed, %.1f s" % (len(cases), failed, time.monotonic() - start),
          file=sys.stderr)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
