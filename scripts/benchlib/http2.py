"""The client side of scripts/bench --h2's idle measure: one HTTP/2
request on a connection that then stays open, h2c by prior knowledge or h2
over a TLS socket that selected it by ALPN. The frames are python3-h2's
(Debian's hyperframe and hpack, installed by scripts/setup --bench); the
client verifies nothing and is not measured."""
from . import tls

# Reads of one answer at most: the server's SETTINGS, the answer's HEADERS
# and DATA of a small body come in a few.
MAX_READS = 64
READ_SIZE = 65536


class Http2Error(OSError):
    """The server did not answer the request over HTTP/2; the message says why."""


def client_context():
    """tls.client_context() that offers only h2 by ALPN."""
    context = tls.client_context()
    context.set_alpn_protocols(["h2"])
    return context


def _library():
    try:
        import h2.config
        import h2.connection
        import h2.events
        import h2.exceptions
    except ImportError as e:
        raise Http2Error(f"{e.name} is missing: Debian's python3 with python3-h2 (scripts/setup --bench)")
    return h2


def one_request(sock, path, authority="127.0.0.1"):
    """Sends the HTTP/2 preface, SETTINGS and a GET of `path` on stream 1
    over the connected `sock` (a TLS socket must have selected h2: see
    client_context()), acknowledges the server's SETTINGS and reads until
    the answer has ended; the connection is then idle. Returns the answer's
    :status. Raises OSError (Http2Error when the server does not speak
    HTTP/2 or ends the connection)."""
    if hasattr(sock, "selected_alpn_protocol") and sock.selected_alpn_protocol() != "h2":
        raise Http2Error(f"the server selected {sock.selected_alpn_protocol() or 'no protocol'} by ALPN, not h2")
    h2 = _library()
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    scheme = "https" if hasattr(sock, "selected_alpn_protocol") else "http"
    conn.send_headers(1, [(":method", "GET"), (":scheme", scheme), (":authority", authority), (":path", path)],
                      end_stream=True)
    sock.sendall(conn.data_to_send())
    status = None
    for _ in range(MAX_READS):
        data = sock.recv(READ_SIZE)
        if not data:
            raise Http2Error("the server closed the connection before answering")
        try:
            events = conn.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            raise Http2Error(f"not HTTP/2 from the server: {type(e).__name__}")
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                status = dict(event.headers).get(":status")
            elif isinstance(event, h2.events.ConnectionTerminated):
                raise Http2Error(f"the server sent GOAWAY ({event.error_code!r}) before answering")
            elif isinstance(event, h2.events.StreamReset):
                raise Http2Error(f"the server reset stream 1 ({event.error_code!r})")
        # The SETTINGS ACK and the WINDOW_UPDATEs of the DATA read.
        pending = conn.data_to_send()
        if pending:
            sock.sendall(pending)
        if any(isinstance(event, h2.events.StreamEnded) for event in events):
            return status
    raise Http2Error(f"no end of the answer in {MAX_READS} reads")

