"""Cases: a slow client, stalled and hostile connections beside a good one,
and a flood of pings."""
import os
import struct
import time

from expect import check_close_payload, echo_works, expect_answers, expect_echo
from wsclient import (BINARY, CLOSE, PING, PONG, STEP, TEXT, Closed, Fail, Timeout, frame,
                      more, new_key, request_bytes, start)

FLOOD = 10000          # pings in the flood
FLOOD_CHUNK = 500      # pings per write
FLOOD_SEND_S = 8.0     # the longest the flood's writing may take
FLOOD_READ_S = 15.0    # the longest reading its answers may take
HOSTILE_SEND_S = 1.5   # how long a hostile client pushes unread messages


def slow_handshake(ctx):
    """The request and then a frame, one byte per write."""
    conn = ctx.tcp()
    conn.handshake(ctx.opts, slow=True)
    conn.send_slowly(frame(TEXT, b"slowly"))
    expect_echo(conn, TEXT, b"slowly")


def slow_frames(ctx):
    """A 16-bit-length text frame, a ping and a fragmented message, byte by byte."""
    conn = ctx.open()
    text = b"byte at a time " * 9  # 135 bytes: the extended length arrives split too
    data = (frame(TEXT, text) + frame(PING, b"slow ping")
            + start(BINARY, b"fr") + more(b"ag", fin=True))
    conn.send_slowly(data, delay=0.001)
    expect_answers(conn, [(TEXT, text), (PING, b"slow ping"), (BINARY, b"frag")])


def late_reader(ctx):
    """The client reads an echo only a second after it was sent."""
    conn = ctx.open()
    n = min(256 * 1024, ctx.opts.max_message)
    for opcode, payload in ((BINARY, os.urandom(n)), (TEXT, b"t" * n)):
        conn.send(frame(opcode, payload))
        time.sleep(1.0)
        expect_echo(conn, opcode, payload)


def hostile_beside(stall):
    """A case: a hostile connection does stall(ctx) and stays so; a second
    connection must still get echoes, then a third opened after it."""
    def run(ctx):
        hostile = stall(ctx)
        good = ctx.open()
        for i in range(3):
            payload = b"not stalled %d" % i
            good.send(frame(TEXT, payload))
            expect_echo(good, TEXT, payload)
        echo_works(ctx)
        hostile.close()
    return run


def stall_mid_frame(ctx):
    conn = ctx.open()
    conn.send(frame(BINARY, b"x" * 1000)[:2 + 2 + 4 + 10])  # header, key, 10 of 1000 bytes
    return conn


def stall_mid_header(ctx):
    conn = ctx.open()
    conn.send(b"\x82\xff\x00\x00")  # 2 of the 8 length bytes
    return conn


def stall_mid_handshake(ctx):
    conn = ctx.tcp()
    conn.send(request_bytes(ctx.opts, new_key())[:30])
    return conn


def stall_mid_message(ctx):
    conn = ctx.open()
    conn.send(start(TEXT, b"open message") + more(b" and more"))
    return conn


def stall_unread(ctx):
    """Messages whose echoes are never read, until the server pushes back."""
    conn = ctx.open()
    n = min(256 * 1024, ctx.opts.max_message)
    message = frame(BINARY, os.urandom(n))
    deadline = time.monotonic() + HOSTILE_SEND_S
    for _ in range(64):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            conn.send(message, timeout=left)
        except (Timeout, Closed):
            break
    return conn


def flood_send(conn, pings):
    """Write the pings in chunks without reading; stop when the server pushes
    back or the time is up. Returns how many were written whole."""
    deadline = time.monotonic() + FLOOD_SEND_S
    sent = 0
    while sent < len(pings):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            conn.send(b"".join(pings[sent:sent + FLOOD_CHUNK]), timeout=min(left, STEP))
        except (Timeout, Closed):
            break
        sent = min(sent + FLOOD_CHUNK, len(pings))
    return sent


def flood_read(conn, sent):
    """Pongs in order; returns (pongs, close payload or None)."""
    deadline = time.monotonic() + FLOOD_READ_S
    got = 0
    while got < FLOOD and time.monotonic() < deadline:
        try:
            f = conn.read_frame(min(STEP, max(0.01, deadline - time.monotonic())))
        except Timeout:
            if got >= sent:
                return got, None  # every whole chunk was answered
            raise Fail("%d pongs for %d pings written, then nothing for %g s"
                       % (got, sent, STEP)) from None
        except Closed:
            raise Fail("TCP closed without a close frame after %d pongs" % got) from None
        if f.opcode == CLOSE:
            check_close_payload(f.payload)
            return got, f.payload
        if f.opcode != PONG:
            raise Fail("got %s among the pongs" % f.describe())
        if f.payload != struct.pack("!I", got):
            raise Fail("pong %d carries %r: out of order or wrong" % (got, bytes(f.payload)))
        got += 1
    return got, None


def ping_flood(ctx):
    conn = ctx.open()
    pings = [frame(PING, struct.pack("!I", i)) for i in range(FLOOD)]
    sent = flood_send(conn, pings)
    got, close = flood_read(conn, sent)
    if close is None and got < sent:
        raise Fail("%d pongs for %d pings" % (got, sent))
    if close is None and sent == FLOOD:  # else a ping may have been cut short
        conn.send(frame(TEXT, b"after the flood"))
        expect_echo(conn, TEXT, b"after the flood", timeout=5)
    echo_works(ctx, b"after a ping flood")


def cases(opts):
    return [
        ("slow.bytewise-handshake-and-frame", slow_handshake),
        ("slow.bytewise-frames", slow_frames),
        ("slow.late-reader", late_reader),
        ("stall.mid-frame-beside-good-connection", hostile_beside(stall_mid_frame)),
        ("stall.mid-length-beside-good-connection", hostile_beside(stall_mid_header)),
        ("stall.mid-handshake-beside-good-connection", hostile_beside(stall_mid_handshake)),
        ("stall.open-message-beside-good-connection", hostile_beside(stall_mid_message)),
        ("stall.unread-echoes-beside-good-connection", hostile_beside(stall_unread)),
        ("flood.10000-pings-unread", ping_flood),
    ]
