"""Cases: UTF-8 in text messages, the close handshake, and the message
size limit (--max-message)."""
import os

from cases_control import fragments
from cases_frames import make_text
from expect import (echo_case, error_case, expect_close, expect_echo, expect_error, expect_pong,
                    send_until_closed)
from wsclient import BINARY, CLOSE, CONT, PING, TEXT, close_payload, frame, more, start

VALID = "aé€😀\U0010FFFF\uFFFE\uFFFF\u0000\u07FF\u0800\U00010000 κόσμε".encode("utf-8")

INVALID = [  # (name, bytes): each invalid wherever it stands (RFC 3629)
    ("byte-ff", b"ab\xffcd"),
    ("byte-fe", b"\xfe"),
    ("lone-continuation", b"a\x80b"),
    ("overlong-2-byte", b"\xc0\xaf"),
    ("overlong-3-byte", b"\xe0\x80\xaf"),
    ("overlong-4-byte", b"\xf0\x80\x80\xaf"),
    ("surrogate-d800", b"\xed\xa0\x80"),
    ("surrogate-dfff", b"\xed\xbf\xbf"),
    ("above-10ffff", b"\xf4\x90\x80\x80"),
    ("5-byte-form", b"\xf8\x88\x80\x80\x80"),
    ("start-byte-then-ascii", b"\xe2\x28\xa1"),
]


def utf8_cases():
    out = [
        ("utf8.valid-multibyte", echo_case([(TEXT, VALID)])),
        ("utf8.valid-split-every-byte", split_case(VALID)),
        ("utf8.valid-split-mid-codepoint", split_case(VALID, sizes=(2, 3, 5, 1))),
        ("utf8.binary-not-checked", echo_case([(BINARY, b"\xff\xfe\xc0\xaf\xed\xa0\x80")])),
    ]
    for name, bad in INVALID:
        out.append(("utf8.invalid-" + name, error_case(lambda bad=bad: frame(TEXT, bad), 1007)))
    out += [
        ("utf8.invalid-in-last-fragment",
         error_case(lambda: fragments(TEXT, [b"valid ", b"still ", b"bad \xff"]), 1007)),
        ("utf8.truncated-at-message-end", error_case(lambda: frame(TEXT, b"euro \xe2\x82"), 1007)),
        ("utf8.truncated-at-fragmented-end",
         error_case(lambda: fragments(TEXT, [b"euro ", b"\xe2", b"\x82"]), 1007)),
        ("utf8.invalid-after-echo", error_case(lambda: frame(TEXT, b"\xc0\x80"), 1007,
                                               before=[(TEXT, VALID)])),
        # fail fast: the close comes although the message never ends
        ("utf8.fail-fast-first-fragment", error_case(lambda: start(TEXT, b"bad \xff"), 1007)),
        ("utf8.fail-fast-second-fragment",
         error_case(lambda: start(TEXT, b"hello ") + more(b"\xff"), 1007)),
        ("utf8.fail-fast-split-sequence",
         error_case(lambda: start(TEXT, b"a\xe2") + more(b"\x28"), 1007)),
        ("utf8.fail-fast-split-surrogate",
         error_case(lambda: start(TEXT, b"\xed") + more(b"\xa0\x80"), 1007)),
        ("utf8.fail-fast-above-10ffff-prefix",
         error_case(lambda: start(TEXT, b"ok") + more(b"\xf4\x90"), 1007)),
        ("utf8.fail-fast-with-ping-between", fail_fast_with_ping),
    ]
    return out


def fail_fast_with_ping(ctx):
    """The ping between the fragments is answered, then the bad byte is refused."""
    conn = ctx.open()
    conn.send(start(TEXT, b"\xce") + frame(PING, b"before"))
    expect_pong(conn, b"before")
    expect_error(conn, more(b"\xff"), 1007)


def split_case(data, sizes=(1,)):
    """data as a text message cut into pieces of the given sizes, in turn."""
    def run(ctx):
        parts, i, k = [], 0, 0
        while i < len(data):
            n = sizes[k % len(sizes)]
            parts.append(data[i:i + n])
            i, k = i + n, k + 1
        conn = ctx.open()
        conn.send(fragments(TEXT, parts))
        expect_echo(conn, TEXT, data)
    return run


# -- close

def close_echo_case(payload, code):
    """Send a close; the server answers a close with code (None: empty)."""
    def run(ctx):
        conn = ctx.open()
        conn.send(frame(CLOSE, payload))
        expect_close(conn, code)
    return run


def close_after_echo(ctx):
    conn = ctx.open()
    conn.send(frame(TEXT, b"last words") + frame(CLOSE, close_payload(1000, b"bye")))
    expect_echo(conn, TEXT, b"last words")
    expect_close(conn, 1000)


def close_then_data(ctx):
    """Frames after the client's close are not answered (RFC 6455 5.5.1)."""
    conn = ctx.open()
    conn.send(frame(CLOSE, close_payload(1000)) + frame(TEXT, b"too late") + frame(PING, b"late"))
    expect_close(conn, 1000)


def close_mid_message(ctx):
    """A close while a fragmented message is open is still a close."""
    conn = ctx.open()
    conn.send(start(TEXT, b"unfinished") + frame(CLOSE, close_payload(1001)))
    expect_close(conn, 1001)


VALID_CODES = (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
               3000, 3999, 4000, 4999)
INVALID_CODES = (0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535)


def close_cases():
    out = [
        ("close.normal-1000-with-reason", close_echo_case(close_payload(1000, b"bye"), 1000)),
        ("close.empty", close_echo_case(b"", None)),
        ("close.reason-123-bytes", close_echo_case(close_payload(1000, b"r" * 123), 1000)),
        ("close.reason-utf8",
         close_echo_case(close_payload(1001, "adiós €😀".encode("utf-8")), 1001)),
        ("close.after-echo-one-write", close_after_echo),
        ("close.frames-after-close-ignored", close_then_data),
        ("close.while-fragmented-message-open", close_mid_message),
    ]
    for code in VALID_CODES:
        out.append(("close.valid-code-%d" % code, close_echo_case(close_payload(code), code)))
    for code in INVALID_CODES:
        out.append(("close.invalid-code-%d" % code,
                    error_case(lambda code=code: frame(CLOSE, close_payload(code)))))
    out += [
        ("close.one-byte-payload", error_case(lambda: frame(CLOSE, b"\x03"))),
        ("close.reason-invalid-utf8",
         error_case(lambda: frame(CLOSE, close_payload(1000, b"\xff\xfe")), 1007)),
        ("close.reason-truncated-utf8",
         error_case(lambda: frame(CLOSE, close_payload(1000, b"\xe2\x82")), 1007)),
    ]
    return out


# -- the message size limit

def over_limit_case(build):
    def run(ctx):
        conn = ctx.open()
        send_until_closed(conn, build(ctx.opts.max_message))
        expect_close(conn, 1009)
    return run


def at_limit_case(opcode):
    def run(ctx):
        n = ctx.opts.max_message
        payload = make_text(n) if opcode == TEXT else os.urandom(n)
        conn = ctx.open()
        conn.send(frame(opcode, payload), timeout=5)
        expect_echo(conn, opcode, payload, timeout=10)
    return run


def at_limit_fragmented(ctx):
    n = ctx.opts.max_message
    parts = [os.urandom(n // 4)] * 3 + [os.urandom(n - 3 * (n // 4))]
    conn = ctx.open()
    conn.send(fragments(BINARY, parts), timeout=5)
    expect_echo(conn, BINARY, b"".join(parts), timeout=10)


def over_split(limit):
    half = limit // 2
    return start(BINARY, b"\x01" * half) + more(b"\x02" * (limit - half + 1), fin=True)


def over_after_ping(ctx):
    """Still 1009 when the over-limit fragment follows a ping mid-message."""
    conn = ctx.open()
    n = ctx.opts.max_message
    conn.send(start(TEXT, b"x" * (n // 2)) + frame(PING, b"p"), timeout=5)
    expect_pong(conn, b"p")
    send_until_closed(conn, frame(CONT, b"y" * (n - n // 2 + 1)))
    expect_close(conn, 1009)


def limit_cases():
    return [
        ("limit.echo-binary-at-max", at_limit_case(BINARY)),
        ("limit.echo-text-at-max", at_limit_case(TEXT)),
        ("limit.echo-fragmented-at-max", at_limit_fragmented),
        ("limit.over-max-binary", over_limit_case(lambda n: frame(BINARY, b"\x00" * (n + 1)))),
        ("limit.over-max-text", over_limit_case(lambda n: frame(TEXT, b"a" * (n + 1)))),
        ("limit.over-max-fragmented", over_limit_case(over_split)),
        ("limit.over-max-in-last-fragment-after-ping", over_after_ping),
    ]


def cases(opts):
    return utf8_cases() + close_cases() + limit_cases()
