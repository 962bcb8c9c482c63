"""How a bench run uses the machine: which CPUs serve and which load, how
many threads a load tool runs and how it spreads its connections, which
worker counts --scaling measures, and who was the limit of a run: the
server or the load tool. Pure functions of lists and figures, so that
tests/bench/test_plan.py checks them for any machine."""
import math
from typing import NamedTuple

# A side whose CPU use reached this share of the CPUs it could use was at
# its limit. A run where the load tool was and the server was not is
# tool-bound: its requests per second are the tool's, not the server's.
BUSY = 0.90


class PlanError(Exception):
    """A CPU list or split that cannot be used; the message says why."""


def parse_cpus(text):
    """taskset's list form, "0-3,8", as a sorted list of CPU numbers."""
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise PlanError(f"'{text}' is not a CPU list (for example 0-3,8)")
        lo, hi = int(lo), int(hi) if sep else int(lo)
        if hi < lo:
            raise PlanError(f"'{part}' in '{text}' is a range that goes down")
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


def cpu_text(cpus):
    """A list of CPU numbers in taskset's list form: [0, 1, 2, 3, 8] -> "0-3,8"."""
    parts, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


class Split(NamedTuple):
    """The CPUs the server runs on and those the load tool runs on."""
    server: tuple
    tool: tuple

    @property
    def shared(self):
        """CPUs in both lists: then neither side's figures are its own."""
        return tuple(sorted(set(self.server) & set(self.tool)))


def split_cpus(available, server=None, tool=None):
    """The split of `available` (this process's CPUs): the given lists, the
    rest of the CPUs for a side not given, or by default the upper half
    serving and the lower half loading (on one CPU, both on it)."""
    available = sorted(available)
    for name, cpus in (("--server-cpus", server), ("--tool-cpus", tool)):
        if cpus is not None:
            foreign = sorted(set(cpus) - set(available))
            if foreign:
                raise PlanError(f"{name}: CPU {cpu_text(foreign)} is not one this process may run on "
                                f"({cpu_text(available)})")
    if server is None and tool is None:
        if len(available) < 2:
            return Split(tuple(available), tuple(available))
        half = len(available) // 2
        return Split(tuple(available[half:]), tuple(available[:half]))
    if server is None:
        server = [c for c in available if c not in tool]
        if not server:
            raise PlanError(f"--tool-cpus {cpu_text(tool)} leaves no CPU to serve: give --server-cpus too")
    if tool is None:
        tool = [c for c in available if c not in server]
        if not tool:
            raise PlanError(f"--server-cpus {cpu_text(server)} leaves no CPU for the load tool: "
                            "give --tool-cpus too")
    return Split(tuple(sorted(server)), tuple(sorted(tool)))


class Load(NamedTuple):
    """How one load tool runs: its threads (processes for locust), the
    connections it opens in all and per thread, and how many CPUs it can
    keep busy at most."""
    threads: int
    connections: int
    per_thread: int
    parallel: int


def tool_load(tool, tool_cpus, connections, requests=None):
    """The load of `tool` ("wrk", "h2load", "ab", "locust", "locust-w4") on
    `tool_cpus` CPUs for `connections` connections asked. wrk and h2load run
    one thread per load CPU, never more threads than connections, and the
    connections are rounded up to a multiple of the threads so that every
    thread has as many (wrk drops the rest of an uneven division); with a
    request count (h2load -n, which must be at least -c) they are rounded
    down instead where up would pass it. ab and one locust process are
    single-threaded; locust-wN runs N worker processes (and a master that
    makes no requests); tls_resume runs one thread per connection, each
    making one connection at a time; ws_load runs every connection on one
    libuv loop, one thread."""
    if tool_cpus < 1 or connections < 1:
        raise PlanError("a load needs at least one CPU and one connection")
    if tool == "tls_resume":
        return Load(connections, connections, 1, min(connections, tool_cpus))
    if tool == "ws_load":
        return Load(1, connections, connections, 1)
    if tool in ("wrk", "h2load"):
        threads = min(tool_cpus, connections, requests or connections)
        per = math.ceil(connections / threads)
        if requests and per * threads > requests:
            per = requests // threads
        return Load(threads, per * threads, per, threads)
    workers = int(tool[len("locust-w"):]) if tool.startswith("locust-w") else 1
    return Load(1, connections, connections, min(workers, tool_cpus))


def oversubscribed(workers, server_cpus):
    """More workers than the server has CPUs: some share one."""
    return workers > server_cpus


def scaling_workers(server_cpus):
    """--scaling's worker counts: 1, 2, 4 ... up to the server's CPUs, and
    their number itself when it is not a power of two."""
    counts, n = [], 1
    while n <= server_cpus:
        counts.append(n)
        n *= 2
    if counts[-1] != server_cpus:
        counts.append(server_cpus)
    return counts


def scaling_connections(server_cpus):
    """--scaling's connections: 64, or 32 per server CPU on a bigger
    machine, so that SO_REUSEPORT's hash gives every worker a fair number."""
    return max(64, 32 * server_cpus)


def busy(cpu_seconds, wall_seconds, cpus):
    """The share of `cpus` CPUs that `cpu_seconds` of CPU time kept busy
    over `wall_seconds`; None without figures."""
    if cpu_seconds is None or not wall_seconds or not cpus:
        return None
    return cpu_seconds / (wall_seconds * cpus)


def limit(tool_busy, server_busy, tool_cpus_busy=None, shared=False):
    """Who was the limit of one run: "tool" (the load tool was at its limit
    and the server was not: tool-bound), "server", "both", or None (neither
    was: the connections or the latency were). The tool was at its limit
    when its own processes kept BUSY of the CPUs it can use busy, or when
    its CPUs were that busy counting everything that ran on them (a
    neighbour that takes the tool's CPU weakens the load just as much).
    With `shared` CPUs the server is that neighbour, so only the tool's own
    figure counts."""
    if shared:
        tool_cpus_busy = None
    if tool_busy is None and tool_cpus_busy is None:
        return None
    tool_at = max(tool_busy or 0, tool_cpus_busy or 0) >= BUSY
    server_at = server_busy is not None and server_busy >= BUSY
    if tool_at and server_at:
        return "both"
    if tool_at:
        return "tool"
    return "server" if server_at else None


def cpu_jiffies(cpus, stat_text):
    """From /proc/stat's text, the (busy, total) clock ticks of `cpus` so
    far: busy is everything but idle and iowait (steal included: time the
    CPU was not ours)."""
    busy_ticks = total = 0
    wanted = {f"cpu{c}" for c in cpus}
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] in wanted:
            ticks = [int(x) for x in fields[1:9]]
            total += sum(ticks)
            busy_ticks += sum(ticks) - ticks[3] - ticks[4]
    return busy_ticks, total


def read_cpu_jiffies(cpus):
    try:
        with open("/proc/stat") as f:
            return cpu_jiffies(cpus, f.read())
    except OSError:
        return None


def cpus_busy(before, after):
    """The busy share of a CPU set between two read_cpu_jiffies()."""
    if not before or not after or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def listing(text):
    """The items of a comma-separated option (empty items dropped)."""
    return [x for x in text.split(",") if x]
