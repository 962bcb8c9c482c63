"""Cases: control frames (ping, pong, their limits) and fragmentation."""
import os

from expect import error_case, expect_answers, expect_echo, expect_pong
from wsclient import BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload, frame, more, start


def ping_case(payload):
    def run(ctx):
        conn = ctx.open()
        conn.send(frame(PING, payload))
        expect_pong(conn, payload)
    return run


def pings_one_write(ctx):
    conn = ctx.open()
    payloads = [b"ping %d" % i for i in range(10)]
    conn.send(b"".join(frame(PING, p) for p in payloads))
    for p in payloads:
        expect_pong(conn, p)


def pong_ignored(ctx):
    conn = ctx.open()
    conn.send(frame(PONG, b"unsolicited") + frame(PONG, b"") + frame(TEXT, b"after pongs"))
    expect_echo(conn, TEXT, b"after pongs")  # anything first (a pong back) fails


def ping_between_fragments(ctx):
    conn = ctx.open()
    conn.send(start(TEXT, b"Hel") + frame(PING, b"A") + more(b"lo ") + frame(PING, b"B")
              + more(b"world", fin=True))
    expect_answers(conn, [(PING, b"A"), (PING, b"B"), (TEXT, b"Hello world")])


def ping_mid_message(ctx):
    """The pong comes before the message's last fragment is sent."""
    conn = ctx.open()
    conn.send(start(BINARY, b"part one, ") + frame(PING, b"mid"))
    expect_pong(conn, b"mid")
    conn.send(frame(CONT, b"part two"))
    expect_echo(conn, BINARY, b"part one, part two")


def close_126():
    return frame(CLOSE, close_payload(1000, b"r" * 124))


CONTROL = [
    ("control.ping-empty", ping_case(b"")),
    ("control.ping-text-payload", ping_case(b"Hello, pong")),
    ("control.ping-binary-payload", ping_case(bytes(range(256))[::-3][:80])),
    ("control.ping-125-bytes", ping_case(os.urandom(125))),
    ("control.pings-one-write-in-order", pings_one_write),
    ("control.pong-unsolicited-ignored", pong_ignored),
    ("control.ping-between-fragments", ping_between_fragments),
    ("control.ping-answered-mid-message", ping_mid_message),
    ("control.ping-126-bytes", error_case(lambda: frame(PING, b"p" * 126))),
    ("control.ping-126-bytes-16bit-length",
     error_case(lambda: frame(PING, b"p" * 126, length_bytes=2))),
    ("control.pong-126-bytes", error_case(lambda: frame(PONG, b"p" * 126))),
    ("control.close-126-bytes", error_case(close_126)),
    ("control.ping-fragmented", error_case(lambda: start(PING, b"frag") + more(b"ment", fin=True))),
    ("control.pong-fragmented", error_case(lambda: frame(PONG, b"frag", fin=False))),
    ("control.close-fragmented",
     error_case(lambda: frame(CLOSE, close_payload(1000), fin=False) + frame(CONT, b""))),
]


# -- fragmentation

def fragments(opcode, parts):
    """Frames carrying parts as one message (an opcode frame, then continuations)."""
    out = []
    for i, part in enumerate(parts):
        out.append(frame(opcode if i == 0 else CONT, part, fin=i == len(parts) - 1))
    return b"".join(out)


def fragmented_case(opcode, parts):
    def run(ctx):
        conn = ctx.open()
        conn.send(fragments(opcode, parts))
        expect_echo(conn, opcode, b"".join(parts))
    return run


def one_at_a_time(ctx):
    """Each fragment its own write; the server waits for the last."""
    conn = ctx.open()
    parts = [b"one ", b"", b"at ", b"a ", b"time"]
    for i, part in enumerate(parts):
        conn.send(frame(TEXT if i == 0 else CONT, part, fin=i == len(parts) - 1))
    expect_echo(conn, TEXT, b"".join(parts))


def interleaved_messages(ctx):
    """Fragmented, whole, fragmented: echoed in order, each whole."""
    conn = ctx.open()
    conn.send(fragments(TEXT, [b"a", b"b"]) + frame(BINARY, b"c")
              + fragments(BINARY, [b"d", b"e", b"f"]))
    expect_echo(conn, TEXT, b"ab")
    expect_echo(conn, BINARY, b"c")
    expect_echo(conn, BINARY, b"def")


def fragment_cases(opts):
    many = [os.urandom(i % 7) for i in range(min(1000, opts.max_message // 3))]
    big = os.urandom(min(70000, opts.max_message // 2))
    return [
        ("fragment.text-3", fragmented_case(TEXT, [b"Hello", b", ", b"world"])),
        ("fragment.binary-3", fragmented_case(BINARY, [b"\x00\x01", b"\xff" * 200, b"\x80"])),
        ("fragment.empty-first-middle-last",
         fragmented_case(TEXT, [b"", b"mid", b"", b"dle", b""])),
        ("fragment.all-empty-text", fragmented_case(TEXT, [b"", b"", b""])),
        ("fragment.all-empty-binary", fragmented_case(BINARY, [b"", b""])),
        ("fragment.one-byte-fragments", fragmented_case(TEXT, [bytes([c]) for c in b"x" * 100])),
        ("fragment.1000-fragments", fragmented_case(BINARY, many)),
        ("fragment.large-fragments", fragmented_case(BINARY, [big, big])),
        ("fragment.separate-writes", one_at_a_time),
        ("fragment.interleaved-with-whole-messages", interleaved_messages),
        ("fragment.continuation-without-start", error_case(lambda: frame(CONT, b"orphan"))),
        ("fragment.continuation-after-final",
         error_case(lambda: frame(CONT, b"late"), before=[(TEXT, b"done")])),
        ("fragment.text-while-message-open",
         error_case(lambda: start(TEXT, b"a") + frame(TEXT, b"b"))),
        ("fragment.binary-while-text-open",
         error_case(lambda: start(TEXT, b"a") + frame(BINARY, b"b"))),
        ("fragment.text-while-binary-open",
         error_case(lambda: start(BINARY, b"a") + more(b"b") + frame(TEXT, b"c"))),
        ("fragment.nonfinal-text-while-open",
         error_case(lambda: start(TEXT, b"a") + start(TEXT, b"b"))),
    ]


def cases(opts):
    return CONTROL + fragment_cases(opts)
