"""The measures of `scripts/bench --performance` that are not a load run:
RSS per idle connection (also over TLS, for --tls, over HTTP/2, for --h2,
and upgraded to WebSocket, for --ws), the heart's micro-benchmark and the allocation count. Each returns a dict for
results.json; a failure is an "error" key."""
import json
import os
import resource
import socket
import statistics
import subprocess
import tempfile
import time

from . import http2, targets, tls, websocket


def rss_kib(target):
    """VmRSS summed over the target's processes."""
    total = 0
    for pid in targets.process_tree(target.proc.pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def established(port, tables=("/proc/net/tcp", "/proc/net/tcp6")):
    """How many TCP connections of this host are established with `port`
    as their local port (the server's side of loopback connections)."""
    count = 0
    for table in tables:
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    if len(fields) > 3 and fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        count += 1
        except OSError:
            pass
    return count


def idle_rss(target, n, ws_path=None):
    """Starts `target` (1 worker), opens `n` loopback connections that each
    make one keep-alive request and then stay idle, and returns the RSS
    growth per connection. A target that serves TLS gets TLS connections
    (Python's ssl, verifying nothing), each idle after its handshake and
    request. A target started to speak HTTP/2 (its `http2`) gets an HTTP/2
    request on each (benchlib.http2: h2c by prior knowledge, or h2 by ALPN
    over TLS). With `ws_path`, each connection is upgraded to a WebSocket
    there instead (benchlib.websocket) and sends nothing more. The measure
    fails if the server closed any connection before
    its RSS was read (opening 10,000 TLS connections takes longer than some
    idle timeouts: the targets are started with longer ones). Bounded by
    `n` and a 5 s timeout per socket."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 1000:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    target.workers = 1
    request = f"GET {target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    context = (http2.client_context() if target.http2 else tls.client_context()) if target.tls else None
    socks = []
    result = {"target": target.label, "name": target.name, "kind": target.kind, "connections": n}
    try:
        target.start()

        def open_one():
            s = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            socks.append(s)
            if context:
                s = socks[-1] = context.wrap_socket(s, server_hostname="localhost")
            if target.http2:
                http2.one_request(s, target.path)
                return
            if ws_path:
                websocket.upgrade(s, ws_path, target.port)
                return
            s.sendall(request)
            if not s.recv(4096):
                raise OSError("closed before answering")

        open_one()
        time.sleep(0.5)
        base = rss_kib(target)
        while len(socks) < n:
            open_one()
        time.sleep(1)
        full = rss_kib(target)
        still = established(target.port)
        if still < n:
            raise OSError(f"{n - still} of {n} connections were closed before the RSS was read")
        return dict(result, rss_kib_one=base, rss_kib_all=full, bytes_per_connection=(full - base) * 1024 / (n - 1))
    except (OSError, targets.StartError) as e:
        return dict(result, error=f"{type(e).__name__}: {e}")
    finally:
        for s in socks:
            s.close()
        target.stop()


def micro_benchmark(build_dir, cpus, repetitions=15):
    """tests/session_benchmark pinned to `cpus`. The ratio of the heart to
    llhttp alone comes from its paired case (heart_vs_llhttp: short bursts
    of each side a fraction of a millisecond apart, the median of the
    pairs' ratios), which a shared machine's noise cannot tilt the way it
    tilts separate runs. The separate cases, interleaved at random and
    repeated, give the nanoseconds."""
    binary = os.path.join(build_dir, "tests", "session_benchmark")
    if not os.access(binary, os.X_OK):
        return {"error": f"{binary} not built (scripts/test builds it)"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run(["taskset", "-c", cpus, binary, f"--benchmark_repetitions={repetitions}",
                            "--benchmark_enable_random_interleaving=true", "--benchmark_min_time=0.05",
                            f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return {"error": f"session_benchmark exited {r.returncode}: {r.stderr.strip()[-300:]}"}
        data = json.load(open(out.name))
    times, paired = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        times.setdefault(b["run_name"], []).append(b["real_time"])
        if "ratio" in b:
            paired.setdefault(b["run_name"], []).append(b["ratio"])
    medians = {k: statistics.median(v) for k, v in times.items()}
    result = {"median_ns": medians, "repetitions": repetitions}
    for depth in ("1", "16"):
        ratios = paired.get(f"heart_vs_llhttp/{depth}")
        if ratios:
            result[f"ratio_{depth}"] = statistics.median(ratios)
    return result


def allocations(build_dir):
    """Runs tests/allocation_tests and returns the allocations it counted."""
    binary = os.path.join(build_dir, "tests", "allocation_tests")
    if not os.access(binary, os.X_OK):
        return {"error": f"{binary} not built (scripts/test builds it)"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run([binary, f"--gtest_output=json:{out.name}"], capture_output=True, text=True,
                           timeout=300)
        try:
            data = json.load(open(out.name))
        except ValueError:
            return {"error": f"allocation_tests exited {r.returncode} without a report"}
    counts = {t["name"]: int(t["allocations"]) for s in data["testsuites"] for t in s["testsuite"]
              if "allocations" in t}
    result = {"counts": counts, "passed": r.returncode == 0}
    if not counts:
        result["error"] = "allocation_tests recorded no counts"
    return result

