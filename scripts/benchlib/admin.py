"""The admin port of our personas (--admin, docs/observability.md): a new
/stats window before each load run, and the server's own service-time
percentiles right after it. urllib only."""
import json
import urllib.error
import urllib.request

# The keys of /stats' total.service_time_us, in microseconds ("count" is a count).
SERVICE_TIME_KEYS = ("p50", "p90", "p99", "p99_9", "max")


class AdminError(Exception):
    """The admin port did not answer, or not as expected."""


def _request(port, path, method, timeout):
    url = f"http://127.0.0.1:{port}{path}"
    req = urllib.request.Request(url, data=b"" if method == "POST" else None, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.read()
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise AdminError(f"admin port {port}: {method} {path}: {getattr(e, 'reason', e)}") from None


def reset(port, timeout=2.0):
    """POST /stats/reset: /stats counts from now."""
    _request(port, "/stats/reset", "POST", timeout)


def stats(port, timeout=5.0):
    """GET /stats, decoded."""
    body = _request(port, "/stats", "GET", timeout)
    try:
        return json.loads(body)
    except ValueError as e:
        raise AdminError(f"admin port {port}: /stats is not JSON: {e}") from None


def service_time(data):
    """The run fields of a /stats answer: server_p50 ... server_max in
    milliseconds (like the tools' latencies) and server_count, from
    total.service_time_us."""
    try:
        st = data["total"]["service_time_us"]
        out = {f"server_{k}": float(st[k]) / 1000.0 for k in SERVICE_TIME_KEYS}
        out["server_count"] = int(st["count"])
    except (KeyError, TypeError, ValueError) as e:
        raise AdminError(f"/stats has no total.service_time_us ({type(e).__name__}: {e})") from None
    return out


def worker_requests(data):
    """The requests each worker answered, in worker order, from /stats."""
    try:
        return [int(w["requests"]) for w in data["workers"]]
    except (KeyError, TypeError, ValueError) as e:
        raise AdminError(f"/stats has no workers[].requests ({type(e).__name__}: {e})") from None
