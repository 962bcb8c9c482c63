"""The client's side of scripts/peers/websocket/capture_ws.py: raw
WebSocket frames (masked as a client must), their parsing and escaping,
and a socket that reads until the server falls quiet."""
import base64
import hashlib
import re
import socket
import struct
import threading
import time

KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 section 1.3's sample nonce
ACCEPT = base64.b64encode(hashlib.sha1((KEY + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
MASK = b"\x37\xfa\x21\x3d"  # RFC 6455 section 5.7's sample masking key
QUIET = 0.6      # seconds of silence that end a read
READ_CAP = 20.0  # the longest any one read waits


def mask(payload, key=MASK):
    if not payload:
        return b""
    n = len(payload)
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big")


def frame(opcode, payload, masked=True, fin=True, rsv=0):
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload)
    m = 0x80 if masked else 0
    if n < 126:
        head = struct.pack("!BB", b0, m | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, m | 126, n)
    else:
        head = struct.pack("!BBQ", b0, m | 127, n)
    if masked:
        return head + MASK + mask(payload)
    return head + payload


def close_payload(code, reason=b""):
    return struct.pack("!H", code) + reason


OPCODES = {0: "cont", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}


def parse_frames(data):
    """[(fin, rsv, opcode, masked, header_bytes, payload)], rest."""
    out, i = [], 0
    while True:
        if len(data) - i < 2:
            break
        b0, b1 = data[i], data[i + 1]
        n, j = b1 & 0x7F, i + 2
        if n == 126:
            if len(data) - j < 2:
                break
            n, j = struct.unpack("!H", data[j:j + 2])[0], j + 2
        elif n == 127:
            if len(data) - j < 8:
                break
            n, j = struct.unpack("!Q", data[j:j + 8])[0], j + 8
        key = None
        if b1 & 0x80:
            key, j = data[j:j + 4], j + 4
        if len(data) - j < n:
            break
        payload = data[j:j + n]
        if key:
            payload = mask(payload, key)
        out.append((bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, key is not None, data[i:j], payload))
        i = j + n
    return out, data[i:]


def describe_frames(data, sent=None):
    frames, rest = parse_frames(data)
    lines = []
    for fin, rsv, op, masked, head, payload in frames:
        what = f"fin={int(fin)} rsv={rsv:03b} opcode={op} ({OPCODES.get(op, '?')}) masked={int(masked)} len={len(payload)}"
        if op == 8 and len(payload) >= 2:
            code = struct.unpack("!H", payload[:2])[0]
            what += f" code={code} reason={payload[2:]!r}"
        elif len(payload) <= 64:
            what += f" payload={payload!r}"
        else:
            what += f" payload sha256={hashlib.sha256(payload).hexdigest()[:16]}"
            if sent is not None:
                what += " (== sent)" if payload == sent else " (!= sent)"
        lines.append(f"  header {escape(head)}  {what}")
    if rest:
        lines.append(f"  {len(rest)} trailing bytes not a whole frame: {escape(rest[:64])}")
    return lines, frames


def elide(data, limit=4096):
    """The frames of data with payloads over limit bytes cut out."""
    frames, rest = parse_frames(data)
    if sum(len(f[5]) for f in frames) <= limit:
        return data
    out = b""
    for fin, rsv, op, masked, head, payload in frames:
        out += head + (payload if len(payload) <= limit else b"")
    return out + rest


# --- sockets ----------------------------------------------------------------

class Conn:
    """A loopback connection with a reader thread that keeps every byte."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = bytearray()
        self.eof = None  # None while open; "closed" (FIN) or "reset"
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        self.sock.settimeout(None)
        while True:
            try:
                chunk = self.sock.recv(1 << 20)
            except OSError as e:
                with self.cv:
                    self.eof = "reset" if isinstance(e, ConnectionResetError) else f"error: {e}"
                    self.cv.notify_all()
                return
            with self.cv:
                if not chunk:
                    self.eof = "closed"
                else:
                    self.buf += chunk
                self.cv.notify_all()
            if not chunk:
                return

    def send(self, data):
        try:
            self.sock.sendall(data)
            return None
        except OSError as e:
            return f"send stopped after an error: {e.__class__.__name__}: {e}"

    def take(self, until=None, quiet=QUIET, cap=READ_CAP):
        """Every byte that arrives until EOF, `until(buf)` holds, or `quiet`
        seconds without a byte (after the first); then removes them."""
        deadline = time.monotonic() + cap
        with self.cv:
            last_len, last_t = len(self.buf), time.monotonic()
            while self.eof is None and time.monotonic() < deadline:
                if until is not None and until(bytes(self.buf)):
                    break
                self.cv.wait(0.05)
                if len(self.buf) != last_len:
                    last_len, last_t = len(self.buf), time.monotonic()
                elif self.buf and until is None and time.monotonic() - last_t >= quiet:
                    break
                elif not self.buf and time.monotonic() - last_t >= max(quiet, 3.0):
                    break
            data = bytes(self.buf)
            self.buf.clear()
        return data

    def after(self, wait=1.0):
        """'closed'/'reset' if the server ended the connection (within wait s), else 'open'."""
        deadline = time.monotonic() + wait
        with self.cv:
            while self.eof is None and time.monotonic() < deadline:
                self.cv.wait(0.05)
            return self.eof or "open"

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.reader.join(5)


def head_end(buf):
    return b"\r\n\r\n" in buf


def http_complete(buf):
    """The HTTP response in buf is whole (headers plus Content-Length body)."""
    if b"\r\n\r\n" not in buf:
        return False
    head, body = buf.split(b"\r\n\r\n", 1)
    if head.startswith(b"HTTP/1.1 101"):
        return True
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    if m:
        return len(body) >= int(m.group(1))
    if re.search(rb"(?im)^transfer-encoding:\s*chunked", head):
        return body.endswith(b"0\r\n\r\n")
    return False


def escape(b):
    s = ""
    for c in b:
        if c == 13:
            s += "\\r"
        elif c == 10:
            s += "\\n"
        elif 32 <= c < 127 and c != 92:
            s += chr(c)
        elif c == 92:
            s += "\\\\"
        else:
            s += f"\\x{c:02x}"
    return s


def escape_http(b):
    """Escaped, one line per CRLF-ended line, for reading."""
    parts = b.split(b"\r\n")
    return "\n".join(escape(p) + ("\\r\\n" if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def request(path, port, *headers):
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *headers, "", ""]
    return "\r\n".join(lines).encode()


def good_headers(extra=(), version="13", key=True, connection="Upgrade", upgrade="websocket"):
    h = []
    if upgrade is not None:
        h.append(f"Upgrade: {upgrade}")
    if connection is not None:
        h.append(f"Connection: {connection}")
    if key:
        h.append(f"Sec-WebSocket-Key: {KEY}")
    h.append(f"Sec-WebSocket-Version: {version}")
    return h + list(extra)


# --- recording --------------------------------------------------------------
