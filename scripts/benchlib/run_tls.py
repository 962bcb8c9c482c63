"""scripts/bench --tls: HTTPS beside nginx and h2o, with an ECDSA and an RSA
certificate, and the ECDSA one with every server on one TLS 1.3 suite, in
alternating rounds, each server first asked what it negotiates; then RSS
per idle TLS connection."""
import shutil
import sys
import tempfile

from . import extras, plan, targets, tls, tls_probe, tools
from .measure import run_plan, start_plan

# --tls's jobs: keep-alive and 16-deep pipelining over TLS (wrk), a full
# handshake per request (ab without -k: a new TLS session for every
# connection), and a resumed one (tls_resume, one connection at a time).
TLS_JOBS = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64), ("ab", "close", 20), ("tls_resume", "resume", 1)]
# The like-for-like variant (tls.FORCED) runs the full handshake alone: the
# job the suite weighs on most, and the run stays short.
FORCED_JOBS = (("ab", "close"),)


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--tls", action="store_true",
                       help="HTTPS: the personas (default sanic) started with --tls, nginx and h2o, each twice (an "
                            "ECDSA P-256 and an RSA 2048 certificate, self-signed, made for the run), 1 worker, all "
                            "started at once and run in alternating rounds (--repeat, at least 5) under wrk -c64 "
                            "keep-alive and 16-deep pipelining, ab -c20 (a full handshake per request) and "
                            "build/tests/tls_resume (a resumed handshake per request); a third time with the "
                            "ECDSA certificate and every server made to negotiate TLS_AES_256_GCM_SHA384 by its own "
                            "configuration, under ab -c20 only (like for like); then RSS per idle TLS "
                            "connection (ECDSA). Before the rounds, tls_resume asks every server once what it "
                            "negotiates (protocol, cipher suite, group, session tickets after a full and a resumed "
                            "handshake). The ratios of server CPU per request against nginx's and h2o's, and what "
                            "each negotiated, go in report.md")


def configure(p, args, explicit):
    """--tls's personas, rounds and jobs; no options it sets itself."""
    if args.requests:
        p.error("--tls runs for a --duration")
    if explicit or args.peers or args.access_log_pair:
        p.error("--tls runs its own jobs, 1 worker, beside nginx and h2o: no --workers, --tool, --mode, "
                "--connections, --peers or --access-log-pair")
    args.targets = args.targets or ["sanic"]
    args.repeat = max(args.repeat, 5)
    # tls_resume and its mode are no --tool or --mode: args.tool and
    # args.mode keep their defaults, and the jobs are --tls's own.
    args.jobs = list(TLS_JOBS)


def tls_items(args, split, certs):
    """--tls's targets, once per certificate of `certs` ({variant:
    Certificate}): the personas, nginx and h2o, all with 1 worker; the
    variant tls.FORCED with FORCED_JOBS only."""
    cpus = plan.cpu_text(split.server)
    items = []
    for kind, cert in certs.items():
        jobs = [j for j in args.jobs if j[:2] in FORCED_JOBS] if kind == tls.FORCED else args.jobs
        items += [(targets.Persona(n, args.build_dir, cpus=cpus, tls=cert), jobs, kind) for n in args.targets]
        items += [(targets.Nginx("nginx", path="/", cpus=cpus, tls=cert), jobs, kind),
                  (targets.H2o("h2o", path="/", cpus=cpus, tls=cert), jobs, kind)]
    return items


def probe_items(items, started):
    """tls_probe's record of every (target, jobs, variant) of `items`: those
    of `started` probed, the others with the reason they were not."""
    probed = {id(t): r for r, (t, _, _) in zip(tls_probe.probe_all(started), started)}
    return [probed.get(id(t)) or {"target": t.label, "name": t.name, "kind": t.kind, "variant": variant,
                                   "full": None, "resumed": None, "error": "did not start"}
            for t, _, variant in items]


def tls_run(args, split, runs, cells, meta):
    """--tls: every target of tls_items started at once and run in
    alternating rounds (measure_interleaved), then the RSS per idle TLS
    connection of each persona, nginx and h2o with the judged certificate."""
    tools.use_build_dir(args.build_dir)
    cert_dir = tempfile.mkdtemp(prefix="bench-tls-")
    try:
        try:
            certs = tls.make_certificates(cert_dir)
        except tls.CertificateError as e:
            sys.exit(f"scripts/bench --tls: {e}")
        certs[tls.FORCED] = tls.forced(certs[tls.JUDGED])
        items = tls_items(args, split, certs)
        meta["tls"] = {"personas": args.targets, "rounds": args.repeat, "judged": tls.JUDGED,
                       "keys": {kind: cert.label for kind, cert in certs.items()},
                       "forced": {"variant": tls.FORCED, "suite": tls.FORCED_SUITE}}
        start_plan(items, args)

        def probe(started):
            meta["tls"]["negotiated"] = probe_items(items, started)

        run_plan(items, args, split, runs, cells, alternate=True, before=probe)
        judged, cpus = certs[tls.JUDGED], plan.cpu_text(split.server)
        print(f"  idle TLS connections ({judged.label})", file=sys.stderr)
        # Idle long enough for every connection to be open when the RSS is
        # read: nginx's keepalive_timeout (h2o-tls.conf.in has it too).
        idle = [targets.Persona(n, args.build_dir, cpus=cpus, admin=False, tls=judged,
                                extra=["--keepalive-timeout", "75"]) for n in args.targets]
        idle += [targets.Nginx("nginx", path="/", cpus=cpus, tls=judged),
                 targets.H2o("h2o", path="/", cpus=cpus, tls=judged)]
        meta["tls"]["idle_rss"] = [extras.idle_rss(t, args.idle_connections) for t in idle]
    finally:
        shutil.rmtree(cert_dir, ignore_errors=True)
