"""What the suite expects back: an echo, a pong, a close with a given code,
the end of TCP. Each raises wsclient.Fail with a one-line reason."""
import struct
import time

from wsclient import (CLOSE, CLOSE_WAIT, PING, PONG, STEP, BINARY, TEXT, Closed, Fail,
                      Timeout, describe_close, frame, opname)

SERVER_PING_CAP = 16  # server pings skipped while waiting for one answer


def next_frame(conn, what, timeout=STEP):
    """The next frame that is not a server ping (our design sends none, but
    an unsolicited ping is no error); what names the frame awaited."""
    for _ in range(SERVER_PING_CAP):
        try:
            f = conn.read_frame(timeout)
        except Timeout:
            raise Fail("nothing within %g s; expected %s" % (timeout, what)) from None
        except Closed as e:
            how = "reset the connection" if e.reset else "closed TCP"
            raise Fail("the server %s without sending %s" % (how, what)) from None
        if f.opcode != PING:
            return f
    raise Fail("only server pings; expected %s" % what)


def diff(got, want):
    if len(got) != len(want):
        return "%d bytes, expected %d" % (len(got), len(want))
    at = next(i for i in range(len(got)) if got[i] != want[i])
    return "differs at byte %d of %d" % (at, len(want))


def message_payload(conn, f):
    """The payload of a whole-message frame, inflated if RSV1 says so."""
    if f.rsv & 4:
        return conn.pmd.decompress(f.payload)
    return f.payload


def expect_echo(conn, opcode, payload, timeout=STEP):
    """One unfragmented frame, same opcode, same payload."""
    want = "the echo (%s, %d bytes)" % (opname(opcode), len(payload))
    f = next_frame(conn, want, timeout)
    if f.opcode != opcode:
        raise Fail("got %s; expected %s" % (f.describe(), want))
    if not f.fin:
        raise Fail("the echo was fragmented (non-final first frame); expected one frame")
    got = message_payload(conn, f)
    if got != payload:
        raise Fail("the %s echo %s" % (opname(opcode), diff(got, payload)))


def expect_pong(conn, payload, timeout=STEP):
    want = "a pong with %r" % bytes(payload[:20]) if payload else "an empty pong"
    f = next_frame(conn, want, timeout)
    if f.opcode != PONG:
        raise Fail("got %s; expected %s" % (f.describe(), want))
    if f.payload != payload:
        raise Fail("pong payload %s" % diff(f.payload, payload))


def expect_answers(conn, sent, timeout=STEP):
    """The answers to sent, a list of (opcode, payload) as sent: a pong for
    each ping, in order among the pongs, and an echo for each message, in
    order among the echoes. A pong may overtake an echo or fall behind it
    (RFC 6455 5.5.2 asks only "as soon as practical")."""
    pongs = [p for op, p in sent if op == PING]
    echoes = [(op, p) for op, p in sent if op != PING]
    while pongs or echoes:
        f = next_frame(conn, "%d pongs and %d echoes more" % (len(pongs), len(echoes)), timeout)
        if f.opcode == PONG:
            if not pongs or f.payload != pongs[0]:
                want = "the pong %r" % bytes(pongs[0][:20]) if pongs else "no more pongs"
                raise Fail("got a pong with %r; expected %s" % (bytes(f.payload[:20]), want))
            pongs.pop(0)
            continue
        if not echoes:
            raise Fail("got %s; expected only pongs now" % f.describe())
        opcode, payload = echoes.pop(0)
        if f.opcode != opcode or not f.fin:
            raise Fail("got %s; expected the echo (%s, %d bytes)"
                       % (f.describe(), opname(opcode), len(payload)))
        got = message_payload(conn, f)
        if got != payload:
            raise Fail("the %s echo %s" % (opname(opcode), diff(got, payload)))


def check_close_payload(payload):
    """The server's own close frame must be well formed (RFC 6455 5.5.1, 7.4)."""
    if len(payload) == 1:
        raise Fail("the server's close frame has a 1-byte payload")
    if payload:
        code = struct.unpack("!H", payload[:2])[0]
        if code in (1004, 1005, 1006, 1015) or code < 1000 or 1016 <= code < 3000 or code >= 5000:
            raise Fail("the server's close frame has code %d, which may not be sent" % code)
        try:
            payload[2:].decode("utf-8")
        except UnicodeDecodeError:
            raise Fail("the server's close reason is not UTF-8") from None


def expect_tcp_close(conn, within=CLOSE_WAIT):
    """After its close frame the server sends nothing and closes TCP in time."""
    deadline = time.monotonic() + within
    while True:
        if conn.buf:
            raise Fail("the server sent %d more bytes after its close frame" % len(conn.buf))
        try:
            conn.fill(deadline)
        except Closed:
            return
        except Timeout:
            raise Fail("TCP still open %g s after the server's close frame" % within) from None


def expect_close(conn, code, timeout=STEP, tcp=True):
    """A close frame carrying code (None: an empty close), then the end of TCP."""
    want = "close %d" % code if code is not None else "an empty close"
    f = next_frame(conn, want, timeout)
    if f.opcode != CLOSE:
        raise Fail("got %s; expected %s" % (f.describe(), want))
    if code is None and f.payload:
        raise Fail("got %s; expected an empty close" % describe_close(f.payload))
    if code is not None and (len(f.payload) < 2 or struct.unpack("!H", f.payload[:2])[0] != code):
        raise Fail("got %s; expected %s" % (describe_close(f.payload), want))
    check_close_payload(f.payload)
    if tcp:
        expect_tcp_close(conn)


def expect_error(conn, data, code=1002, timeout=STEP):
    """Send data, which breaks the protocol: the server closes with code."""
    try:
        conn.send(data)
    except Closed:
        pass  # the close frame, if any, may still be waiting to be read
    expect_close(conn, code, timeout)


def error_case(build, code=1002, before=()):
    """A case: open, exchange the echoes in before ((opcode, payload) pairs),
    send build()'s bytes, expect close code and the end of TCP."""
    def run(ctx):
        conn = ctx.open()
        for opcode, payload in before:
            conn.send(frame(opcode, payload))
            expect_echo(conn, opcode, payload)
        expect_error(conn, build(), code)
    return run


def echo_case(messages, **open_kw):
    """A case: send every (opcode, payload) in one write, expect each echoed."""
    def run(ctx):
        conn = ctx.open(**open_kw)
        conn.send(b"".join(frame(op, p) for op, p in messages))
        for op, p in messages:
            expect_echo(conn, op, p)
    return run


def echo_works(ctx, text=b"still there"):
    """A fresh connection still gets an echo."""
    conn = ctx.open()
    conn.send(frame(TEXT, text) + frame(BINARY, text))
    expect_echo(conn, TEXT, text)
    expect_echo(conn, BINARY, text)


def send_until_closed(conn, data, chunk=65536):
    """Send data in pieces, stopping early once the server answers or closes
    (a server refusing a message may close before it is all sent)."""
    for i in range(0, len(data), chunk):
        if conn.readable():
            return
        try:
            conn.send(data[i:i + chunk])
        except (Closed, Timeout):
            return
