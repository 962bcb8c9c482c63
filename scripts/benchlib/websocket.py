"""The client side of scripts/bench --ws that is not the load: the upgrade
of one connection (RFC 6455 section 4.1, as the idle measure opens its
connections) and the probe before the rounds, which checks that a server
upgrades at its path and echoes one 16-byte text message. Stdlib sockets;
the client verifies the Sec-WebSocket-Accept value and is not measured."""
import base64
import hashlib
import os
import socket
import struct

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# The probe's message: as long as the load's (benchlib.tools.WS_MESSAGE_SIZE).
PROBE_MESSAGE = b"hello-family-ws!"
MAX_HEAD = 16384


class UpgradeError(OSError):
    """The server did not upgrade the connection or echo; the message says why."""


def upgrade_request(path, port, key):
    """A client's opening handshake for `path` on 127.0.0.1:`port`, with `key`."""
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def accept_value(key):
    """The Sec-WebSocket-Accept a server must answer `key` with."""
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def check_answer(head, key):
    """None if `head` (a response's head, up to its empty line) is a 101
    that accepts `key`, else what is wrong, in words."""
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0]
    if not status.startswith("HTTP/1.1 101"):
        return f"answered {status.strip() or 'nothing'}"
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if fields.get("sec-websocket-accept") != accept_value(key):
        return f"answered 101 with Sec-WebSocket-Accept {fields.get('sec-websocket-accept')!r}"
    return None


def upgrade(sock, path, port):
    """Upgrades the connected `sock` to a WebSocket at `path`; returns the
    bytes read past the 101's head (frames the server sent at once).
    Raises UpgradeError if the server answers anything else."""
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(upgrade_request(path, port, key))
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise UpgradeError("closed the connection before answering the upgrade")
        data += chunk
        if len(data) > MAX_HEAD:
            raise UpgradeError("answered a head longer than 16 KiB")
    head, _, rest = data.partition(b"\r\n\r\n")
    problem = check_answer(head, key)
    if problem:
        raise UpgradeError(problem)
    return rest


def text_frame(payload, mask=b"\x37\xfa\x21\x3d"):
    """A client's (masked) text frame of `payload`, shorter than 126 bytes."""
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + masked


def read_frame(sock, data=b""):
    """(opcode, payload, rest) of the first server frame (unmasked) from
    `data` and what `sock` sends; raises UpgradeError on a close or EOF."""
    while True:
        if len(data) >= 2:
            length, at = data[1] & 0x7F, 2
            if length == 126 and len(data) >= 4:
                length, at = struct.unpack("!H", data[2:4])[0], 4
            elif length == 127 and len(data) >= 10:
                length, at = struct.unpack("!Q", data[2:10])[0], 10
            if length < 126 or at > 2:
                if len(data) >= at + length:
                    return data[0] & 0x0F, data[at:at + length], data[at + length:]
        chunk = sock.recv(65536)
        if not chunk:
            raise UpgradeError("closed the connection before echoing")
        data += chunk


def probe(port, path, timeout=10):
    """None if the server on 127.0.0.1:`port` upgrades at `path` and echoes
    PROBE_MESSAGE as a text message, else why not, in words."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            rest = upgrade(s, path, port)
            s.sendall(text_frame(PROBE_MESSAGE))
            opcode, payload, rest = read_frame(s, rest)
            while opcode in (9, 10):  # a ping or pong first: not the echo
                opcode, payload, rest = read_frame(s, rest)
            if (opcode, payload) != (1, PROBE_MESSAGE):
                return f"echoed opcode {opcode} with {payload[:32]!r}, not the text message sent"
            s.sendall(bytes([0x88, 0x82]) + b"\0\0\0\0" + struct.pack("!H", 1000))
    except (OSError, socket.timeout) as e:
        return str(e) if isinstance(e, UpgradeError) else f"{type(e).__name__}: {e}"
    return None
