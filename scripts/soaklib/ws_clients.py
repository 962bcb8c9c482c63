"""scripts/soak's WebSocket kinds of client (WS_CLIENTS), at the persona's
echo path: every loop bounded in count and in time, every echo checked
byte for byte. Each kind counts, besides sent, answered, lost and wrong:
upgraded, echoed (messages whose echo came whole and right) and
echoed_bytes, echo_cut and echo_cut_bytes (whole messages whose echo a
reset cut: the server counted them), cut (messages cut by the client
before their end: not counted), pongs, closes (1000 echoed) and
closes_empty (an empty close echoed)."""
import time

from .counting import Pacer, bound
from .settings import OP_TIMEOUT_S, WS_CUT_MAX, WS_MESSAGE_MAX
from .wire import Lost, Wrong
from .ws_wire import BINARY, DEFLATE_OFFER, PING, PONG, TEXT, WsConn, frame

# Characters of one to four bytes in UTF-8, for text messages.
CHARS = ("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?-"
         "éßñøåçüÆ" "€✓中文字→∞ħ" "😀𝄞🚀🦊")
EDGE_SIZES = (0, 1, 125, 126, 127, 65535, 65536)
ABORTS = ("fin-mid-frame", "reset-mid-frame", "reset-mid-header", "fin-mid-message",
          "reset-mid-message", "reset-mid-echo", "fin-between", "reset-between")


class TextSource:
    """A block of random UTF-8 text, sliced at character boundaries."""

    def __init__(self, rnd):
        self.block = "".join(rnd.choice(CHARS) for _ in range(64000)).encode()
        assert len(self.block) > WS_MESSAGE_MAX + 8

    def text(self, rnd, n):
        """Valid UTF-8 of n bytes, or up to 3 fewer (n at most the block)."""
        start = rnd.randrange(len(self.block) - n - 4)
        while self.block[start] & 0xC0 == 0x80:
            start += 1
        end = start + n
        while self.block[end] & 0xC0 == 0x80:
            end -= 1
        return self.block[start:end]


def size(rnd, env):
    top = min(WS_MESSAGE_MAX, env.ws_max)
    r = rnd.random()
    if r < 0.1:
        return min(top, rnd.choice(EDGE_SIZES))
    if r < 0.4:
        return rnd.randint(0, top)
    return int(top ** rnd.random())


def message(rnd, text, env, n=None):
    """(opcode, payload): text or binary of a random size."""
    n = size(rnd, env) if n is None else n
    if rnd.random() < 0.5:
        return TEXT, text.text(rnd, n)
    return BINARY, rnd.randbytes(n)


def expect_echo(c, st, env, deadline, op, data, pongs=None):
    """The echo of (op, data), after the pongs due (each counted answered)."""
    due = len(pongs or ())
    got_op, got = c.read_message(deadline, pongs if pongs is not None else [], env.ws_max, st)
    if got_op != op:
        raise Wrong(f"a {'text' if got_op == TEXT else 'binary'} echo of a "
                    f"{'text' if op == TEXT else 'binary'} message of {len(data)} bytes")
    if got != data:
        at = next((i for i, (a, b) in enumerate(zip(got, data)) if a != b), min(len(got), len(data)))
        raise Wrong(f"the echo of a message of {len(data)} bytes has {len(got)}, first difference at {at}")
    st.add("answered", 1 + due)
    st.add("echoed")
    st.add("echoed_bytes", len(data))


def close_clean(c, st, ctx, code=1000, reason=b""):
    ctx["at"] = f"the close handshake ({'close ' + str(code) if code else 'an empty close'})"
    st.add("sent")
    c.close_handshake(time.monotonic() + OP_TIMEOUT_S, code, reason)
    st.add("answered")
    st.add("closes" if code else "closes_empty")


def ws_loop(env, st, rate, what, conn, offer=None):
    """Connections one after another: each upgraded, then conn(c, pacer, ctx)."""
    pacer = Pacer(rate)
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        ctx = {"at": "the handshake"}
        try:
            c = WsConn(env.port, st)
        except OSError as e:
            st.problem("lost", "connect", str(e))
            time.sleep(0.1)
            continue
        try:
            c.handshake(env.ws_path, env.port, offer)
            st.add("upgraded")
            conn(c, pacer, ctx)
        except Lost as e:
            st.problem("lost", f"{what}, {ctx['at']}", str(e))
        except Wrong as e:
            st.problem("wrong", f"{what}, {ctx['at']}", str(e))
        finally:
            c.close()


def ws_echo_client(env, st, rnd, rate):
    """Text and binary messages of random sizes, one to four at a time."""
    text = TextSource(rnd)

    def conn(c, pacer, ctx):
        for n in range(rnd.randint(10, 100)):
            if env.ctl.yielding():
                break
            burst = [message(rnd, text, env) for _ in range(rnd.choice((1, 1, 1, 2, 4)))]
            ctx["at"] = f"burst {n + 1} ({', '.join(str(len(d)) for _, d in burst)} bytes)"
            pacer.wait()
            c.send(b"".join(frame(op, data) for op, data in burst))
            st.add("sent", len(burst))
            deadline = time.monotonic() + OP_TIMEOUT_S
            for op, data in burst:
                expect_echo(c, st, env, deadline, op, data)
        close_clean(c, st, ctx)
    ws_loop(env, st, rate, "echo", conn)


def fragments(c, rnd, op, data, compress=False):
    """The frames of a message in 1 to 16 fragments (some empty), pings
    between some; returns (the frames, the pings' payloads)."""
    cuts = sorted(rnd.randint(0, len(data)) for _ in range(rnd.randint(1, 15)))
    out, pings = [], []
    frames = c.message_frames(op, data, cuts, compress)
    for i, f in enumerate(frames):
        out.append(f)
        if i < len(frames) - 1 and rnd.random() < 0.3:
            pings.append(rnd.randbytes(rnd.randint(0, 125)))
            out.append(frame(PING, pings[-1]))
    return out, pings, len(frames)


def ws_fragment_client(env, st, rnd, rate):
    """Messages in 2 to 16 fragments (text split anywhere, even inside a
    character), pings between fragments; pongs first, then the echo."""
    text = TextSource(rnd)

    def conn(c, pacer, ctx):
        for n in range(rnd.randint(5, 40)):
            if env.ctl.yielding():
                break
            op, data = message(rnd, text, env)
            out, pings, count = fragments(c, rnd, op, data)
            ctx["at"] = f"message {n + 1} ({len(data)} bytes in {count} fragments, {len(pings)} pings)"
            pacer.wait()
            if rnd.random() < 0.5:
                c.send(b"".join(out))
            else:
                for f in out:
                    c.send(f)
            st.add("sent", 1 + len(pings))
            st.add("fragments", count)
            st.add("pings", len(pings))
            expect_echo(c, st, env, time.monotonic() + OP_TIMEOUT_S, op, data, pings)
        close_clean(c, st, ctx)
    ws_loop(env, st, rate, "fragmented", conn)


def ws_deflate_client(env, st, rnd, rate):
    """Offers permessage-deflate; compresses (some messages fragmented) if
    the 101 agrees, else goes on uncompressed. Compressible messages."""
    text = TextSource(rnd)

    def conn(c, pacer, ctx):
        st.add("deflate_agreed" if c.pmd is not None else "deflate_declined")
        for n in range(rnd.randint(5, 40)):
            if env.ctl.yielding():
                break
            total = size(rnd, env)
            op, unit = message(rnd, text, env, rnd.randint(1, max(1, min(2000, total))))
            data = unit * (total // len(unit)) if unit else unit
            if rnd.random() < 0.3:
                out, pings, count = fragments(c, rnd, op, data, compress=True)
            else:
                out, pings, count = c.message_frames(op, data, (), compress=True), [], 1
            ctx["at"] = f"message {n + 1} ({len(data)} bytes, {count} frames)"
            pacer.wait()
            c.send(b"".join(out))
            st.add("sent", 1 + len(pings))
            expect_echo(c, st, env, time.monotonic() + OP_TIMEOUT_S, op, data, pings)
        close_clean(c, st, ctx)
    ws_loop(env, st, rate, "compressed", conn, offer=DEFLATE_OFFER)


def ws_ping_client(env, st, rnd, rate):
    """Pings of 0 to 125 random bytes, one or three at a time, sometimes
    after an unsolicited pong (no answer) or between messages."""
    text = TextSource(rnd)

    def conn(c, pacer, ctx):
        for n in range(rnd.randint(20, 100)):
            if env.ctl.yielding():
                break
            pings = [rnd.randbytes(rnd.randint(0, 125)) for _ in range(rnd.choice((1, 1, 1, 3)))]
            out = b"".join(frame(PING, p) for p in pings)
            if rnd.random() < 0.1:
                out = frame(PONG, rnd.randbytes(rnd.randint(0, 125))) + out
                st.add("unsolicited_pongs")
            ctx["at"] = f"ping burst {n + 1} ({len(pings)} pings)"
            pacer.wait()
            c.send(out)
            due = len(pings)
            st.add("sent", due)
            st.add("pings", due)
            deadline = time.monotonic() + OP_TIMEOUT_S
            c.read_pongs(deadline, pings, st)
            st.add("answered", due)
            if rnd.random() < 0.1:
                op, data = message(rnd, text, env, rnd.randint(0, 2000))
                c.send(frame(op, data))
                st.add("sent")
                expect_echo(c, st, env, deadline, op, data)
        close_clean(c, st, ctx)
    ws_loop(env, st, rate, "ping", conn)


def ws_close_client(env, st, rnd, rate):
    """Short connections: up to 3 messages, then close 1000 (with a UTF-8
    reason or none), or an empty close; the close echoed, then TCP closed."""
    text = TextSource(rnd)

    def conn(c, pacer, ctx):
        for n in range(rnd.randint(0, 3)):
            op, data = message(rnd, text, env, rnd.randint(0, 2000))
            ctx["at"] = f"message {n + 1}"
            c.send(frame(op, data))
            st.add("sent")
            expect_echo(c, st, env, time.monotonic() + OP_TIMEOUT_S, op, data)
        pacer.wait()
        r = rnd.random()
        if r < 0.2:
            close_clean(c, st, ctx, 0)
        else:
            close_clean(c, st, ctx, 1000, text.text(rnd, rnd.randint(1, 120)) if r < 0.6 else b"")
    ws_loop(env, st, rate, "clean close", conn)


def abort(c, st, rnd, env, text, variant):
    """Begins a message and cuts it (or, between messages, nothing) with a
    FIN (close) or a reset (SO_LINGER 0); no close frame."""
    if variant == "reset-mid-echo":
        # A whole message, its echo begun: the server counted it.
        n = min(env.ws_max, WS_CUT_MAX)
        c.send(frame(BINARY, rnd.randbytes(n)))
        st.add("sent")
        deadline = time.monotonic() + OP_TIMEOUT_S
        while len(c.buf) < 2:
            if not c.fill(deadline):
                raise Lost(f"closed before the echo of a message of {n} bytes")
        if c.buf[0] != 0x80 | BINARY:
            raise Wrong(f"a frame with first byte {c.buf[0]:#x} to a binary message")
        st.add("echo_cut")
        st.add("echo_cut_bytes", n)
    elif variant.endswith("mid-frame") or variant.endswith("mid-header"):
        op, data = message(rnd, text, env, max(1, size(rnd, env)))
        if not data:   # a text slice may come out empty
            op, data = BINARY, rnd.randbytes(1)
        f = frame(op, data)
        head = len(f) - len(data)   # the header and the mask key
        c.send(f[:rnd.randint(1, head - 1) if variant.endswith("header") else rnd.randint(head, len(f) - 1)])
        st.add("cut")
    elif variant.endswith("mid-message"):
        op, data = message(rnd, text, env, max(2, size(rnd, env)))
        if len(data) < 2:
            op, data = BINARY, rnd.randbytes(2)
        cuts = sorted(rnd.randint(1, len(data) - 1) for _ in range(rnd.randint(1, 4)))
        frames = c.message_frames(op, data, cuts)
        whole = rnd.randint(1, len(frames) - 1)
        c.send(b"".join(frames[:whole]))
        pings = [rnd.randbytes(rnd.randint(0, 125))]
        c.send(frame(PING, pings[0]))   # answered in the middle of a message
        st.add("sent")
        c.read_pongs(time.monotonic() + OP_TIMEOUT_S, pings, st)
        st.add("answered")
        if rnd.random() < 0.5:
            nxt = frames[whole]   # the next frame in part (skipping one could break the UTF-8)
            c.send(nxt[:rnd.randint(1, len(nxt) - 1)])
        st.add("cut")
    if variant.startswith("reset"):
        c.reset()
        st.add("resets")
    else:
        c.close()
        st.add("fins")


def ws_abort_client(env, st, rnd, rate):
    """Up to 3 messages echoed, then the connection cut: mid-frame (in its
    header or its payload), mid-message (after whole fragments and a ping),
    in the echo of a whole message, or between messages."""
    text = TextSource(rnd)
    count = [0]

    def conn(c, pacer, ctx):
        for n in range(rnd.randint(0, 3)):
            op, data = message(rnd, text, env)
            ctx["at"] = f"message {n + 1} before the cut"
            c.send(frame(op, data))
            st.add("sent")
            expect_echo(c, st, env, time.monotonic() + OP_TIMEOUT_S, op, data)
        variant = ABORTS[count[0] % len(ABORTS)]
        count[0] += 1
        ctx["at"] = variant
        pacer.wait()
        abort(c, st, rnd, env, text, variant)
    ws_loop(env, st, rate, "abort", conn)


WS_CLIENTS = {
    "ws-echo": ws_echo_client,
    "ws-frag": ws_fragment_client,
    "ws-deflate": ws_deflate_client,
    "ws-ping": ws_ping_client,
    "ws-abort": ws_abort_client,
    "ws-close": ws_close_client,
}
