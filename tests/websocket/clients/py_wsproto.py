#!/usr/bin/python3
"""python3-wsproto (Debian's 1.2.0) over a plain socket (or ssl) against one
persona's echo: text and binary of every size (wsc_common.sizes), messages
sent as several Message events with message_finished=False (fragments), a
ping and its pong, the close 1000 and the server's answer. Three variants:
no extension; wsproto's PerMessageDeflate as it comes (it offers
client_max_window_bits=15; server_max_window_bits=15, which the personas
decline, docs/websocket.md: the agreement is an INFO line); and
PerMessageDeflate offering what browsers offer (client_max_window_bits
without a value), which the deflating personas agree. Every read is
bounded by the socket's timeout.

    py_wsproto.py URL LIMIT yes|no
"""
import os
import socket
import ssl
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsc_common as wc  # noqa: E402
import wsproto  # noqa: E402
from wsproto import ConnectionType, WSConnection  # noqa: E402
from wsproto.events import (AcceptConnection, BytesMessage, CloseConnection, Message, Ping, Pong,  # noqa: E402
                            RejectConnection, Request, TextMessage)
from wsproto.extensions import PerMessageDeflate  # noqa: E402

STEP = 15  # seconds for any one read or write


class BrowserOffer(PerMessageDeflate):
    """PerMessageDeflate offering what browsers, Node's ws and websockets
    offer: client_max_window_bits without a value."""

    def offer(self):
        return "client_max_window_bits"


class Client:
    def __init__(self, url, extension):
        u = urllib.parse.urlsplit(url)
        sock = socket.create_connection((u.hostname, u.port), timeout=STEP)
        if u.scheme == "wss":
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            sock = ctx.wrap_socket(sock)
        self.sock = sock
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.pending = []
        self.send(Request(host="%s:%d" % (u.hostname, u.port), target=u.path,
                          extensions=[extension] if extension else []))
        event = self.next_event()
        if not isinstance(event, AcceptConnection):
            raise RuntimeError("handshake: %r" % (event,))
        self.extensions = [e.name for e in event.extensions]

    def send(self, event):
        self.sock.sendall(self.ws.send(event))

    def next_event(self):
        while not self.pending:
            data = self.sock.recv(262144)
            self.ws.receive_data(data or None)
            self.pending.extend(self.ws.events())
            if not data and not self.pending:
                raise EOFError("the server closed the connection")
        return self.pending.pop(0)

    def message(self):
        """The next whole message (str or bytes), however wsproto split it."""
        parts = []
        while True:
            event = self.next_event()
            if isinstance(event, RejectConnection) or isinstance(event, CloseConnection):
                raise RuntimeError("instead of a message: %r" % (event,))
            if isinstance(event, Message):
                parts.append(event.data)
                if event.message_finished:
                    whole = parts[0][:0].join(parts)
                    return bytes(whole) if isinstance(whole, bytearray) else whole


def event_of(value, finished=True):
    if isinstance(value, str):
        return TextMessage(data=value, message_finished=finished)
    return BytesMessage(data=value, message_finished=finished)


def exchange(client, report, limit):
    for size in wc.sizes(limit):
        for value, kind in ((wc.text(size), "text"), (wc.binary(size), "binary")):
            report.doing = "%s %d" % (kind, size)
            client.send(event_of(value))
            report.same(client.message(), value, "%s %d" % (kind, size))
    for label, parts in wc.fragment_sets(limit):
        report.doing = "fragmented " + label
        for i, part in enumerate(parts):
            client.send(event_of(part, i == len(parts) - 1))
        report.same(client.message(), parts[0][:0].join(parts),
                    "fragmented %s (%d Message events)" % (label, len(parts)))
    client.send(Ping(payload=b"wsproto-ping"))
    event = client.next_event()
    report.check(isinstance(event, Pong) and event.payload == b"wsproto-ping", "ping answered by its pong",
                 "" if isinstance(event, Pong) else "got %r" % (event,))
    client.send(CloseConnection(code=1000))
    event = client.next_event()
    code = getattr(event, "code", None)
    report.check(isinstance(event, CloseConnection) and code == 1000, "close 1000 answered with 1000",
                 "got %r" % (event,))


def session(url, limit, deflate, variant, report):
    label, extension, expect = variant
    report.variant = label
    report.doing = "the handshake"
    client = Client(url, extension)
    try:
        agreed = "permessage-deflate" in client.extensions
        if expect is None:
            report.info("permessage-deflate %s" % ("agreed" if agreed else "declined"))
        else:
            report.check(agreed == expect, "permessage-deflate %s" % ("agreed" if agreed else "not agreed"))
        exchange(client, report, limit)
    finally:
        client.sock.close()


def main():
    url, limit, deflate = wc.argv()
    report = wc.Report("wsproto-" + wsproto.__version__)
    variants = [("no extension", None, False),
                ("PerMessageDeflate (its own offer)", PerMessageDeflate(), None),
                ("PerMessageDeflate (browsers' offer)", BrowserOffer(), deflate)]
    for variant in variants:
        try:
            session(url, limit, deflate, variant, report)
        except Exception as e:  # one line for what broke the session
            report.broken(e)
    report.done()


if __name__ == "__main__":
    main()
