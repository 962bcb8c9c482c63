"""What the Python clients of tests/websocket/clients share: their argv,
the sizes and payloads (the Node and Go clients make the same ones), and
one line per check on stdout.

    CLIENT.py URL LIMIT DEFLATE      DEFLATE: yes if the persona agrees
                                     permessage-deflate to a browser's offer
"""
import random
import sys

MIB = 1 << 20
BASE_SIZES = (0, 1, 125, 126, 65535, 65536)
# 12 bytes of UTF-8: characters of 1, 2, 3 and 4 bytes.
TEXT_UNIT = "a\u00e9\u20ac\U0001d11ez "


def sizes(limit):
    """0 bytes to 1 MiB, none over the persona's limit, which is sent
    itself when it is under 1 MiB."""
    top = min(MIB, limit)
    return sorted({s for s in BASE_SIZES if s <= top} | {top})


def text(n):
    """n bytes of valid UTF-8 (str): TEXT_UNIT repeated, 'x' to fill."""
    whole, rest = divmod(n, len(TEXT_UNIT.encode()))
    return TEXT_UNIT * whole + "x" * rest


def binary(n):
    """n pseudo-random bytes (incompressible), the same for the same n."""
    return random.Random(n).randbytes(n)


def pieces(value, count):
    """value cut into `count` pieces of about the same length (a str is cut
    at characters, so every piece is valid UTF-8)."""
    step = max(1, len(value) // count)
    cuts = [value[i:i + step] for i in range(0, len(value), step)] or [value[:0]]
    if len(cuts) > count:
        cuts[count - 1:] = [value[:0].join(cuts[count - 1:])]
    return cuts


def fragment_sets(limit):
    """(label, fragments) of the fragmented messages, text and binary: a
    small one with an empty fragment in it, and one of min(64 KiB, limit)
    bytes in four fragments."""
    big = min(65536, limit)
    small_text = ["frag-", "", "m\u00e9nt \u20ac", "\U0001d11e end"]
    return [("text small", small_text),
            ("text %d in 4" % big, pieces(text(big), 4)),
            ("binary small", [b"\x00\x01", b"", b"\xff" * 100, b"end"]),
            ("binary %d in 4" % big, pieces(binary(big), 4))]


def describe(value):
    kind = "text" if isinstance(value, str) else "binary"
    size = len(value.encode()) if isinstance(value, str) else len(value)
    return "%s %d bytes" % (kind, size)


class Report:
    """PASS or FAIL lines, one per check, prefixed with the client's name
    and the variant (compression offered or not); INFO lines are not
    counted."""

    def __init__(self, client):
        self.client = client
        self.variant = ""
        self.failed = 0
        self.passed = 0
        self.doing = "the handshake"  # the check under way, for a session's failure

    def broken(self, error):
        """A FAIL line for what ended a session, naming the check under way."""
        self.check(False, "session ended during %s" % self.doing, "%s: %s" % (type(error).__name__, error))

    def line(self, word, what, detail=""):
        text = "%s %s %s%s" % (word, self.client, self.variant + ": " if self.variant else "", what)
        print(text + (" (" + detail + ")" if detail and word == "FAIL" else ""), flush=True)

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        self.line("PASS" if ok else "FAIL", what, detail)
        self.doing = "what follows " + what
        return ok

    def info(self, what):
        self.line("INFO", what)

    def same(self, got, want, what):
        """A byte-exact echo check: type and content."""
        if type(got) is not type(want):
            return self.check(False, what, "got %s, want %s" % (type(got).__name__, type(want).__name__))
        if got != want:
            return self.check(False, what, "got %s, differs from %s" % (describe(got), describe(want)))
        return self.check(True, what)

    def done(self):
        sys.exit(1 if self.failed or not self.passed else 0)


def argv():
    if len(sys.argv) != 4 or sys.argv[3] not in ("yes", "no"):
        raise SystemExit("usage: %s URL LIMIT yes|no" % sys.argv[0])
    return sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes"
