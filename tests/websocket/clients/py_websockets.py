#!/usr/bin/python3
"""python3-websockets (Debian's 10.4) against one persona's echo: text and
binary of every size (wsc_common.sizes), fragmented messages (send() of a
list and of an async iterator), a ping and its pong, the close 1000 and the
server's answer; once with compression offered (websockets' default,
permessage-deflate; client_max_window_bits) and once with
compression=None. Every wait is bounded.

    py_websockets.py URL LIMIT yes|no
"""
import asyncio
import os
import ssl
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import websockets  # noqa: E402
import wsc_common as wc  # noqa: E402

STEP = 15  # seconds for any one send, echo, pong or close


def tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def echo(ws, report, message, what):
    report.doing = what
    await asyncio.wait_for(ws.send(message), STEP)
    got = await asyncio.wait_for(ws.recv(), STEP)
    want = message
    if isinstance(message, (list, tuple)):
        want = message[0][:0].join(message)
    report.same(got, want, what)


async def fragments(values):
    for value in values:
        yield value


async def fragmented(ws, report, limit):
    for label, parts in wc.fragment_sets(limit):
        await echo(ws, report, parts, "fragmented %s (%d fragments, a list)" % (label, len(parts)))
    parts = wc.fragment_sets(limit)[1][1]
    report.doing = "fragmented text (async iterator)"
    await asyncio.wait_for(ws.send(fragments(parts)), STEP)
    got = await asyncio.wait_for(ws.recv(), STEP)
    report.same(got, "".join(parts), "fragmented text (async iterator of %d)" % len(parts))


async def session(url, limit, deflate, compression, report):
    report.variant = "compression offered" if compression else "compression=None"
    report.doing = "the handshake"
    ctx = tls_context() if url.startswith("wss:") else None
    async with websockets.connect(url, ssl=ctx, compression=compression, max_size=None, open_timeout=STEP,
                                  close_timeout=STEP, ping_interval=None) as ws:
        agreed = any(e.name == "permessage-deflate" for e in ws.extensions)
        report.check(agreed == (deflate and compression is not None), "permessage-deflate %s" %
                     ("agreed" if agreed else "not agreed"))
        for size in wc.sizes(limit):
            await echo(ws, report, wc.text(size), "text %d" % size)
            await echo(ws, report, wc.binary(size), "binary %d" % size)
        await fragmented(ws, report, limit)
        waiter = await asyncio.wait_for(ws.ping(b"websockets-ping"), STEP)
        await asyncio.wait_for(waiter, STEP)
        report.check(True, "ping answered by its pong")
        await asyncio.wait_for(ws.close(1000), STEP)
        report.check(ws.close_code == 1000, "close 1000 answered with 1000", "got %s" % ws.close_code)


async def main():
    url, limit, deflate = wc.argv()
    report = wc.Report("websockets-" + websockets.__version__)
    for compression in ("deflate", None):
        try:
            await session(url, limit, deflate, compression, report)
        except Exception as e:  # one line for what broke the session
            report.broken(e)
    report.done()


if __name__ == "__main__":
    asyncio.run(main())
