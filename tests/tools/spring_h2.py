#!/usr/bin/python3
"""hello-spring --h2 against Tomcat's capture (issue 23, item 4).

For every case in tests/fixtures/personas/spring/h2/ (each endpoint and
method by h2c prior knowledge, by Upgrade: h2c and over TLS, and the cases
closed without GOAWAY), starts hello-spring --h2 (and --h2 --tls) on a free
loopback port, plays the case with the same client that captured Tomcat
(scripts/peers/h2_recorder.py) and compares what it recorded with the
fixture: every frame the server sent, in order (type, flags, stream,
length, SETTINGS, PING data, DATA, GOAWAY), the header list of each
HEADERS (names, values and order; the date as a valid date of now), the
Upgrade 101 head, and how the connection ended.

What may differ, and is left out of the comparison: the HPACK encoding of
the header lists (the encoder is nghttp2's, not Tomcat's: its choice of
indexing and Huffman, so a HEADERS frame's length), the TLS cipher (JSSE
and OpenSSL choose differently; the version and ALPN are compared), and
how a TLS connection ends after the client's GOAWAY or close (Tomcat
closes without close_notify after a GOAWAY; ours sends close_notify
first). Those differences are printed with --verbose.

Exit status: 0 when every case matches, 1 when one differs, 77 (ctest's
skip) when python3-h2 is missing.

    usage: spring_h2.py --bin-dir DIR [--verbose]
"""
import argparse
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "personas", "spring", "h2")
sys.path.insert(0, os.path.join(ROOT, "scripts", "peers"))
try:
    from h2_recorder import capture  # noqa: E402
except ImportError as e:  # python3-h2 (hpack, hyperframe) is not installed
    print(f"spring_h2: skipped: {e}", file=sys.stderr)
    sys.exit(77)

# The HPACK details of a header field and of a HEADERS frame's size.
HPACK_KEYS = ("repr", "index", "name_index", "name_huffman", "value_huffman")
HEADERS_SIZE_KEYS = ("length", "length_without_date_value")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, flags):
    port = free_port()
    proc = subprocess.Popen([binary, "-p", str(port), *flags], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"spring_h2: {binary} {' '.join(flags)} exited: "
                                 f"{proc.stderr.read().decode(errors='replace')}")
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"spring_h2: {binary} did not listen on {port}")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def comparable(record, tls):
    """The record without what may differ (see the docstring)."""
    r = json.loads(json.dumps(record))
    r.pop("case", None)
    r.pop("server", None)
    if "tls" in r:
        r["tls"].pop("cipher", None)
    for phase in ("request", "client_goaway", "client_close"):
        if phase not in r:
            continue
        for frame in r[phase]["server"]:
            if frame["type"] == "HEADERS":
                for key in HEADERS_SIZE_KEYS:
                    frame.pop(key, None)
                for field in frame.get("headers", []):
                    for key in HPACK_KEYS:
                        field.pop(key, None)
        if tls and phase != "request":
            r[phase].pop("connection", None)
    return r


def diff(want, got, path=""):
    """Lines naming each place where got differs from want."""
    if type(want) is not type(got):
        return [f"{path or '/'}: want {json.dumps(want)}, got {json.dumps(got)}"]
    if isinstance(want, dict):
        out = []
        for k in sorted(set(want) | set(got)):
            if k not in got:
                out.append(f"{path}/{k}: missing, want {json.dumps(want[k])}")
            elif k not in want:
                out.append(f"{path}/{k}: unexpected {json.dumps(got[k])}")
            else:
                out += diff(want[k], got[k], f"{path}/{k}")
        return out
    if isinstance(want, list):
        out = [] if len(want) == len(got) else [f"{path}: {len(want)} items wanted, {len(got)} got"]
        for i, (w, g) in enumerate(zip(want, got)):
            out += diff(w, g, f"{path}[{i}]")
        return out
    return [] if want == got else [f"{path}: want {json.dumps(want)}, got {json.dumps(got)}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, help="where hello-spring is")
    parser.add_argument("--verbose", action="store_true", help="also print what is left out")
    args = parser.parse_args()
    binary = os.path.join(args.bin_dir, "hello-spring")
    files = sorted(glob.glob(os.path.join(FIXTURES, "*.json")))
    if not files:
        raise SystemExit(f"spring_h2: no fixtures in {FIXTURES}")
    clear, clear_port = start(binary, ["--h2"])
    tls, tls_port = start(binary, ["--h2", "--tls"])
    failed = 0
    try:
        for path in files:
            want = json.load(open(path))
            case = want["case"]
            route, rest = case.split(".", 1)
            method = rest.split("-", 1)[0].upper()
            mode = next(m for m in ("h2c-prior", "h2c-upgrade", "h2-tls") if m in rest)
            goaway = not rest.endswith("-nogoaway")
            port = tls_port if mode == "h2-tls" else clear_port
            got = capture(mode, method, "/json" if route == "json" else "/", port, goaway)
            problems = diff(comparable(want, mode == "h2-tls"), comparable(got, mode == "h2-tls"))
            print(f"spring_h2: {case}: {'differs' if problems else 'same frames'}")
            for line in problems:
                print(f"  {line}")
            if args.verbose and not problems:
                left = diff(want, dict(got, case=case, server=want.get("server")))
                for line in left:
                    print(f"  (left out) {line}")
            failed += bool(problems)
    finally:
        stop(clear)
        stop(tls)
    print(f"spring_h2: {len(files) - failed} of {len(files)} cases as Tomcat sends them")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
