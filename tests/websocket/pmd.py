"""permessage-deflate (RFC 7692): the Sec-WebSocket-Extensions grammar
(RFC 6455 9.1), the checks on a server's answer (RFC 7692 5 and 7.1), and
the client's compressor and decompressor (RFC 7692 7.2)."""
import re
import zlib

from wsclient import Fail

TAIL = b"\x00\x00\xff\xff"  # removed from each compressed message (7.2.1), put back to inflate
TCHAR = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
BITS = re.compile(r"[1-9][0-9]*$")  # a decimal integer without leading zeros (7.1.2)
PARAMS = ("server_no_context_takeover", "client_no_context_takeover",
          "server_max_window_bits", "client_max_window_bits")


def _token(text, i, what):
    m = TCHAR.match(text, i)
    if not m:
        raise Fail("Sec-WebSocket-Extensions %r: expected %s at %d" % (text, what, i))
    return m.group(0), m.end()


def _quoted(text, i):
    out, i = [], i + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif c == '"':
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise Fail("Sec-WebSocket-Extensions %r: unterminated quoted string" % text)


def _skip(text, i):
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def parse_extensions(values):
    """[(name, [(param, value or None)])] from the header's values; a quoted
    value must be a token once unquoted (RFC 6455 9.1)."""
    out = []
    for text in values:
        i = 0
        for _ in range(len(text) + 1):
            i = _skip(text, i)
            if i >= len(text):
                break
            if text[i] == ",":
                i += 1
                continue
            name, i = _token(text, i, "an extension name")
            params = []
            for _ in range(len(text)):
                i = _skip(text, i)
                if i >= len(text) or text[i] != ";":
                    break
                key, i = _token(text, _skip(text, i + 1), "a parameter name")
                i = _skip(text, i)
                value = None
                if i < len(text) and text[i] == "=":
                    i = _skip(text, i + 1)
                    if i < len(text) and text[i] == '"':
                        value, i = _quoted(text, i)
                        if not TCHAR.fullmatch(value):
                            raise Fail("extension parameter %s=%r is not a token" % (key, value))
                    else:
                        value, i = _token(text, i, "a parameter value")
                params.append((key.lower(), value))
            out.append((name.lower(), params))
            i = _skip(text, i)
            if i < len(text) and text[i] != ",":
                raise Fail("Sec-WebSocket-Extensions %r: junk at %d" % (text, i))
    return out


def check_answer(resp, offered_params):
    """The 101's permessage-deflate parameters, checked (RFC 7692 5, 7.1);
    offered_params: the parameter names the offer carried. Returns a dict,
    or None if the server did not accept the offer."""
    elements = parse_extensions(resp.get("sec-websocket-extensions"))
    pmd = [params for name, params in elements if name == "permessage-deflate"]
    if not pmd:
        return None
    if len(elements) != 1:
        raise Fail("the 101 answers %d extension elements to one offer" % len(elements))
    out = {}
    for key, value in pmd[0]:
        if key not in PARAMS:
            raise Fail("permessage-deflate answer has unknown parameter %r (RFC 7692 5)" % key)
        if key in out:
            raise Fail("permessage-deflate answer repeats %s (RFC 7692 5)" % key)
        if key.endswith("context_takeover"):
            if value is not None:
                raise Fail("%s has a value %r (RFC 7692 7.1.1)" % (key, value))
        elif value is None or not BITS.match(value) or not 8 <= int(value) <= 15:
            raise Fail("%s=%r is not an integer 8-15 without leading zeros (RFC 7692 7.1.2)"
                       % (key, value))
        if key == "client_max_window_bits" and key not in offered_params:
            raise Fail("client_max_window_bits in the answer, not in the offer (RFC 7692 7.1.2.2)")
        out[key] = value
    for key in ("server_no_context_takeover",):
        if key in offered_params and key not in out:
            raise Fail("the offer's %s accepted without it in the answer (RFC 7692 7.1.1.1)"
                       % key)
    return out


class Codec:
    """Compression per the negotiated parameters: the client compresses with
    at most client_max_window_bits (zlib's raw floor is 9) and keeps its
    context unless told not to; it inflates the server's messages with a
    fresh inflater each time if the server promised no context takeover."""

    def __init__(self, params, inflate_cap):
        self.params = params
        self.client_bits = max(9, int(params.get("client_max_window_bits", 15)))
        self.client_takeover = "client_no_context_takeover" not in params
        self.server_takeover = "server_no_context_takeover" not in params
        self.inflate_cap = inflate_cap
        self.enc = None
        self.dec = None

    def compress(self, data, takeover=True):
        if self.enc is None or not (takeover and self.client_takeover):
            self.enc = zlib.compressobj(6, zlib.DEFLATED, -self.client_bits)
        out = self.enc.compress(data) + self.enc.flush(zlib.Z_SYNC_FLUSH)
        if not out.endswith(TAIL):
            raise Fail("suite error: zlib's sync flush did not end in 00 00 ff ff")
        return out[:-4]

    def decompress(self, payload):
        if self.dec is None or not self.server_takeover:
            self.dec = zlib.decompressobj(-15)
        try:
            out = self.dec.decompress(payload + TAIL, self.inflate_cap + 1)
        except zlib.error as e:
            raise Fail("the server's compressed message does not inflate: %s" % e) from None
        if len(out) > self.inflate_cap or self.dec.unconsumed_tail:
            raise Fail("the server's compressed message inflates past %d bytes" % self.inflate_cap)
        return out
