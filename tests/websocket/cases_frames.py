"""Cases: the opening handshake, masking, reserved bits and opcodes, and
framing (payload lengths and their encoding)."""
import os

from expect import echo_case, error_case, expect_answers, expect_echo
from wsclient import (BINARY, CLOSE, CONT, PING, RSV1, RSV2, RSV3, TEXT, Fail, accept_for,
                      close_payload, frame, start)

RFC_KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 1.3's sample nonce
RFC_ACCEPT = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def make_text(n):
    """Valid UTF-8 of exactly n bytes, mixing 1- to 4-byte characters."""
    unit = "aé€😀".encode("utf-8")  # 1 + 2 + 3 + 4 bytes
    whole = unit * (n // len(unit))
    return whole + b"x" * (n - len(whole))


# -- handshake

def handshake_rfc_sample(ctx):
    if accept_for(RFC_KEY) != RFC_ACCEPT:
        raise Fail("suite error: the RFC sample accept does not compute")
    conn = ctx.tcp()
    conn.handshake(ctx.opts, key=RFC_KEY)  # check_101 compares the accept
    conn.send(frame(TEXT, b"sample"))
    expect_echo(conn, TEXT, b"sample")


def handshake_random_key(ctx):
    for _ in range(3):
        conn = ctx.open()
        conn.send(frame(BINARY, b"key"))
        expect_echo(conn, BINARY, b"key")


def handshake_lowercase(ctx):
    conn = ctx.open(lower=True)
    conn.send(frame(TEXT, b"lower-case names"))
    expect_echo(conn, TEXT, b"lower-case names")


def handshake_no_extensions(ctx):
    conn = ctx.open()
    if conn.response.get("sec-websocket-extensions"):
        raise Fail("Sec-WebSocket-Extensions %r though none was offered"
                   % conn.response.get("sec-websocket-extensions"))


def handshake_unknown_extension(ctx):
    conn = ctx.open(extensions="x-webkit-unknown; foo=1, x-other")
    if conn.response.get("sec-websocket-extensions"):
        raise Fail("unknown extensions answered: %r"
                   % conn.response.get("sec-websocket-extensions"))
    conn.send(frame(TEXT, b"ignored"))
    expect_echo(conn, TEXT, b"ignored")


def handshake_frame_with_request(ctx):
    conn = ctx.tcp()
    conn.handshake(ctx.opts, after=frame(TEXT, b"early") + frame(PING, b"p"))
    expect_answers(conn, [(TEXT, b"early"), (PING, b"p")])


HANDSHAKE = [
    ("handshake.accept-rfc-sample-key", handshake_rfc_sample),
    ("handshake.accept-random-keys", handshake_random_key),
    ("handshake.lowercase-request-headers", handshake_lowercase),
    ("handshake.no-unoffered-extensions", handshake_no_extensions),
    ("handshake.unknown-extension-ignored", handshake_unknown_extension),
    ("handshake.frames-in-request-packet", handshake_frame_with_request),
]


# -- masking

def masking_zero_key(ctx):
    conn = ctx.open()
    conn.send(frame(TEXT, b"zero key", key=b"\0\0\0\0"))
    expect_echo(conn, TEXT, b"zero key")


def unmasked_continuation():
    return frame(TEXT, b"masked ", fin=False) + frame(CONT, b"unmasked", masked=False)


MASKING = [
    ("masking.zero-key-echo", masking_zero_key),
    ("masking.unmasked-text", error_case(lambda: frame(TEXT, b"hello", masked=False))),
    ("masking.unmasked-binary", error_case(lambda: frame(BINARY, b"\x01\x02", masked=False))),
    ("masking.unmasked-empty-text", error_case(lambda: frame(TEXT, b"", masked=False))),
    ("masking.unmasked-ping", error_case(lambda: frame(PING, b"p", masked=False))),
    ("masking.unmasked-close", error_case(lambda: frame(CLOSE, close_payload(1000), masked=False))),
    ("masking.unmasked-continuation", error_case(unmasked_continuation)),
    ("masking.unmasked-after-echo",
     error_case(lambda: frame(TEXT, b"second", masked=False), before=[(TEXT, b"first")])),
]


# -- reserved bits and opcodes

def reserved_cases():
    out = [
        ("reserved.rsv1-text", error_case(lambda: frame(TEXT, b"rsv1", rsv=RSV1))),
        ("reserved.rsv2-text", error_case(lambda: frame(TEXT, b"rsv2", rsv=RSV2))),
        ("reserved.rsv3-binary", error_case(lambda: frame(BINARY, b"rsv3", rsv=RSV3))),
        ("reserved.rsv-all-binary", error_case(lambda: frame(BINARY, b"rsv", rsv=7))),
        ("reserved.rsv1-ping", error_case(lambda: frame(PING, b"rsv", rsv=RSV1))),
        ("reserved.rsv2-close", error_case(lambda: frame(CLOSE, close_payload(1000), rsv=RSV2))),
        ("reserved.rsv1-continuation",
         error_case(lambda: start(TEXT, b"a") + frame(CONT, b"b", rsv=RSV1))),
        ("reserved.rsv1-after-echo",
         error_case(lambda: frame(TEXT, b"x", rsv=RSV1), before=[(BINARY, b"first")])),
    ]
    for op in list(range(3, 8)) + list(range(0xB, 0x10)):
        out.append(("reserved.opcode-0x%x" % op,
                    error_case(lambda op=op: frame(op, b"reserved"))))
    out.append(("reserved.opcode-0x5-empty-after-echo",
                error_case(lambda: frame(5, b""), before=[(TEXT, b"first")])))
    return out


# -- framing: lengths and their encoding

def framing_cases(opts):
    out = []
    for n in (0, 1, 125, 126, 127, 65535, 65536, 65537):
        if n > opts.max_message:
            continue
        out.append(("framing.echo-text-%d" % n, echo_case([(TEXT, make_text(n))])))
        out.append(("framing.echo-binary-%d" % n, echo_case([(BINARY, os.urandom(n))])))
    out += [
        ("framing.echo-binary-all-byte-values", echo_case([(BINARY, bytes(range(256)) * 4)])),
        ("framing.echo-100-messages-one-write", echo_case(sequence(opts))),
        ("framing.nonminimal-length-16bit",
         error_case(lambda: frame(TEXT, b"short", length_bytes=2))),
        ("framing.nonminimal-length-64bit",
         error_case(lambda: frame(BINARY, b"x" * 200, length_bytes=8))),
        ("framing.nonminimal-length-64bit-empty",
         error_case(lambda: frame(TEXT, b"", length_bytes=8))),
        ("framing.length-64bit-top-bit-set",
         error_case(lambda: frame(BINARY, b"top", length=(1 << 63) | 3, length_bytes=8))),
        ("framing.length-64bit-max",
         error_case(lambda: frame(BINARY, b"max", length=(1 << 64) - 1, length_bytes=8))),
    ]
    return out


def sequence(opts):
    """100 messages, text and binary, 0 to 2,000 bytes."""
    out = []
    for i in range(100):
        n = min((i * 37) % 2001, opts.max_message)
        out.append((TEXT, make_text(n)) if i % 2 else (BINARY, os.urandom(n)))
    return out


def cases(opts):
    return HANDSHAKE + MASKING + reserved_cases() + framing_cases(opts)
