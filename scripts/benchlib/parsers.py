"""Parsers for the output of ab, wrk, h2load, locust's CSV and the JSON of
tls_resume and ws_load.

Each returns a dict with the same keys (None where the tool does not say):
requests (completed), failed, non2xx, rps, bytes (transferred), p50, p90,
p99 (latency in milliseconds). Output that does not look like a finished
run raises ParseError with the tool's own last words.
"""
import csv
import io
import json
import re


class ParseError(Exception):
    pass


def _result(**kw):
    keys = ("requests", "failed", "non2xx", "rps", "bytes", "p50", "p90", "p99")
    return {k: kw.get(k) for k in keys}


def _last_words(text):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _number(pattern, text, cast=float, default=None):
    m = re.search(pattern, text, re.MULTILINE)
    return cast(m.group(1)) if m else default


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
_UNITS_BYTES = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


def _ms(value, unit):
    return float(value) * _UNITS_MS[unit]


def parse_ab(text):
    """ApacheBench 2.3."""
    requests = _number(r"^Complete requests:\s+(\d+)", text, int)
    if requests is None:
        raise ParseError("ab did not finish: " + _last_words(text))
    pct = dict(re.findall(r"^\s+(\d+)%\s+(\d+)", text, re.MULTILINE))
    return _result(
        requests=requests,
        failed=_number(r"^Failed requests:\s+(\d+)", text, int, 0),
        non2xx=_number(r"^Non-2xx responses:\s+(\d+)", text, int, 0),
        rps=_number(r"^Requests per second:\s+([\d.]+)", text),
        bytes=_number(r"^Total transferred:\s+(\d+) bytes", text, int),
        p50=float(pct["50"]) if "50" in pct else None,
        p90=float(pct["90"]) if "90" in pct else None,
        p99=float(pct["99"]) if "99" in pct else None,
    )


def parse_wrk(text):
    """wrk 4.x, with or without --latency."""
    m = re.search(r"^\s+(\d+) requests in [\d.]+\w+, ([\d.]+)(\w+) read", text, re.MULTILINE)
    if not m:
        raise ParseError("wrk did not finish: " + _last_words(text))
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    pct = {p: _ms(v, u) for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s|m)$", text, re.MULTILINE)}
    return _result(
        requests=int(m.group(1)),
        failed=sum(int(x) for x in socket.groups()) if socket else 0,
        non2xx=_number(r"Non-2xx or 3xx responses: (\d+)", text, int, 0),
        rps=_number(r"^Requests/sec:\s+([\d.]+)", text),
        bytes=int(float(m.group(2)) * _UNITS_BYTES[m.group(3)]),
        p50=pct.get("50"),
        p90=pct.get("90"),
        p99=pct.get("99"),
    )


def parse_h2load(text):
    """h2load (nghttp2 1.52), with --h1 or over HTTP/2; `protocol` is the
    one it spoke ("http/1.1", "h2" by ALPN, "h2c" in clear). It reports no
    latency percentiles."""
    m = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                  r"(\d+) errored, (\d+) timeout", text, re.MULTILINE)
    if not m:
        raise ParseError("h2load did not finish: " + _last_words(text))
    codes = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.MULTILINE)
    result = _result(
        requests=int(m.group(3)),
        failed=int(m.group(5)) + int(m.group(6)) + int(m.group(7)),
        non2xx=sum(int(x) for x in codes.groups()[1:]) if codes else 0,
        rps=_number(r"^finished in [\d.]+\w+, ([\d.]+) req/s", text),
        bytes=_number(r"^traffic: .*?\((\d+)\) total", text, int),
    )
    result["protocol"] = _number(r"^Application protocol: (\S+)", text, str)
    return result


def parse_locust_csv(text):
    """The _stats.csv that locust --csv writes; the Aggregated row counts."""
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("Name") == "Aggregated"]
    if not rows:
        raise ParseError("locust wrote no Aggregated row")
    r = rows[0]

    def number(key):
        value = r.get(key)
        return float(value) if value not in (None, "", "N/A") else None

    requests = int(r["Request Count"])
    return _result(
        requests=requests,
        failed=int(r["Failure Count"]),
        non2xx=0,  # locust counts non-2xx answers as failures
        rps=number("Requests/s"),
        bytes=int(number("Average Content Size") * requests) if number("Average Content Size") is not None else None,
        p50=number("50%"),
        p90=number("90%"),
        p99=number("99%"),
    )


# tls_resume measures resumed handshakes only when the server resumed
# (nearly) all of them: the first connection of each thread is a full one.
RESUMED_SHARE = 0.95
TLS_RESUME_KEYS = ("connections", "resumed", "full", "failed", "connections_per_second", "handshake_p50_ms",
                   "total_p50_ms", "total_p99_ms")


def _json_object(text, keys):
    """The first JSON object in `text` that has all of `keys`, or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict) and all(k in value for k in keys):
                return value
        except ValueError:
            pass
        start = text.find("{", start + 1)
    return None


def parse_tls_resume(text):
    """build/tests/tls_resume --json: one request per connection, each
    connection resuming a TLS session. A run where fewer than RESUMED_SHARE
    of the handshakes were resumed measured full handshakes: its "error"
    says so, and it is not counted."""
    data = _json_object(text, TLS_RESUME_KEYS)
    if data is None:
        raise ParseError("tls_resume did not finish: " + _last_words(text))
    connections, resumed = int(data["connections"]), int(data["resumed"])
    result = _result(
        requests=connections,
        failed=int(data["failed"]),
        non2xx=0,  # tls_resume counts an answer that is not 200 as failed
        rps=float(data["connections_per_second"]),
        p50=data["total_p50_ms"],
        p99=data["total_p99_ms"],
    )
    result.update(resumed=resumed, full=int(data["full"]), handshake_p50=data["handshake_p50_ms"])
    if not connections:
        result["error"] = "tls_resume made no connection"
    elif resumed / connections < RESUMED_SHARE:
        result["error"] = (f"tls_resume: {resumed} of {connections} handshakes resumed ({resumed / connections:.0%}), "
                           f"fewer than {RESUMED_SHARE:.0%}: the server did not resume sessions")
    return result


# What a probe reads of tls_resume --json: what each kind of handshake
# negotiated and the tickets each connection received.
TLS_PROBE_KEYS = ("connections", "failed", "failures", "negotiated", "tickets")


def _most(counts):
    """The key counted most often in `counts`, and the others, in order."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return (ordered[0][0] if ordered else None), [k for k, _ in ordered[1:]]


def _negotiated(data, kind):
    """One kind of handshake ("full", "resumed") of tls_resume's JSON: the
    protocol, suite and group most of them negotiated, the tickets most of
    their connections received, how many there were; None if none. Any other
    combination seen is listed in "also"."""
    negotiated, tickets = data["negotiated"].get(kind) or {}, data["tickets"].get(kind) or {}
    if not negotiated:
        return None
    (combination, others), (received, other_counts) = _most(negotiated), _most(tickets)
    protocol, suite, group = (combination.split(" ") + ["-", "-"])[:3]
    also = others + [f"{n} tickets" for n in other_counts]
    return {"protocol": protocol, "suite": suite, "group": group,
            "tickets": int(received) if received is not None else None,
            "handshakes": sum(negotiated.values()), "also": also}


def parse_tls_probe(text):
    """build/tests/tls_resume --json as scripts/bench --tls's probe of a
    server (benchlib.tls_probe) reads it: "full" and "resumed" (each
    _negotiated's, or None) and "error" (None, or what went wrong:
    connections that failed, no JSON at all). Raises nothing."""
    data = _json_object(text, TLS_PROBE_KEYS)
    if data is None:
        return {"full": None, "resumed": None, "error": "tls_resume did not finish: " + _last_words(text)}
    record = {"full": _negotiated(data, "full"), "resumed": _negotiated(data, "resumed"), "error": None}
    if data["failed"]:
        why = "; ".join(f"{n} x {reason}" for reason, n in sorted(data["failures"].items()))
        record["error"] = f"{data['failed']} of {data['connections']} connections failed: {why}"
    return record


# What scripts/bench --ws reads of ws_load --json.
WS_LOAD_KEYS = ("connections", "in_flight", "size", "seconds", "messages", "rate", "errors", "handshake_failures")


def parse_ws_load(text, status=0, output=""):
    """build/tests/ws_load --json FILE: `text` is FILE's, `status` its exit
    status (0 ok, 1 failures, 2 a bad flag), `output` what it printed. A
    message is a "request" here: one echoed and read back; failed counts
    its errors and the connections that did not upgrade."""
    data = _json_object(text, WS_LOAD_KEYS) if status in (0, 1) else None
    if data is None:
        raise ParseError(f"ws_load did not finish (status {status}): " + _last_words(output or text))
    failures = int(data["handshake_failures"])
    result = _result(requests=int(data["messages"]), failed=int(data["errors"]) + failures, non2xx=0,
                     rps=float(data["rate"]))
    result.update(ws_connections=int(data["connections"]), ws_in_flight=int(data["in_flight"]),
                  ws_size=int(data["size"]), ws_seconds=float(data["seconds"]), ws_errors=int(data["errors"]),
                  handshake_failures=failures, tool_own_busy=data.get("tool_busy"))
    reasons = "; ".join(f"{n} x {why}" for why, n in sorted((data.get("failures") or {}).items()))
    if failures and failures >= int(data["connections"]):
        result["error"] = f"ws_load: none of {failures} connections upgraded" + (f": {reasons}" if reasons else "")
    elif not result["requests"]:
        result["error"] = "ws_load: no message was echoed"
    elif result["failed"]:
        result["error"] = (f"ws_load: {result['ws_errors']} connections failed, {failures} did not upgrade"
                           + (f": {reasons}" if reasons else ""))
    return result


PARSERS = {"ab": parse_ab, "wrk": parse_wrk, "h2load": parse_h2load, "locust": parse_locust_csv,
           "tls_resume": parse_tls_resume, "ws_load": parse_ws_load}
