"""scripts/soak's run: the server started, every kind of client at once,
the two quiesces, SIGTERM, and the checks of what the clients and the
server counted, the descriptors and the memory."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from .clients import CLIENTS, COMPLETE_KINDS
from .counting import Control, Env, KindStats
from .server import Sampler, admin_get, cpu_seconds, quiesce, start_server, tail
from .settings import FD_TOLERANCE, HOST, RSS_TOLERANCE_FRACTION, RSS_TOLERANCE_KIB, SHUTDOWN_TIMEOUT_S, kinds
from .wire import Lost, Wrong
from .ws_checks import check_websocket
from .ws_clients import WS_CLIENTS


def run(args):
    tmp = tempfile.mkdtemp(prefix="hello-soak-")
    failures = []
    proc, port, admin, cmd, log, stats_json = start_server(args, tmp)
    try:
        if port is None or admin is None:
            msg = "; ".join(tail(log, 3)) or "no output"
            print(f"soak: the server did not report its ports within 10 s ({msg})", file=sys.stderr)
            print("FAIL: the server did not start", file=sys.stderr)
            return 1
        wait_ready(admin)
        print(f"soak: {os.path.basename(args.binary)} ({args.workers} worker{'s' if args.workers > 1 else ''}) "
              f"on {HOST}:{port}, admin {HOST}:{admin}, {args.seconds:g} s", flush=True)
        stats, figures = load(args, proc, port, admin, failures)
        stop_server(proc, failures)
        total, complete, client_4xx = client_figures(stats, failures)
        summary = check_summary(stats_json, total, complete, client_4xx, failures)
        check_websocket(summary, stats, failures)
        check_resources(figures, failures)
        print(f"server exit status {proc.returncode}")
        if proc.returncode != 0:
            print("the server's last lines:\n" + "\n".join(f"  {ln}" for ln in tail(log, 8)))

        if failures:
            print(f"FAIL: {len(failures)} check{'s' if len(failures) > 1 else ''} failed; "
                  f"the server's log and --stats-json are kept in {tmp}", flush=True)
            for f in failures:
                print(f"FAIL: {f}", file=sys.stderr)
            return 1
        print("PASS")
        shutil.rmtree(tmp, ignore_errors=True)
        return 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_ready(admin):
    """Waits (5 s at most) for the admin port's /readyz to say 200."""
    for _ in range(50):
        try:
            if admin_get(admin, "/readyz").status == 200:
                break
        except (Lost, Wrong, OSError):
            pass
        time.sleep(0.1)


def start_clients(args, port, failures_of_clients):
    """Every kind's client threads, made (not started), their Control and
    their stats by kind; a client that raises is said in
    `failures_of_clients`."""
    chosen = kinds(args.persona)
    threads = sum(n for _, n, _ in chosen)
    t0 = time.monotonic()
    ctl = Control(threads, t0 + args.seconds + 60)
    env = Env(port, args.persona, ctl, args.seconds)
    stats = {kind: KindStats(kind) for kind, _, _ in chosen}
    clients = dict(CLIENTS, **WS_CLIENTS)
    workers = []
    for kind, n, rate in chosen:
        for i in range(n):
            rnd = random.Random(f"{kind}{i}{os.getpid()}")

            def body(kind=kind, rate=rate, rnd=rnd):
                try:
                    clients[kind](env, stats[kind], rnd, rate)
                except Exception:
                    failures_of_clients.append(f"client {kind} crashed: "
                                               + traceback.format_exc().strip().splitlines()[-1])
                finally:
                    ctl.finished()
            w = threading.Thread(target=body, name=f"{kind}-{i}", daemon=True)
            workers.append(w)
    return t0, ctl, stats, workers


def load(args, proc, port, admin, failures):
    """The load for args.seconds, quiesced after the warm-up and at the
    end; returns the stats by kind and the figures the resource checks
    read: (warm, end, ran, cpu, sampler)."""
    crashed = []
    t0, ctl, stats, workers = start_clients(args, port, crashed)
    sampler = Sampler(proc.pid)
    sampler.start()
    for w in workers:
        w.start()

    def run_until(t):
        while time.monotonic() < t and proc.poll() is None:
            time.sleep(min(0.25, max(0.0, t - time.monotonic())))

    run_until(t0 + max(3.0, 0.1 * args.seconds))
    warm = quiesce(ctl, proc, admin, failures, "warm-up")
    ctl.set("run")
    run_until(t0 + args.seconds)
    end = quiesce(ctl, proc, admin, failures, "end") if proc.poll() is None else None
    ran = time.monotonic() - t0
    cpu = cpu_seconds(proc.pid)
    ctl.set("stop")
    for w in workers:
        w.join(max(0.1, t0 + args.seconds + 30 - time.monotonic()))
    stuck = [w.name for w in workers if w.is_alive()]
    if stuck:
        failures.append(f"client threads did not stop: {', '.join(stuck)}")
    failures.extend(crashed)
    sampler.halt.set()
    return stats, (warm, end, ran, cpu, sampler)


def stop_server(proc, failures):
    """Stops the server gracefully: SIGTERM, and exit status 0 expected."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(SHUTDOWN_TIMEOUT_S + 10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            failures.append(f"the server did not exit within {SHUTDOWN_TIMEOUT_S + 10} s of SIGTERM (killed)")
    if proc.returncode != 0:
        failures.append(f"the server exited with status {proc.returncode}, not 0 (its last lines above)")


def client_figures(stats, failures):
    """Prints the clients' figures by kind; returns the totals, the
    complete requests answered and the 408s and 431s the clients got."""
    total = {"sent": 0, "answered": 0, "lost": 0, "wrong": 0, "connections": 0}
    examples = []
    print(f"\n{'kind':<10} {'conns':>7} {'sent':>8} {'answered':>9} {'lost':>5} {'wrong':>5}  notes")
    for kind, s in stats.items():
        row = {k: s.get(k) for k in total}
        for k in total:
            total[k] += row[k]
        notes = ", ".join(f"{k} {v}" for k, v in sorted(s.counts.items()) if k not in total)
        print(f"{kind:<10} {row['connections']:>7} {row['sent']:>8} {row['answered']:>9} "
              f"{row['lost']:>5} {row['wrong']:>5}  {notes}")
        if row["lost"] or row["wrong"]:
            failures.append(f"{kind}: lost {row['lost']}, wrong {row['wrong']} (examples above)")
            examples.extend(f"  {kind}: {e}" for e in s.errors)
        elif not row["answered"]:
            failures.append(f"{kind}: no answers at all")
    print(f"{'total':<10} {total['connections']:>7} {total['sent']:>8} {total['answered']:>9} "
          f"{total['lost']:>5} {total['wrong']:>5}")
    print(f"lost={total['lost']} wrong={total['wrong']}")
    if examples:
        print("examples of lost and wrong answers:")
        print("\n".join(examples))
    complete = sum(stats[k].get("answered") for k in COMPLETE_KINDS)
    client_4xx = stats["slowloris"].get("408") + stats["oversized"].get("431")
    return total, complete, client_4xx


def check_summary(stats_json, total, complete, client_4xx, failures):
    """The server's exit summary (--stats-json) against what the clients counted."""
    try:
        with open(stats_json) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        summary = None
        failures.append(f"no usable --stats-json file: {e}")
    if summary is not None:
        for part in summary.get("workers", []) + [dict(summary.get("total", {}), id="total")]:
            closed = part.get("closed", {})
            took = part.get("connections", 0) + part.get("connections_rejected", 0)
            ended = sum(v for v in closed.values() if isinstance(v, int)) + part.get("connections_rejected", 0)
            if took != ended:
                failures.append(f"worker {part.get('id')}: {took} connections accepted (rejected included) "
                                f"but {ended} closed (rejected included): {closed}")
        t = summary.get("total", {})
        closed = t.get("closed", {})
        print(f"server: connections accepted {t.get('connections')} (rejected {t.get('connections_rejected')}), "
              f"closed {sum(closed.values())} ({', '.join(f'{k} {v}' for k, v in closed.items() if v)}); "
              f"requests {t.get('requests')} (clients got answers to {complete} complete requests); "
              f"responses {t.get('responses')}")
        if t.get("requests", -1) < complete:
            failures.append(f"the server counted {t.get('requests')} requests, fewer than the {complete} "
                            f"the clients got answers to")
        if t.get("responses", {}).get("4xx", -1) < client_4xx:
            failures.append(f"the server counted {t.get('responses', {}).get('4xx')} 4xx answers, fewer than "
                            f"the {client_4xx} 408s and 431s the clients got")
        if t.get("connections", 0) > total["connections"]:
            failures.append(f"the server accepted {t.get('connections')} connections, more than the "
                            f"{total['connections']} the clients opened")
    return summary


def check_resources(figures, failures):
    """Descriptors and memory at the end against the warm-up's."""
    warm, end, ran, cpu, sampler = figures
    rss_max = max(sampler.samples) if sampler.samples else None
    if warm and end:
        rss_limit = int(warm[1] * (1 + RSS_TOLERANCE_FRACTION)) + RSS_TOLERANCE_KIB
        print(f"RSS KiB: warm-up {warm[1]}, end {end[1]} (limit {rss_limit}; max while loaded {rss_max}, "
              f"{len(sampler.samples)} samples)")
        print(f"descriptors: warm-up {warm[0]}, end {end[0]} (limit {warm[0] + FD_TOLERANCE})")
        if warm[3] is not None or end[3] is not None:
            print(f"hello_websocket_connections_open once quiesced: warm-up {warm[3]}, end {end[3]}")
        print(f"quiesce took {warm[2]:.1f} s at warm-up, {end[2]:.1f} s at the end; load ran {ran:.1f} s"
              + (f"; server CPU {cpu:.1f} s ({100 * cpu / ran:.0f}% of one CPU)" if cpu is not None else ""))
        if end[0] > warm[0] + FD_TOLERANCE:
            failures.append(f"descriptors: {end[0]} at the end, {warm[0]} after warm-up "
                            f"(more than {FD_TOLERANCE} more)")
        if end[1] > rss_limit:
            failures.append(f"RSS: {end[1]} KiB at the end, over {rss_limit} KiB "
                            f"(warm-up {warm[1]} KiB + {RSS_TOLERANCE_FRACTION:.0%} + {RSS_TOLERANCE_KIB} KiB)")
