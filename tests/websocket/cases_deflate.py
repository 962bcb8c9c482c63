"""Cases: permessage-deflate (RFC 7692). With --deflate the server must
accept the offer; without it, it must decline it and refuse RSV1."""
import os

from cases_frames import make_text
from expect import expect_close, expect_echo, expect_error, expect_pong, send_until_closed
from pmd import Codec, check_answer
from wsclient import (BINARY, CLOSE, CONT, PING, RSV1, RSV2, TEXT, Fail, close_payload,
                      frame)

OFFER = "permessage-deflate; client_max_window_bits"
OFFER_NO_TAKEOVER = ("permessage-deflate; server_no_context_takeover; "
                     "client_no_context_takeover; client_max_window_bits")


def open_deflate(ctx, offer=OFFER, required=True):
    """A connection whose 101 accepted the offer (checked); with required
    False a declined offer gives a connection with pmd None."""
    conn = ctx.open(extensions=offer)
    offered = {p.split("=")[0].strip() for p in offer.split(";")[1:]}
    params = check_answer(conn.response, offered)
    if params is None:
        if required:
            raise Fail("the 101 did not accept %r (Sec-WebSocket-Extensions %r)"
                       % (offer, conn.response.get("sec-websocket-extensions")))
        return conn
    conn.pmd = Codec(params, ctx.opts.max_message)
    return conn


def compressed(conn, opcode, data, fin=True, takeover=True):
    return frame(opcode, conn.pmd.compress(data, takeover), rsv=RSV1, fin=fin)


def compressed_fragments(conn, opcode, data, cuts):
    """The frames of data compressed, then cut at the given offsets of the
    compressed bytes: RSV1 on the first frame only (RFC 7692 6.1)."""
    payload = conn.pmd.compress(data)
    edges = [0] + [min(c, len(payload)) for c in cuts] + [len(payload)]
    out = []
    for i in range(len(edges) - 1):
        out.append(frame(opcode if i == 0 else CONT, payload[edges[i]:edges[i + 1]],
                         fin=i == len(edges) - 2, rsv=RSV1 if i == 0 else 0))
    return out


def echo_compressed(messages, takeover=True):
    def run(ctx):
        conn = open_deflate(ctx)
        for opcode, data in messages:
            conn.send(compressed(conn, opcode, data, takeover=takeover))
            expect_echo(conn, opcode, data)
    return run


def negotiated(ctx):
    conn = open_deflate(ctx)
    conn.send(compressed(conn, TEXT, b"negotiated"))
    expect_echo(conn, TEXT, b"negotiated")


def server_no_takeover(ctx):
    """Offer server_no_context_takeover: if accepted, the answer says so and
    each server message inflates alone; declining the offer is allowed."""
    conn = open_deflate(ctx, OFFER_NO_TAKEOVER, required=False)
    text = make_text(3000)
    for _ in range(3):
        # the offer's client_no_context_takeover binds the client (RFC 7692 7.1.1.2)
        conn.send(compressed(conn, TEXT, text, takeover=False) if conn.pmd else frame(TEXT, text))
        expect_echo(conn, TEXT, text)


def uncompressed_message(ctx):
    conn = open_deflate(ctx)
    conn.send(frame(TEXT, b"plain under deflate") + compressed(conn, BINARY, b"packed")
              + frame(BINARY, b"plain again"))
    expect_echo(conn, TEXT, b"plain under deflate")
    expect_echo(conn, BINARY, b"packed")
    expect_echo(conn, BINARY, b"plain again")


def fragmented(ctx):
    conn = open_deflate(ctx)
    text = make_text(5000)
    conn.send(b"".join(compressed_fragments(conn, TEXT, text, [1, 40, 40, 300])))
    expect_echo(conn, TEXT, text)
    data = os.urandom(2000)
    conn.send(b"".join(compressed_fragments(conn, BINARY, data, [1000])))
    expect_echo(conn, BINARY, data)


def fragmented_with_ping(ctx):
    conn = open_deflate(ctx)
    text = b"compressed, with a ping inside " * 20
    first, last = compressed_fragments(conn, TEXT, text, [10])
    conn.send(first + frame(PING, b"inside") + last)
    expect_pong(conn, b"inside")
    expect_echo(conn, TEXT, text)


def large(ctx):
    n = min(256 * 1024, ctx.opts.max_message)
    echo_compressed([(BINARY, os.urandom(n)), (TEXT, make_text(n))])(ctx)


def deflate_error(build, code=1002):
    """A case: negotiate, send build(conn), expect close code."""
    def run(ctx):
        conn = open_deflate(ctx)
        expect_error(conn, build(conn), code)
    return run


def rsv1_continuation(conn):
    payload = conn.pmd.compress(b"rsv1 on the continuation too")
    return frame(TEXT, payload[:5], fin=False, rsv=RSV1) + frame(CONT, payload[5:], rsv=RSV1)


def over_limit(ctx):
    conn = open_deflate(ctx)
    bomb = conn.pmd.compress(b"\x00" * (ctx.opts.max_message + 1))
    send_until_closed(conn, frame(BINARY, bomb, rsv=RSV1))
    expect_close(conn, 1009)


def with_deflate(opts):
    sizes = [n for n in (0, 1, 126, 65536) if n <= opts.max_message]
    return [
        ("deflate.negotiated-params-valid", negotiated),
        ("deflate.echo-text-sizes", echo_compressed([(TEXT, make_text(n)) for n in sizes])),
        ("deflate.echo-binary-sizes", echo_compressed([(BINARY, os.urandom(n)) for n in sizes])),
        ("deflate.client-context-takeover", echo_compressed([(TEXT, make_text(2000))] * 4)),
        ("deflate.client-no-context-takeover",
         echo_compressed([(TEXT, make_text(2000))] * 4, takeover=False)),
        ("deflate.offer-server-no-context-takeover", server_no_takeover),
        ("deflate.uncompressed-message-under-deflate", uncompressed_message),
        ("deflate.fragmented-compressed", fragmented),
        ("deflate.fragmented-compressed-ping-inside", fragmented_with_ping),
        ("deflate.large-messages", large),
        ("deflate.rsv1-on-continuation", deflate_error(rsv1_continuation)),
        ("deflate.rsv1-on-ping", deflate_error(lambda c: frame(PING, b"p", rsv=RSV1))),
        ("deflate.rsv1-on-close",
         deflate_error(lambda c: frame(CLOSE, close_payload(1000), rsv=RSV1))),
        ("deflate.rsv2-on-data", deflate_error(lambda c: frame(TEXT, b"x", rsv=RSV2))),
        ("deflate.invalid-utf8-after-inflate",
         deflate_error(lambda c: compressed(c, TEXT, b"bad \xff\xfe"), 1007)),
        ("deflate.over-max-after-inflate", over_limit),
    ]


def declined(ctx):
    conn = ctx.open(extensions=OFFER)
    if conn.response.get("sec-websocket-extensions"):
        raise Fail("the 101 accepts %r; run with --deflate if the server compresses"
                   % conn.response.get("sec-websocket-extensions"))
    conn.send(frame(TEXT, b"declined"))
    expect_echo(conn, TEXT, b"declined")


def declined_rsv1(payload):
    def run(ctx):
        conn = ctx.open(extensions=OFFER)
        declined_check = conn.response.get("sec-websocket-extensions")
        if declined_check:
            raise Fail("the 101 accepts %r" % declined_check)
        expect_error(conn, frame(TEXT, payload, rsv=RSV1))
    return run


def without_deflate():
    packed = Codec({}, 1024).compress(b"compressed anyway")
    return [
        ("deflate.offer-declined", declined),
        ("deflate.rsv1-after-declined-offer", declined_rsv1(b"not compressed")),
        ("deflate.compressed-after-declined-offer", declined_rsv1(packed)),
    ]


def cases(opts):
    return with_deflate(opts) if opts.deflate else without_deflate()
