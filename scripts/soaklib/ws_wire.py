"""scripts/soak's WebSocket client (RFC 6455): the opening handshake on
the HTTP client's connection, frames masked as a client must, every
server frame checked as it is read, permessage-deflate (RFC 7692) used
when the 101 agrees to it. An answer that does not come is Lost, one that
breaks the RFC or is not the echo Wrong."""
import base64
import hashlib
import os
import struct
import time
import zlib

from .settings import HOST, OP_TIMEOUT_S
from .wire import Conn, Lost, Wrong

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
NAMES = {CONT: "continuation", TEXT: "text", BINARY: "binary", CLOSE: "close", PING: "ping", PONG: "pong"}
TAIL = b"\x00\x00\xff\xff"   # taken off each compressed message, put back to inflate (RFC 7692 7.2.1)
DEFLATE_OFFER = "permessage-deflate; client_max_window_bits"
MAX_FRAMES = 4096            # the most frames one read_message takes


def mask(payload, key):
    """XOR with the 4-byte key (RFC 6455 5.3)."""
    n = len(payload)
    if n == 0:
        return b""
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


def frame(opcode, payload=b"", fin=True, rsv1=False):
    """One masked client frame, its length in the shortest form."""
    n = len(payload)
    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    key = os.urandom(4)
    return head + key + mask(payload, key)


def close_payload(code, reason=b""):
    return struct.pack("!H", code) + reason if code else b""


def describe_close(payload):
    if len(payload) < 2:
        return f"a close of {len(payload)} bytes"
    return f"close {struct.unpack('!H', payload[:2])[0]} {bytes(payload[2:40])!r}"


class Deflate:
    """permessage-deflate as the 101 agreed it: raw deflate, each
    message's 00 00 ff ff taken off (RFC 7692 7.2)."""

    def __init__(self, params):
        bits = params.get("client_max_window_bits")
        self.client_bits = max(9, int(bits)) if bits else 15   # zlib's raw deflate: 9 at least
        self.client_reset = "client_no_context_takeover" in params
        self.server_reset = "server_no_context_takeover" in params
        self.comp = self.compressor()
        self.decomp = zlib.decompressobj(-15)

    def compressor(self):
        return zlib.compressobj(6, zlib.DEFLATED, -self.client_bits)

    def compress(self, data):
        if self.client_reset:
            self.comp = self.compressor()
        out = self.comp.compress(data) + self.comp.flush(zlib.Z_SYNC_FLUSH)
        return out[:-4] if out.endswith(TAIL) else out

    def decompress(self, data, limit):
        if self.server_reset:
            self.decomp = zlib.decompressobj(-15)
        try:
            out = self.decomp.decompress(data + TAIL, limit + 1)
        except zlib.error as e:
            raise Wrong(f"a compressed message that does not inflate: {e}")
        if len(out) > limit or self.decomp.unconsumed_tail:
            raise Wrong(f"a compressed message inflating to over {limit} bytes")
        return out


def deflate_params(values):
    """The 101's permessage-deflate parameters (dict), or None if it has
    none; Wrong for another extension or a parameter RFC 7692 forbids."""
    agreed = None
    for value in values:
        for element in value.split(","):
            parts = [p.strip() for p in element.split(";")]
            if not parts[0]:
                continue
            if parts[0].lower() != "permessage-deflate" or agreed is not None:
                raise Wrong(f"the 101 agrees to {element.strip()!r}, not offered")
            agreed = {}
            for p in parts[1:]:
                k, _, v = p.partition("=")
                k, v = k.strip().lower(), v.strip().strip('"')
                if k not in ("server_no_context_takeover", "client_no_context_takeover",
                             "server_max_window_bits", "client_max_window_bits") or k in agreed:
                    raise Wrong(f"the 101's permessage-deflate has {p!r} (RFC 7692 7.1)")
                if k.endswith("bits") and not (v.isdigit() and 8 <= int(v) <= 15 and v[0] != "0"):
                    raise Wrong(f"the 101's permessage-deflate has {p!r} (8 to 15 expected)")
                agreed[k] = v or None
    return agreed


class WsConn(Conn):
    """One WebSocket connection over the soak's HTTP connection; pmd is the
    agreed permessage-deflate, or None."""

    def __init__(self, port, stats):
        super().__init__(port, stats)
        self.pmd = None

    def handshake(self, path, port, offer=None):
        """Sends the opening handshake; the 101 checked (RFC 6455 4.1)."""
        key = base64.b64encode(os.urandom(16)).decode()
        self.send((f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUser-Agent: hello-soak\r\n"
                   f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   f"Sec-WebSocket-Version: 13\r\n"
                   + (f"Sec-WebSocket-Extensions: {offer}\r\n" if offer else "") + "\r\n").encode())
        r = self.head(time.monotonic() + OP_TIMEOUT_S)
        if r.status != 101:
            raise Wrong(f"handshake answered {r.status}, not 101")
        if (r.header("upgrade") or "").lower() != "websocket":
            raise Wrong(f"handshake: Upgrade {r.header('upgrade')!r}")
        if "upgrade" not in [t.strip().lower() for t in (r.header("connection") or "").split(",")]:
            raise Wrong(f"handshake: Connection {r.header('connection')!r}")
        want = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
        if r.header("sec-websocket-accept") != want:
            raise Wrong(f"handshake: Sec-WebSocket-Accept {r.header('sec-websocket-accept')!r}, not {want!r}")
        params = deflate_params([v for k, v in r.headers if k == "sec-websocket-extensions"])
        if params is not None:
            if not offer:
                raise Wrong("the 101 agrees to permessage-deflate, not offered")
            self.pmd = Deflate(params)
        return r

    def message_frames(self, opcode, data, cuts=(), compress=False):
        """A message's frames, split at the offsets `cuts` (sorted): a
        list of bytes, one per frame; compressed first if asked and agreed."""
        rsv1 = False
        if compress and self.pmd is not None:
            data, rsv1 = self.pmd.compress(data), True
        bounds = [0] + [min(c, len(data)) for c in cuts] + [len(data)]
        frames = []
        for i in range(len(bounds) - 1):
            last = i == len(bounds) - 2
            frames.append(frame(opcode if i == 0 else CONT, data[bounds[i]:bounds[i + 1]],
                                fin=last, rsv1=rsv1 and i == 0))
        return frames

    def read_frame(self, deadline):
        """(fin, rsv1, opcode, payload) of the server's next frame, checked
        against RFC 6455 5.1 to 5.5 (RSV1 only where deflate is agreed)."""
        b0, b1 = self.take(2, deadline, "a frame header")
        fin, rsv, opcode, n = bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.take(2, deadline, "a frame length"))[0]
            if n < 126:
                raise Wrong(f"server frame length {n} in the 16-bit form (not minimal)")
        elif n == 127:
            n = struct.unpack("!Q", self.take(8, deadline, "a frame length"))[0]
            if n < 65536 or n >> 63:
                raise Wrong(f"server frame length {n} in the 64-bit form")
        if b1 & 0x80:
            raise Wrong("server frame masked")
        if opcode not in NAMES:
            raise Wrong(f"server frame of reserved opcode {opcode:#x}")
        if rsv & ~(4 if self.pmd is not None and opcode in (TEXT, BINARY) else 0):
            raise Wrong(f"server {NAMES[opcode]} frame with RSV bits {rsv:#x}")
        if opcode >= CLOSE and (not fin or n > 125):
            raise Wrong(f"server {NAMES[opcode]} frame fragmented or over 125 bytes")
        if n > (64 << 20):
            raise Wrong(f"server frame of {n} bytes")
        return fin, bool(rsv & 4), opcode, self.take(n, deadline, f"a {NAMES[opcode]} frame's payload")

    def read_message(self, deadline, pongs, limit, st):
        """The next data message (opcode, payload); `pongs` (a list) holds
        the payloads of pings sent whose pongs must come first, in order."""
        parts, first, compressed = [], None, False
        for _ in range(MAX_FRAMES):
            fin, rsv1, opcode, payload = self.read_frame(deadline)
            if opcode == PING:   # the server's own: answered, counted
                self.send(frame(PONG, payload))
                st.add("server_pings")
                continue
            if opcode == PONG:
                if not pongs:
                    raise Wrong(f"a pong of {len(payload)} bytes to no ping")
                if payload != pongs[0]:
                    raise Wrong(f"a pong {payload[:20]!r} to the ping {pongs[0][:20]!r}")
                pongs.pop(0)
                st.add("pongs")
                continue
            if opcode == CLOSE:
                raise Wrong(f"{describe_close(payload)} instead of an echo")
            if (opcode == CONT) != (first is not None):
                raise Wrong(f"a {NAMES[opcode]} frame {'in' if first is not None else 'outside'} a message")
            if first is None:
                first, compressed = opcode, rsv1
            elif rsv1:
                raise Wrong("RSV1 on a continuation frame")
            parts.append(payload)
            if fin:
                break
        else:
            raise Wrong(f"no whole message in {MAX_FRAMES} frames")
        if pongs:
            raise Wrong(f"the echo came before the pongs to {len(pongs)} ping(s)")
        data = b"".join(parts)
        if compressed:
            data = self.pmd.decompress(data, limit)
            st.add("inflated")
        return first, data

    def read_pongs(self, deadline, pongs, st):
        """Reads until every ping in `pongs` has its pong, in order."""
        for _ in range(MAX_FRAMES):
            if not pongs:
                return
            fin, rsv1, opcode, payload = self.read_frame(deadline)
            if opcode == PING:
                self.send(frame(PONG, payload))
                st.add("server_pings")
            elif opcode == PONG and payload == pongs[0]:
                pongs.pop(0)
                st.add("pongs")
            else:
                raise Wrong(f"a {NAMES[opcode]} frame of {len(payload)} bytes while pongs were due")
        raise Wrong(f"no pongs in {MAX_FRAMES} frames")

    def close_handshake(self, deadline, code=1000, reason=b""):
        """Sends a close; expects it echoed (the code, no reason: an empty
        close for an empty one), then the server's TCP close."""
        self.send(frame(CLOSE, close_payload(code, reason)))
        for _ in range(MAX_FRAMES):
            fin, rsv1, opcode, payload = self.read_frame(deadline)
            if opcode == PING:
                continue   # no pong after our close (RFC 6455 5.5.1)
            if opcode != CLOSE:
                raise Wrong(f"a {NAMES[opcode]} frame of {len(payload)} bytes after our close")
            if payload != close_payload(code):
                raise Wrong(f"{describe_close(payload)} echoed to {describe_close(close_payload(code, reason))}")
            break
        else:
            raise Wrong(f"no close in {MAX_FRAMES} frames")
        try:
            while self.fill(deadline):
                pass
        except Lost as e:
            if "timed out" in str(e):
                raise Wrong("the server kept TCP open after the close handshake")
            return   # a reset is a close too
        if self.buf:
            raise Wrong(f"{len(self.buf)} bytes after the server's close frame")
