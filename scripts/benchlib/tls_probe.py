"""What each server of `scripts/bench --tls` negotiates, asked once before
the rounds: build/tests/tls_resume makes PROBE_CONNECTIONS connections, the
first a full handshake, the others offered the session of the one before,
and says what each negotiated and how many session tickets it received.
The report prints it beside the costs, so that a reader sees whether two
figures are like for like."""
import subprocess
import sys

from . import parsers, tools

PROBE_CONNECTIONS = 5
# Seconds one probe may take: five connections take milliseconds.
PROBE_TIMEOUT = 60
# OpenSSL 3.0's TLS 1.3 suites in its client's order.
TLS13_SUITES = ("TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256")


def offered_suites(forced):
    """The TLS 1.3 suites a probe offers a server made to negotiate
    `forced` (a colon-separated list): OpenSSL's, those last, so that a
    server that negotiates one of them was made to; None (OpenSSL's
    client's own offer, what a default client sends) when nothing is forced."""
    if not forced:
        return None
    chosen = forced.split(":")
    return ":".join([s for s in TLS13_SUITES if s not in chosen] + chosen)


def probe_command(target, binary=None):
    """tls_resume's argv that probes a started `target`."""
    argv = [binary or tools.BINARIES["tls_resume"], "--port", str(target.port), "--host", "127.0.0.1",
            "--path", target.path, "--count", str(PROBE_CONNECTIONS), "--json"]
    offer = offered_suites(target.tls.suites if target.tls else "")
    return argv + (["--ciphersuites", offer] if offer else [])


def probe(target, variant, binary=None):
    """What a started `target` negotiates (parsers.parse_tls_probe's
    record), with its label, name, kind and `variant`; a probe that could
    not run says why in "error"."""
    record = {"target": target.label, "name": target.name, "kind": target.kind, "variant": variant}
    problem = tools.missing("tls_resume") if binary is None else None
    if problem:
        return dict(record, full=None, resumed=None, error=problem)
    try:
        done = subprocess.run(probe_command(target, binary), capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (subprocess.TimeoutExpired, OSError) as e:
        why = f"within {PROBE_TIMEOUT} s" if isinstance(e, subprocess.TimeoutExpired) else f"({e})"
        return dict(record, full=None, resumed=None, error=f"tls_resume did not finish {why}")
    return dict(record, **parsers.parse_tls_probe(done.stdout + done.stderr))


def probe_text(record):
    """One probe in a line: "TLSv1.3 TLS_AES_256_GCM_SHA384 x25519, tickets 2 full / 1 resumed"."""
    full, resumed = record.get("full"), record.get("resumed")
    if not full:
        return record.get("error") or "no handshake completed"
    tickets = f"tickets {full['tickets']} full / {resumed['tickets'] if resumed else '-'} resumed"
    text = f"{full['protocol']} {full['suite']} {full['group']}, {tickets}"
    return text + (f" ({record['error']})" if record.get("error") else "")


def probe_all(started):
    """probe() of every (target, jobs, variant) of `started`, each said on stderr."""
    records = []
    for target, _, variant in started:
        records.append(probe(target, variant))
        print(f"  negotiated: {target.label}: {probe_text(records[-1])}", file=sys.stderr)
    return records
