"""The client side of the HTTP/2 captures: a fixed client that speaks h2c
(prior knowledge or Upgrade) or h2 over TLS to a server on loopback and
records every frame the server sends, in order, as JSON-ready records, with
what varies from run to run (the port, the date) normalised. It knows no
server: capture_tomcat_h2.py points it at Tomcat, and a check of a persona
can point it at the persona and compare with the fixtures.

The client's fixed frames and the normalisation are described in
tests/fixtures/personas/spring/h2/README.md.
"""
import base64
import json
import re
import socket
import ssl
import time

from hpack import Decoder, Encoder
from hpack.hpack import decode_integer
from hyperframe.frame import Frame, GoAwayFrame, HeadersFrame, PingFrame, SettingsFrame

MODES = ("h2c-prior", "h2c-upgrade", "h2-tls")
MODE_LABELS = {"h2c-prior": "h2c with prior knowledge (connection preface on a plain connection)",
               "h2c-upgrade": "h2c by HTTP/1.1 Upgrade: h2c with HTTP2-Settings",
               "h2-tls": "h2 over TLS, ALPN h2"}

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# RFC 9113's names for the frame types, settings and error codes.
FRAME_TYPES = ("DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
               "WINDOW_UPDATE", "CONTINUATION")
SETTINGS = {1: "HEADER_TABLE_SIZE", 2: "ENABLE_PUSH", 3: "MAX_CONCURRENT_STREAMS", 4: "INITIAL_WINDOW_SIZE",
            5: "MAX_FRAME_SIZE", 6: "MAX_HEADER_LIST_SIZE", 8: "ENABLE_CONNECT_PROTOCOL",
            9: "NO_RFC7540_PRIORITIES"}
ERRORS = ("NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
          "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
          "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED")

# The client's fixed side: its SETTINGS (push off, as curl and h2load turn
# it off, and the stream window at its default, stated), and its request.
CLIENT_SETTINGS = ((2, 0), (4, 65535))
USER_AGENT = "hello-family-capture/1"
PORT_PLACEHOLDER = "<port>"
DATE_PLACEHOLDER = "<date>"
IMF_FIXDATE = re.compile(rb"[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT")

# Every wait is bounded. The response must end within RESPONSE_LIMIT; after
# its END_STREAM the client still listens for QUIET with nothing arriving,
# and for AFTER after its GOAWAY and after its close.
CONNECT_TIMEOUT = 5.0
RESPONSE_LIMIT = 5.0
QUIET = 0.3
AFTER = 1.0
AFTER_LIMIT = 3.0


def name(table, code):
    """RFC 9113's name for a code, or its hex when it has none."""
    if isinstance(table, dict):
        return table.get(code, f"0x{code:x}")
    return table[code] if code < len(table) else f"0x{code:x}"


def settings_payload(settings):
    """A SETTINGS frame's payload, in the given order."""
    return b"".join(ident.to_bytes(2, "big") + value.to_bytes(4, "big") for ident, value in settings)


def settings_list(payload):
    """A SETTINGS payload as [name, value] pairs, in order, repeats kept."""
    return [[name(SETTINGS, int.from_bytes(payload[i:i + 2], "big")), int.from_bytes(payload[i + 2:i + 6], "big")]
            for i in range(0, len(payload) - len(payload) % 6, 6)]


def flag_names(frame, byte):
    """The flags set in a frame header's flags byte, in bit order; unknown bits as hex."""
    known = {bit: flag for flag, bit in frame.defined_flags}
    return [known.get(1 << i, f"0x{1 << i:02x}") for i in range(8) if byte & (1 << i)]


def body_text(data):
    """{"data": text} for printable UTF-8, else {"data_base64": ...}."""
    try:
        text = data.decode("utf-8")
        if text.isprintable():
            return {"data": text}
    except UnicodeDecodeError:
        pass
    return {"data_base64": base64.b64encode(data).decode()}


def hpack_fields(block):
    """How each field of a header block is represented (RFC 7541 section 6),
    with the octets its value takes: [{...}] in order, dynamic table size
    updates included as {"repr": "size_update"}."""
    fields, i = [], 0
    while i < len(block):
        first = block[i]
        if first & 0x80:
            index, used = decode_integer(block[i:], 7)
            fields.append({"repr": "indexed", "index": index, "value_octets": 0})
            i += used
            continue
        if first & 0xE0 == 0x20:
            size, used = decode_integer(block[i:], 5)
            fields.append({"repr": "size_update", "size": size})
            i += used
            continue
        repr_, prefix = (("incremental", 6) if first & 0xC0 == 0x40 else
                         ("never_indexed", 4) if first & 0xF0 == 0x10 else ("without_indexing", 4))
        index, used = decode_integer(block[i:], prefix)
        i += used
        field = {"repr": repr_, "name_index": index}
        if index == 0:
            field["name_huffman"] = bool(block[i] & 0x80)
            length, used = decode_integer(block[i:], 7)
            i += used + length
        start = i
        field["value_huffman"] = bool(block[i] & 0x80)
        length, used = decode_integer(block[i:], 7)
        i += used + length
        field["value_octets"] = i - start
        fields.append(field)
    return fields


def header_list(block, decoder):
    """A header block decoded in order, each field with its HPACK
    representation; the date's value replaced by DATE_PLACEHOLDER. Returns
    (fields, octets of the date's value literal)."""
    decoded = decoder.decode(block, raw=True)
    reprs = [f for f in hpack_fields(block) if f["repr"] != "size_update"]
    assert len(reprs) == len(decoded), "HPACK walk and decoder disagree"
    fields, date_octets = [], 0
    for (field_name, value), rep in zip(decoded, reprs):
        octets = rep.pop("value_octets")
        if field_name == b"date" and IMF_FIXDATE.fullmatch(value):
            value, date_octets = DATE_PLACEHOLDER.encode(), octets
        fields.append(dict(name=field_name.decode("latin-1"), value=value.decode("latin-1"), **rep))
    return fields, date_octets


def normalise_http1(data, port):
    """HTTP/1.1 head bytes as text, the port and the Date value replaced."""
    data = data.replace(f"127.0.0.1:{port}".encode(), f"127.0.0.1:{PORT_PLACEHOLDER}".encode())
    return IMF_FIXDATE.sub(DATE_PLACEHOLDER.encode(), data).decode("latin-1")


class PlainTransport:
    """A loopback TCP connection: send bytes, receive with a timeout."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, data):
        self.sock.sendall(data)

    def recv(self, timeout):
        """(bytes, None); (None, None) when nothing came within timeout;
        (b"", "eof" or "reset") when the server ended the connection."""
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return None, None
        except ConnectionResetError:
            return b"", "reset"
        return (data, None) if data else (b"", "eof")

    def close_write(self):
        """Ends the client's side; says how."""
        self.sock.shutdown(socket.SHUT_WR)
        return "FIN"

    def close(self):
        self.sock.close()


class TlsTransport(PlainTransport):
    """TLS over a loopback connection through memory BIOs, so that the
    client's close_notify and the server's answer to it can be seen."""

    def __init__(self, port):
        super().__init__(port)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the certificate is self-signed
        context.set_alpn_protocols(["h2"])
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing)  # an IP address: no SNI
        self.notified = False  # the server's close_notify came
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                data, end = super().recv(deadline - time.monotonic())
                if end or data is None:
                    raise ConnectionError(f"TLS handshake: {end or 'timeout'}")
                self.incoming.write(data)
        self.flush()

    def flush(self):
        pending = self.outgoing.read()
        if pending:
            self.sock.sendall(pending)

    def send(self, data):
        self.tls.write(data)
        self.flush()

    def recv(self, timeout):
        if self.notified:
            return super().recv(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = self.tls.read(65536)
                if data:
                    return data, None
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLZeroReturnError:
                self.notified = True
                return b"", "close_notify"
            except ssl.SSLEOFError:
                return b"", "eof"
            if self.incoming.eof:
                return b"", "eof"  # the TCP end, without a close_notify before it
            self.flush()  # what reading made TLS want to say
            data, end = super().recv(deadline - time.monotonic())
            if end == "eof":
                self.incoming.write_eof()
            elif end or data is None:
                return data, end
            else:
                self.incoming.write(data)

    def close_write(self):
        try:
            self.tls.unwrap()
        except ssl.SSLWantReadError:
            pass  # sent; the server's close_notify is read like the rest
        self.flush()
        super().close_write()
        return "close_notify, then FIN"


class Recorder:
    """The client's HTTP/2 side: parses what the server sends into frame
    records, ACKs its SETTINGS and PINGs, and says when stream 1 ended."""

    def __init__(self, transport):
        self.transport = transport
        self.buffer = bytearray()
        self.decoder = Decoder()
        self.encoder = Encoder()
        self.ends = []  # how the server ended the connection: "close_notify", "eof", "reset"
        self.stream_ended = False
        self.block = None  # the HEADERS record whose header block is still arriving, and its fragments
        self.sent = []  # the current phase's client records

    def send(self, data, *records):
        """Sends data and notes the records that describe it; a send the
        server's close refused is noted as such, not raised."""
        try:
            self.transport.send(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            records = [dict(r, not_sent=type(e).__name__) for r in records]
        self.sent.extend(records)

    def send_settings(self):
        self.send(SettingsFrame(0, settings=dict(CLIENT_SETTINGS)).serialize(),
                  {"type": "SETTINGS", "flags": [], "stream": 0, "settings": settings_list(
                      settings_payload(CLIENT_SETTINGS))})

    def send_request(self, method, scheme, port, path):
        fields = [(":method", method), (":scheme", scheme), (":authority", f"127.0.0.1:{port}"), (":path", path),
                  ("user-agent", USER_AGENT), ("accept", "*/*")]
        frame = HeadersFrame(1, self.encoder.encode(fields), flags=("END_HEADERS", "END_STREAM"))
        shown = [[n, v.replace(str(port), PORT_PLACEHOLDER) if n == ":authority" else v] for n, v in fields]
        self.send(frame.serialize(), {"type": "HEADERS", "flags": ["END_STREAM", "END_HEADERS"], "stream": 1,
                                      "headers": shown})

    def phase(self, done, quiet, limit):
        """Reads server frames until done() and then `quiet` seconds with
        nothing, the end of the connection, or `limit` seconds. Returns the
        phase's record: what the client sent, what the server sent."""
        received, start = [], time.monotonic()
        last = start
        while not (self.ends and self.ends[-1] in ("eof", "reset")):
            now = time.monotonic()
            wait = start + limit - now
            if done():
                wait = min(wait, last + quiet - now)
            if wait <= 0:
                break
            data, end = self.transport.recv(wait)
            if end:
                self.ends.append(end)
            if data:
                last = time.monotonic()
                self.buffer += data
                received += self.parse()
        record = {"client": self.sent, "server": received, "connection": " then ".join(self.ends) or "open"}
        self.sent = []
        return record

    def parse(self):
        records = []
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            raw = bytes(self.buffer[:9 + length])
            del self.buffer[:9 + length]
            frame, _ = Frame.parse_frame_header(memoryview(raw[:9]))
            frame.parse_body(memoryview(raw[9:]))
            record = self.describe(frame, raw)
            if record is not None:
                records.append(record)
        return records

    def describe(self, frame, raw):
        """A frame as a record; answers what a client must answer. None for
        a CONTINUATION, whose fragment joins its HEADERS record."""
        kind = raw[3]
        joined = kind == 9 and self.block is not None
        record = {"type": name(FRAME_TYPES, kind), "flags": flag_names(frame, raw[4]), "stream": frame.stream_id,
                  "length": len(raw) - 9}
        payload = raw[9:]
        if kind == 0:
            record.update(body_text(frame.data))
            self.stream_ended |= frame.stream_id == 1 and "END_STREAM" in frame.flags
        elif kind == 1:
            if "PRIORITY" in frame.flags:
                record.update(depends_on=frame.depends_on, weight=frame.stream_weight, exclusive=frame.exclusive)
            self.block = (record, [frame.data])
            self.stream_ended |= frame.stream_id == 1 and "END_STREAM" in frame.flags
        elif joined:
            self.block[1].append(frame.data)
        elif kind == 3:
            record["error"] = name(ERRORS, frame.error_code)
            self.stream_ended |= frame.stream_id == 1
        elif kind == 4:
            if "ACK" not in frame.flags:
                record["settings"] = settings_list(payload)
                self.send(SettingsFrame(0, flags=("ACK",)).serialize(),
                          {"type": "SETTINGS", "flags": ["ACK"], "stream": 0})
        elif kind == 6:
            record["opaque_data"] = frame.opaque_data.hex()
            if "ACK" not in frame.flags:
                self.send(PingFrame(0, frame.opaque_data, flags=("ACK",)).serialize(),
                          {"type": "PING", "flags": ["ACK"], "stream": 0, "opaque_data": frame.opaque_data.hex()})
        elif kind == 7:
            record.update(last_stream_id=frame.last_stream_id, error=name(ERRORS, frame.error_code),
                          debug_data=frame.additional_data.decode("utf-8", "backslashreplace"))
            self.stream_ended = True
        elif kind == 8:
            record["increment"] = frame.window_increment
        if (kind == 1 or joined) and "END_HEADERS" in frame.flags:
            headers, block = self.block
            self.block = None
            headers["headers"], date_octets = header_list(b"".join(block), self.decoder)
            if date_octets:
                # The date's Huffman code is longer or shorter with the date.
                headers["length_without_date_value"] = headers.pop("length") - date_octets
        return None if joined else record


def read_head(transport, port):
    """An HTTP/1.1 response head and the bytes after it."""
    data, deadline = b"", time.monotonic() + RESPONSE_LIMIT
    while b"\r\n\r\n" not in data and time.monotonic() < deadline:
        more, end = transport.recv(deadline - time.monotonic())
        if end:
            break
        data += more or b""
    head, _, rest = data.partition(b"\r\n\r\n")
    return normalise_http1(head + b"\r\n\r\n", port), rest


def upgrade_request(method, path, port):
    """The HTTP/1.1 request that asks for h2c, in curl's header order."""
    settings = base64.urlsafe_b64encode(settings_payload(CLIENT_SETTINGS)).rstrip(b"=").decode()
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: {USER_AGENT}\r\n"
            f"Accept: */*\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            f"HTTP2-Settings: {settings}\r\n\r\n").encode()


def capture(mode, method, path, port, goaway=True):
    """One case: the request, then the client's GOAWAY (unless not goaway),
    then its close."""
    transport = TlsTransport(port) if mode == "h2-tls" else PlainTransport(port)
    recorder = Recorder(transport)
    record = {"transport": MODE_LABELS[mode]}
    try:
        if mode == "h2-tls":
            record["tls"] = {"version": transport.tls.version(), "cipher": transport.tls.cipher()[0],
                             "alpn": transport.tls.selected_alpn_protocol()}
        if mode == "h2c-upgrade":
            request = upgrade_request(method, path, port)
            transport.send(request)
            head, rest = read_head(transport, port)
            record["upgrade"] = {"request": normalise_http1(request, port), "response": head}
            if not head.startswith("HTTP/1.1 101"):
                return record
            recorder.buffer += rest
            recorder.send(PREFACE, {"type": "connection preface"})
            recorder.send_settings()
        else:
            recorder.send(PREFACE, {"type": "connection preface"})
            recorder.send_settings()
            recorder.send_request(method, "https" if mode == "h2-tls" else "http", port, path)
        record["request"] = recorder.phase(lambda: recorder.stream_ended, QUIET, RESPONSE_LIMIT)
        if recorder.ends:
            return record
        if goaway:
            recorder.send(GoAwayFrame(0, last_stream_id=0, error_code=0).serialize(),
                            {"type": "GOAWAY", "stream": 0, "last_stream_id": 0, "error": "NO_ERROR"})
            record["client_goaway"] = recorder.phase(lambda: True, AFTER, AFTER_LIMIT)
            if recorder.ends:
                return record
        recorder.sent.append({"type": transport.close_write()})
        record["client_close"] = recorder.phase(lambda: True, AFTER, AFTER_LIMIT)
        return record
    finally:
        transport.close()


def dumps(value, indent=0, width=130):
    """JSON with each value on one line when it fits in width, so that a
    frame or a header field reads as one line and diffs as one."""
    flat = json.dumps(value, ensure_ascii=False)
    if indent + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
