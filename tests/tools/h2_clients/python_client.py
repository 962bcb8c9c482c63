#!/usr/bin/python3
"""A python3-h2 client for tests/tools/h2_clients.py.

Opens one connection to 127.0.0.1:PORT, in clear (h2c by prior knowledge:
the preface first) or with --tls (ALPN h2 only; the certificate is not
checked, it is made for the run), sends a GET for every PATH at once on
that connection, reads until each stream has ended, and prints one JSON
line per path: {"path", "status", "proto", "body" (base64), "error"}.
hyper-h2 frames and decodes; the socket and ssl are the standard library's.

    usage: python_client.py [--tls] PORT PATH...
"""
import base64
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def main(argv):
    tls = "--tls" in argv
    args = [a for a in argv if a != "--tls"]
    if len(args) < 2:
        print("usage: python_client.py [--tls] PORT PATH...", file=sys.stderr)
        return 2
    port, paths = int(args[0]), args[1:]
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    proto = "h2c"
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(sock, server_hostname="localhost")
        proto = sock.selected_alpn_protocol() or "(no ALPN)"
        if proto != "h2":
            print(json.dumps({"path": "", "status": 0, "proto": proto, "body": "",
                              "error": f"ALPN selected {proto}"}))
            return 1
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    authority = f"127.0.0.1:{port}"
    streams = {}
    for path in paths:
        stream_id = conn.get_next_available_stream_id()
        conn.send_headers(stream_id, [(":method", "GET"), (":path", path),
                                      (":scheme", "https" if tls else "http"),
                                      (":authority", authority)], end_stream=True)
        streams[stream_id] = {"path": path, "status": 0, "proto": proto, "body": b""}
    sock.sendall(conn.data_to_send())
    pending = set(streams)
    while pending:
        data = sock.recv(65536)
        if not data:
            for stream_id in pending:
                streams[stream_id]["error"] = "connection closed before the stream ended"
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                streams[event.stream_id]["status"] = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.DataReceived):
                streams[event.stream_id]["body"] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                pending.discard(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                streams[event.stream_id]["error"] = f"RST_STREAM {event.error_code!r}"
                pending.discard(event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                for stream_id in pending:
                    streams[stream_id]["error"] = f"GOAWAY {event.error_code!r}"
                pending.clear()
        sock.sendall(conn.data_to_send())
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()
    for s in streams.values():
        s["body"] = base64.b64encode(s["body"]).decode()
        print(json.dumps(s))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
