"""A raw WebSocket client for the conformance suite (RFC 6455): frames built
byte by byte (masked as a client must, or not, on purpose), the opening
handshake, and a reader that checks every server frame against the RFC.

Every wait is bounded: one read or write waits at most STEP seconds."""
import base64
import hashlib
import ipaddress
import os
import re
import select
import socket
import ssl
import struct
import time

STEP = 3.0          # the longest one read, write or handshake waits (seconds)
CLOSE_WAIT = 3.0    # how long the server may take to close TCP after its close frame
HEAD_CAP = 16384    # the longest 101 response accepted
FRAME_CAP = 64 << 20  # a server frame declaring more than this is refused unread
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
OPNAMES = {CONT: "continuation", TEXT: "text", BINARY: "binary",
           CLOSE: "close", PING: "ping", PONG: "pong"}
RSV1, RSV2, RSV3 = 4, 2, 1  # as the 3-bit field of byte 0


class Fail(Exception):
    """The server broke the design or the RFC; the message says how."""


class Timeout(Exception):
    """Nothing arrived (or could be sent) in time."""


class Closed(Exception):
    """The server closed TCP (reset: it reset the connection)."""

    def __init__(self, reset=False):
        super().__init__("the server reset the connection" if reset else "the server closed TCP")
        self.reset = reset


def opname(opcode):
    return OPNAMES.get(opcode, "opcode 0x%x" % opcode)


def mask(payload, key):
    """XOR payload with the 4-byte key (RFC 6455 5.3)."""
    n = len(payload)
    if n == 0:
        return b""
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


def frame(opcode, payload=b"", fin=True, rsv=0, masked=True, key=None, length=None,
          length_bytes=None):
    """One frame as a client sends it. length declares another payload length
    than len(payload); length_bytes (0, 2 or 8) forces the length's encoding."""
    payload = bytes(payload)
    n = len(payload) if length is None else length
    if length_bytes is None:
        length_bytes = 0 if n < 126 else 2 if n < 65536 else 8
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    m = 0x80 if masked else 0
    if length_bytes == 0:
        head = bytes([b0, m | n])
    elif length_bytes == 2:
        head = struct.pack("!BBH", b0, m | 126, n)
    else:
        head = struct.pack("!BBQ", b0, m | 127, n)
    if not masked:
        return head + payload
    key = os.urandom(4) if key is None else key
    return head + key + mask(payload, key)


def start(opcode, payload):
    """The first frame of a fragmented message."""
    return frame(opcode, payload, fin=False)


def more(payload, fin=False):
    """A continuation frame (not the last one unless fin)."""
    return frame(CONT, payload, fin=fin)


def close_payload(code, reason=b""):
    return struct.pack("!H", code) + reason


def describe_close(payload):
    if not payload:
        return "an empty close"
    if len(payload) == 1:
        return "a close with a 1-byte payload"
    code = struct.unpack("!H", payload[:2])[0]
    reason = payload[2:]
    return "close %d%s" % (code, " %r" % bytes(reason[:60]) if reason else "")


def accept_for(key):
    """Sec-WebSocket-Accept for a key (RFC 6455 4.2.2 step 5.4)."""
    return base64.b64encode(hashlib.sha1((key + GUID).encode("ascii")).digest()).decode("ascii")


def new_key():
    return base64.b64encode(os.urandom(16)).decode("ascii")


def check_loopback(host):
    """True if every address host resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    addrs = {ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos}
    return bool(addrs) and all(a.is_loopback for a in addrs)


def request_bytes(opts, key, extensions=None, lower=False):
    """The opening handshake (RFC 6455 4.1); lower writes the header names in lower case."""
    host = "[%s]" % opts.host if ":" in opts.host else opts.host
    fields = [("Host", "%s:%d" % (host, opts.port)), ("Upgrade", "websocket"),
              ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
              ("Sec-WebSocket-Version", "13")]
    if lower:
        fields[1:3] = [("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade")]
    if extensions:
        fields.append(("Sec-WebSocket-Extensions", extensions))
    lines = ["GET %s HTTP/1.1" % opts.path]
    lines += ["%s: %s" % (k.lower() if lower else k, v) for k, v in fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


class Response:
    """A parsed 101: status, reason and the fields (names lower-cased)."""

    def __init__(self, head):
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise Fail("handshake: bad status line %r" % lines[0][:80])
        self.status, self.reason = int(m.group(1)), m.group(2) or ""
        self.fields = []
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise Fail("handshake: bad header line %r" % line[:80])
            self.fields.append((name.lower(), value.strip(" \t")))

    def get(self, name):
        return [v for k, v in self.fields if k == name.lower()]


def tokens(value):
    return [t.strip().lower() for t in value.split(",") if t.strip()]


def check_101(resp, key, offered):
    """RFC 6455 4.1 (the client's checks) and 4.2.2; offered: extension names offered."""
    if resp.status != 101:
        raise Fail("handshake: status %d %s, expected 101" % (resp.status, resp.reason))
    upgrade = resp.get("upgrade")
    if [u.lower() for u in upgrade] != ["websocket"]:
        raise Fail("handshake: Upgrade is %r, expected websocket" % upgrade)
    if not any("upgrade" in tokens(v) for v in resp.get("connection")):
        raise Fail("handshake: Connection %r has no upgrade token" % resp.get("connection"))
    accept = resp.get("sec-websocket-accept")
    if accept != [accept_for(key)]:
        raise Fail("handshake: Sec-WebSocket-Accept %r, expected %r" % (accept, accept_for(key)))
    if resp.get("sec-websocket-protocol"):
        raise Fail("handshake: Sec-WebSocket-Protocol %r though none was offered"
                   % resp.get("sec-websocket-protocol"))
    for value in resp.get("sec-websocket-extensions"):
        for element in value.split(","):
            name = element.split(";")[0].strip().lower()
            if name not in offered:
                raise Fail("handshake: extension %r in the 101 was not offered" % element.strip())


class Conn:
    """One connection: a socket (TCP or TLS), the bytes read but not yet used,
    and what was negotiated (pmd: the permessage-deflate state, or None)."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.pmd = None
        self.response = None

    @staticmethod
    def connect(opts):
        sock = socket.create_connection((opts.host, opts.port), timeout=STEP)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if opts.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE  # a test server's certificate: loopback only
            sock = ctx.wrap_socket(sock, server_hostname=opts.host)
        return Conn(sock)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # -- writing

    def send(self, data, timeout=STEP):
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise Timeout() from None
        except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError):
            raise Closed(reset=True) from None

    def send_slowly(self, data, delay=0.002):
        """One byte per write (TCP_NODELAY is on), delay seconds apart."""
        for i in range(len(data)):
            self.send(data[i:i + 1])
            time.sleep(delay)

    def readable(self):
        """True if bytes from the server are waiting (never blocks)."""
        if self.buf:
            return True
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True
        return bool(select.select([self.sock], [], [], 0)[0])

    # -- reading

    def fill(self, deadline):
        """Read what the socket has (waiting until deadline) into buf."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout()
        self.sock.settimeout(min(left, STEP))
        try:
            data = self.sock.recv(262144)
        except socket.timeout:
            raise Timeout() from None
        except (ConnectionResetError, BrokenPipeError):
            raise Closed(reset=True) from None
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
            data = b""
        if not data:
            raise Closed()
        self.buf += data

    def _take(self, n, deadline):
        while len(self.buf) < n:
            self.fill(deadline)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_head(self, timeout=STEP):
        """The HTTP response head (up to the blank line); the rest stays buffered."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > HEAD_CAP:
                raise Fail("handshake: no end of the response head in %d bytes" % HEAD_CAP)
            self.fill(deadline)
        end = self.buf.index(b"\r\n\r\n")
        head = bytes(self.buf[:end])
        del self.buf[:end + 4]
        return head

    def handshake(self, opts, key=None, extensions=None, lower=False, after=b"", slow=False):
        """Send the opening handshake (and after, in the same write), check the 101."""
        key = key or new_key()
        data = request_bytes(opts, key, extensions, lower) + after
        if slow:
            self.send_slowly(data)
        else:
            self.send(data)
        try:
            self.response = Response(self.read_head())
        except Timeout:
            raise Fail("handshake: no complete response within %g s" % STEP) from None
        except Closed:
            raise Fail("handshake: the server closed the connection before a 101") from None
        offered = {e.split(";")[0].strip().lower() for e in (extensions or "").split(",")} - {""}
        check_101(self.response, key, offered)
        return self.response

    def read_frame(self, timeout=STEP):
        """The next frame from the server, checked against RFC 6455 5.1-5.5:
        unmasked, minimal length, no RSV bit unless negotiated, known opcode,
        control frames unfragmented and at most 125 bytes."""
        deadline = time.monotonic() + timeout
        b0, b1 = self._take(2, deadline)
        fin, rsv, opcode, n = bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._take(2, deadline))[0]
            if n < 126:
                raise Fail("server frame: length %d in the 16-bit form (RFC 6455 5.2: minimal)" % n)
        elif n == 127:
            n = struct.unpack("!Q", self._take(8, deadline))[0]
            if n < 65536 or n >> 63:
                raise Fail("server frame: length %d in the 64-bit form (RFC 6455 5.2)" % n)
        if b1 & 0x80:
            raise Fail("server frame is masked (RFC 6455 5.1: a server MUST NOT mask)")
        if opcode not in OPNAMES:
            raise Fail("server frame has reserved opcode 0x%x" % opcode)
        allowed = RSV1 if self.pmd is not None and opcode in (TEXT, BINARY) else 0
        if rsv & ~allowed:
            raise Fail("server %s frame has RSV bits 0x%x set" % (opname(opcode), rsv))
        if opcode >= CLOSE and (not fin or n > 125):
            raise Fail("server %s frame is fragmented or over 125 bytes" % opname(opcode))
        if n > FRAME_CAP:
            raise Fail("server frame declares %d bytes" % n)
        return Frame(fin, rsv, opcode, self._take(n, deadline))


class Frame:
    __slots__ = ("fin", "rsv", "opcode", "payload")

    def __init__(self, fin, rsv, opcode, payload):
        self.fin, self.rsv, self.opcode, self.payload = fin, rsv, opcode, payload

    def describe(self):
        if self.opcode == CLOSE:
            return describe_close(self.payload)
        return "a %s%s frame of %d bytes" % ("" if self.fin else "non-final ", opname(self.opcode),
                                            len(self.payload))
