"""scripts/bench --tls: HTTPS beside nginx and h2o, with an ECDSA and an RSA
certificate, in alternating rounds; then RSS per idle TLS connection."""
import shutil
import sys
import tempfile

from . import extras, plan, targets, tls, tools
from .measure import run_plan, start_plan

# --tls's jobs: keep-alive and 16-deep pipelining over TLS (wrk), a full
# handshake per request (ab without -k: a new TLS session for every
# connection), and a resumed one (tls_resume, one connection at a time).
TLS_JOBS = [("wrk", "keepalive", 64), ("wrk", "pipeline", 64), ("ab", "close", 20), ("tls_resume", "resume", 1)]


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--tls", action="store_true",
                       help="HTTPS: the personas (default sanic) started with --tls, nginx and h2o, each twice (an "
                            "ECDSA P-256 and an RSA 2048 certificate, self-signed, made for the run), 1 worker, all "
                            "started at once and run in alternating rounds (--repeat, at least 5) under wrk -c64 "
                            "keep-alive and 16-deep pipelining, ab -c20 (a full handshake per request) and "
                            "build/tests/tls_resume (a resumed handshake per request); then RSS per idle TLS "
                            "connection (ECDSA). The ratios of server CPU per request against nginx's and h2o's "
                            "go in report.md")


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
    """--tls's targets, once per certificate of `certs` ({kind: Certificate},
    the kind their variant): the personas, nginx and h2o, all with 1 worker."""
    cpus = plan.cpu_text(split.server)
    items = []
    for kind, cert in certs.items():
        items += [(targets.Persona(n, args.build_dir, cpus=cpus, tls=cert), args.jobs, kind) for n in args.targets]
        items += [(targets.Nginx("nginx", path="/", cpus=cpus, tls=cert), args.jobs, kind),
                  (targets.H2o("h2o", path="/", cpus=cpus, tls=cert), args.jobs, kind)]
    return items


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
        items = tls_items(args, split, certs)
        meta["tls"] = {"personas": args.targets, "rounds": args.repeat, "judged": tls.JUDGED,
                       "keys": {kind: cert.label for kind, cert in certs.items()}}
        start_plan(items, args)
        run_plan(items, args, split, runs, cells, alternate=True)
        judged, cpus = certs[tls.JUDGED], plan.cpu_text(split.server)
        print(f"  idle TLS connections ({judged.label})", file=sys.stderr)
        idle = [targets.Persona(n, args.build_dir, cpus=cpus, admin=False, tls=judged) for n in args.targets]
        idle += [targets.Nginx("nginx", path="/", cpus=cpus, tls=judged),
                 targets.H2o("h2o", path="/", cpus=cpus, tls=judged)]
        meta["tls"]["idle_rss"] = [extras.idle_rss(t, args.idle_connections) for t in idle]
    finally:
        shutil.rmtree(cert_dir, ignore_errors=True)
