"""scripts/soak's kinds of client, one function each (CLIENTS): every loop
bounded in count and in time."""
import socket
import time

import select
from .counting import Pacer, bound, connect
from .settings import (HEADER_TIMEOUT_S, MAX_HEADER_BYTES, OP_TIMEOUT_S, PIPELINE_DEPTH,
                       SLOWLORIS_CONNECTIONS, pattern)
from .wire import Lost, Wrong, check, request


def keepalive_client(env, st, rnd, rate):
    pacer = Pacer(rate)
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        c = connect(env, st)
        if c is None:
            continue
        try:
            for n in range(rnd.randint(20, 200)):
                if env.ctl.yielding():
                    break
                path, body = rnd.choice(env.routes)
                pacer.wait()
                c.send(request(path, env.port))
                st.add("sent")
                r = c.response(time.monotonic() + OP_TIMEOUT_S)
                check(r, 200, body)
                st.add("answered")
                if r.closes:
                    st.add("closed_by_server")
                    break
        except Lost as e:
            st.problem("lost", f"keep-alive GET {path}, request {n + 1} on its connection", str(e))
        except Wrong as e:
            st.problem("wrong", f"keep-alive GET {path}, request {n + 1} on its connection", str(e))
        finally:
            c.close()


def close_client(env, st, rnd, rate):
    pacer = Pacer(rate)
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        path, body = rnd.choice(env.routes)
        pacer.wait()
        c = connect(env, st)
        if c is None:
            continue
        try:
            c.send(request(path, env.port, close=True))
            st.add("sent")
            deadline = time.monotonic() + OP_TIMEOUT_S
            r = c.response(deadline)
            check(r, 200, body)
            if not r.closes:
                raise Wrong("no Connection: close on the answer to Connection: close")
            c.expect_close(deadline)
            st.add("answered")
        except Lost as e:
            st.problem("lost", f"GET {path} with Connection: close", str(e))
        except Wrong as e:
            st.problem("wrong", f"GET {path} with Connection: close", str(e))
        finally:
            c.close()


def pipelined_client(env, st, rnd, rate):
    pacer = Pacer(rate)
    first = env.routes[0][0]
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        c = connect(env, st)
        if c is None:
            continue
        try:
            for _ in range(rnd.randint(5, 20)):
                if env.ctl.yielding():
                    break
                burst = []
                for i in range(PIPELINE_DEPTH):
                    if i % 4 == 3:   # a shaped size of its own: the order shows
                        n = 100 + 37 * i + rnd.randint(0, 9)
                        burst.append((f"{first}?size={n}", pattern(n)))
                    else:
                        burst.append(rnd.choice(env.routes))
                pacer.wait()
                c.send(b"".join(request(p, env.port) for p, _ in burst))
                st.add("sent", len(burst))
                deadline = time.monotonic() + OP_TIMEOUT_S
                for i, (path, body) in enumerate(burst):
                    try:
                        r = c.response(deadline)
                    except Lost as e:
                        st.add("lost", len(burst) - i - 1)   # the rest of the burst, too
                        raise Lost(f"answer {i + 1} of {len(burst)}: {e}")
                    try:
                        check(r, 200, body)
                    except Wrong as e:
                        raise Wrong(f"answer {i + 1} of {len(burst)} (GET {path}): {e}")
                    st.add("answered")
                    if r.closes:
                        raise Wrong(f"closed after answer {i + 1} of a pipelined burst")
        except Lost as e:
            st.problem("lost", "pipelined", str(e))
        except Wrong as e:
            st.problem("wrong", "pipelined", str(e))
        finally:
            c.close()


def shaped_client(env, st, rnd, rate, shapes):
    """Keep-alive requests of shapes [(query, body, min_seconds, decision)]."""
    pacer = Pacer(rate)
    first, plain = env.routes[0]
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        c = connect(env, st)
        if c is None:
            continue
        try:
            for _ in range(rnd.randint(10, 50)):
                if env.ctl.yielding():
                    break
                query, body, least, decision = rnd.choice(shapes)
                body = plain if body is None else body
                pacer.wait()
                t = time.monotonic()
                c.send(request(f"{first}?{query}", env.port))
                st.add("sent")
                r = c.response(t + OP_TIMEOUT_S)
                took = time.monotonic() - t
                check(r, 200, body)
                got = r.header("x-hello-shape-decision") or ""
                if decision not in got.split():
                    raise Wrong(f"?{query}: decision {got!r} lacks {decision!r}")
                if took < least:
                    raise Wrong(f"?{query}: complete after {took * 1e3:.2f} ms, before {least * 1e3:g} ms")
                st.add("answered")
                if r.closes:
                    st.add("closed_by_server")
                    break
        except Lost as e:
            st.problem("lost", f"GET {first}?{query}", str(e))
        except Wrong as e:
            st.problem("wrong", f"GET {first}?{query}", str(e))
        finally:
            c.close()


def delay_client(env, st, rnd, rate):
    shaped_client(env, st, rnd, rate, [("delay=5ms", None, 0.005, "delay=5ms")])


def drip_client(env, st, rnd, rate):
    shaped_client(env, st, rnd, rate, [
        ("drip=50ms&size=64", pattern(64), 0.050, "drip=50ms"),
        ("drip=100ms&size=1000", pattern(1000), 0.100, "drip=100ms"),
    ])


def abort_client(env, st, rnd, rate):
    """Resets and half-closes in the middle of answers."""
    pacer = Pacer(rate)
    first = env.routes[0][0]
    variants = ["reset-drip", "reset-size", "reset-delay", "halfclose-drip", "halfclose-size"]
    for n in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        variant = variants[n % len(variants)]
        pacer.wait()
        c = connect(env, st)
        if c is None:
            continue
        try:
            deadline = time.monotonic() + OP_TIMEOUT_S
            if variant == "reset-delay":
                # Reset while the answer waits: none is expected.
                c.send(request(f"{first}?delay=50ms", env.port))
                st.add("sent")
                c.reset()
                st.add("resets")
                continue
            if variant in ("reset-drip", "halfclose-drip"):
                size = 200 if variant == "reset-drip" else 100
                query = f"drip={'500ms' if variant == 'reset-drip' else '200ms'}&size={size}"
                part = 0   # the head, then a drip
            else:
                size = 2000000 if variant == "reset-size" else 1000000
                query = f"size={size}"
                part = 16384
            c.send(request(f"{first}?{query}", env.port))
            st.add("sent")
            r = c.head(deadline)
            if r.status != 200 or r.header("content-length") != str(size):
                raise Wrong(f"?{query}: status {r.status}, content-length {r.header('content-length')!r}")
            while len(c.buf) < part:
                if not c.fill(deadline):
                    raise Lost(f"?{query}: closed after {len(c.buf)} body bytes")
            if variant.startswith("reset"):
                c.reset()
                st.add("resets")
                continue
            # Half-closed after a whole request: the rest of the answer, then a close.
            c.sock.shutdown(socket.SHUT_WR)
            st.add("halfcloses")
            body = c.take(size, deadline, "the body after our half-close")
            if body != pattern(size):
                raise Wrong(f"?{query}: body after the half-close differs from the size pattern")
            c.expect_close(deadline)
            st.add("answered")
        except Lost as e:
            st.problem("lost", variant, str(e))
        except Wrong as e:
            st.problem("wrong", variant, str(e))
        except OSError as e:
            st.problem("lost", variant, str(e))
        finally:
            c.close()


def slowloris_client(env, st, rnd, rate):
    """A few connections sending one byte a second; each must get a 408."""
    text = request(env.routes[0][0], env.port)
    conns = []   # [Conn, first byte time, next byte time, bytes sent]
    opened = 0
    limit = bound(SLOWLORIS_CONNECTIONS / HEADER_TIMEOUT_S, env.seconds)
    while True:
        now = time.monotonic()
        if not env.ctl.yielding():
            while len(conns) < SLOWLORIS_CONNECTIONS and opened < limit:
                opened += 1
                c = connect(env, st)
                if c is None:
                    continue
                try:
                    c.send(text[:1])
                except Lost as e:
                    st.problem("lost", "slowloris first byte", str(e))
                    c.close()
                    continue
                st.add("sent")
                # Stagger them so that they do not all time out together.
                conns.append([c, now, now + 0.8 + 0.4 * rnd.random(), 1])
        if not conns:
            if not env.ctl.proceed() or opened >= limit:
                return
            continue
        wait = min(e[2] for e in conns) - now
        readable, _, _ = select.select([e[0].sock for e in conns], [], [], max(0.0, min(wait, 0.5)))
        now = time.monotonic()
        for e in list(conns):
            c, t0, nxt, sent = e
            finished = None
            try:
                if c.sock in readable:
                    if not c.fill(time.monotonic() + 1.0):   # readable: no wait
                        raise Lost(f"closed after {now - t0:.2f} s with no 408" if not c.buf else
                                   f"closed in the answer ({len(c.buf)} bytes)")
                    if b"\r\n\r\n" in c.buf:
                        r = c.response(now + OP_TIMEOUT_S)
                        took = time.monotonic() - t0
                        check(r, 408)
                        if took < HEADER_TIMEOUT_S - 0.05:
                            raise Wrong(f"408 after {took:.3f} s, before the {HEADER_TIMEOUT_S} s header timeout")
                        c.expect_close(time.monotonic() + OP_TIMEOUT_S)
                        st.add("answered")
                        st.add("408")
                        finished = True
                elif now >= nxt:
                    if now - t0 > HEADER_TIMEOUT_S + 3:
                        raise Lost(f"no 408 {now - t0:.1f} s after the first byte")
                    if sent < len(text) - 2:   # never the final CRLF
                        c.send(text[sent:sent + 1])
                        e[3] = sent + 1
                    e[2] = now + 0.9 + 0.2 * rnd.random()
            except Lost as ex:
                st.problem("lost", "slowloris", str(ex))
                finished = True
            except Wrong as ex:
                st.problem("wrong", "slowloris", str(ex))
                finished = True
            if finished:
                c.close()
                conns.remove(e)


def oversized_client(env, st, rnd, rate):
    pacer = Pacer(rate)
    first = env.routes[0][0]
    for _ in range(bound(rate, env.seconds)):
        if not env.ctl.proceed():
            return
        pacer.wait()
        big = MAX_HEADER_BYTES + rnd.randint(100, 4000)
        c = connect(env, st)
        if c is None:
            continue
        try:
            c.send(request(first, env.port, extra=b"X-Big: " + b"a" * big + b"\r\n"))
            st.add("sent")
            deadline = time.monotonic() + OP_TIMEOUT_S
            r = c.response(deadline)
            check(r, 431)
            if not r.closes:
                raise Wrong("431 without Connection: close")
            c.expect_close(deadline)
            st.add("answered")
            st.add("431")
        except Lost as e:
            st.problem("lost", "oversized header", str(e))
        except Wrong as e:
            st.problem("wrong", "oversized header", str(e))
        finally:
            c.close()


CLIENTS = {
    "keepalive": keepalive_client,
    "close": close_client,
    "pipelined": pipelined_client,
    "delay": delay_client,
    "drip": drip_client,
    "abort": abort_client,
    "slowloris": slowloris_client,
    "oversized": oversized_client,
}
# Kinds whose answers are to complete requests (the server counts them).
COMPLETE_KINDS = ("keepalive", "close", "pipelined", "delay", "drip", "abort")
