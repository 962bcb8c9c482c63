"""scripts/soak's HTTP/1.1 client: one connection with its read buffer,
every read with a deadline; an answer that does not come is Lost, one
that is not what was asked for Wrong."""
import re
import socket
import struct
import time

from .settings import HOST, MAX_BODY, MAX_HEAD, OP_TIMEOUT_S


class Lost(Exception):
    """The expected answer did not come: timeout, close or reset first."""


class Wrong(Exception):
    """An answer came, but not the one asked for."""


class Response:
    __slots__ = ("version", "status", "headers", "body", "closes")

    def header(self, name):
        for k, v in self.headers:
            if k == name:
                return v
        return None


class Conn:
    """One client connection with its read buffer; every read has a deadline."""

    def __init__(self, port, stats):
        self.sock = socket.create_connection((HOST, port), timeout=OP_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        stats.add("connections")

    def send(self, data):
        try:
            self.sock.settimeout(OP_TIMEOUT_S)
            self.sock.sendall(data)
        except socket.timeout:
            raise Lost("timed out sending")
        except OSError as e:
            raise Lost(f"send failed: {e.strerror or e}")

    def fill(self, deadline):
        """Reads more into buf; False at EOF. Lost on timeout or reset."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise Lost("timed out")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(262144)
        except socket.timeout:
            raise Lost("timed out")
        except OSError as e:
            raise Lost(f"recv failed: {e.strerror or e}")
        if not data:
            return False
        self.buf += data
        return True

    def take(self, n, deadline, what):
        while len(self.buf) < n:
            if not self.fill(deadline):
                raise Lost(f"closed during {what} ({len(self.buf)} of {n} bytes)")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def line(self, deadline, what):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                out = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return out
            if len(self.buf) > MAX_HEAD:
                raise Wrong(f"{what}: no line end in {len(self.buf)} bytes")
            if not self.fill(deadline):
                raise Lost(f"closed during {what}")

    def head(self, deadline):
        """The status line and headers; Lost if nothing complete came."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD:
                raise Wrong(f"no end of head in {len(self.buf)} bytes")
            if not self.fill(deadline):
                raise Lost("closed before the head" if not self.buf else
                           f"closed in the head ({len(self.buf)} bytes)")
        end = self.buf.index(b"\r\n\r\n")
        lines = bytes(self.buf[:end]).split(b"\r\n")
        del self.buf[:end + 4]
        m = re.fullmatch(rb"HTTP/1\.([01]) ([0-9]{3})(?: .*)?", lines[0])
        if not m:
            raise Wrong(f"bad status line {lines[0][:80]!r}")
        r = Response()
        r.version = int(m.group(1))
        r.status = int(m.group(2))
        r.headers = []
        for ln in lines[1:]:
            name, sep, value = ln.partition(b":")
            if not sep or not name or name != name.strip():
                raise Wrong(f"bad header line {ln[:80]!r}")
            r.headers.append((name.decode("latin-1").lower(), value.strip().decode("latin-1")))
        conn = (r.header("connection") or "").lower()
        r.closes = "close" in conn or (r.version == 0 and "keep-alive" not in conn)
        r.body = None
        return r

    def response(self, deadline):
        """A whole answer to a GET, framed by length, chunks or the close."""
        r = self.head(deadline)
        te = r.header("transfer-encoding")
        cl = r.header("content-length")
        if te is not None:
            if te.lower() != "chunked" or cl is not None:
                raise Wrong(f"framing: transfer-encoding {te!r}, content-length {cl!r}")
            parts = []
            total = 0
            while True:
                size_line = self.line(deadline, "a chunk size")
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise Wrong(f"bad chunk size {size_line[:40]!r}")
                if size == 0:
                    while self.line(deadline, "the trailer"):
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    raise Wrong(f"chunked body over {MAX_BODY} bytes")
                parts.append(self.take(size, deadline, "a chunk"))
                if self.take(2, deadline, "a chunk end") != b"\r\n":
                    raise Wrong("chunk not followed by CRLF")
            r.body = b"".join(parts)
        elif cl is not None:
            if not re.fullmatch(r"[0-9]{1,12}", cl) or int(cl) > MAX_BODY:
                raise Wrong(f"bad content-length {cl!r}")
            r.body = self.take(int(cl), deadline, "the body")
        elif r.status in (204, 304) or 100 <= r.status < 200:
            r.body = b""
        else:
            while self.fill(deadline):
                if len(self.buf) > MAX_BODY:
                    raise Wrong(f"close-delimited body over {MAX_BODY} bytes")
            r.body = bytes(self.buf)
            self.buf.clear()
            r.closes = True
        return r

    def expect_close(self, deadline):
        """The server must close now (EOF or reset), sending nothing more."""
        while True:
            try:
                more = self.fill(deadline)
            except Lost as e:
                if "timed out" in str(e):
                    raise Wrong("the server kept the connection open after its closing answer")
                return  # a reset is a close too
            if not more:
                break
        if self.buf:
            raise Wrong(f"{len(self.buf)} bytes after the closing answer")

    def reset(self):
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def request(path, port, close=False, extra=b""):
    return (f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUser-Agent: hello-soak\r\n".encode()
            + (b"Connection: close\r\n" if close else b"") + extra + b"\r\n")


def check(r, status=200, body=None):
    if r.status != status:
        raise Wrong(f"status {r.status}, expected {status}")
    if body is not None and r.body != body:
        got = r.body if len(r.body) <= 40 else r.body[:40] + b"..."
        raise Wrong(f"body of {len(r.body)} bytes {got!r}, expected {len(body)} bytes"
                    + (f" {body!r}" if len(body) <= 40 else " of the size pattern"))
