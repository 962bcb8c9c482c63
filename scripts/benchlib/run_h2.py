"""scripts/bench --h2: HTTP/2, h2c and h2, beside h2o, nginx, nghttpd, Go and
Tomcat, in alternating rounds; then RSS per idle HTTP/2 connection."""
import shutil
import sys
import tempfile

from . import extras, plan, targets, tls
from .measure import run_plan, start_plan

# --h2's jobs: h2load with 100 connections and 1, 10 and 100 streams at
# once on each; --performance runs the two that --h2's targets judge, h2c.
H2_JOBS = [("h2load", "m1", 100), ("h2load", "m10", 100), ("h2load", "m100", 100)]
PERFORMANCE_H2_JOBS = [H2_JOBS[0], H2_JOBS[2]]
# --h2's idle measure opens fewer connections than the others' by default:
# Python's HTTP/2 client makes them more slowly.
H2_IDLE_CONNECTIONS = 2000
# --h2 --quick: a check that every target starts and is measured.
H2_QUICK_DURATION, H2_QUICK_REPEAT, H2_QUICK_IDLE = 1, 2, 100


def add_option(group):
    """Its option, in --help's group of run kinds."""
    group.add_argument("--h2", action="store_true",
                       help="HTTP/2: the personas (default sanic) started with --h2, once in clear (h2c by prior "
                            "knowledge) and once over TLS (h2 by ALPN, an ECDSA P-256 certificate made for the run), "
                            "beside h2o, nginx, nghttpd and Tomcat 10.1 (Http2Protocol) likewise and Go net/http over "
                            "TLS, 1 worker each, all started at once and run in alternating rounds (--repeat, at least "
                            "5) under h2load -c100 -m1, -m10 and -m100; then RSS per idle HTTP/2 connection (h2c and "
                            "h2, the personas, h2o, nginx, nghttpd and Go). The ratios of server CPU per request "
                            "against h2o's and nginx's go in report.md. About 17 minutes (165 runs of 5 s, then the idle "
                            "measure). With --quick: every target "
                            f"and job {H2_QUICK_REPEAT} times for {H2_QUICK_DURATION} s and {H2_QUICK_IDLE} idle "
                            "connections, a check that everything starts and is measured (about 3 minutes), not a "
                            "measurement")


def configure(p, args, explicit):
    """--h2's personas, rounds and jobs; no options it sets itself."""
    if args.requests:
        p.error("--h2 runs for a --duration")
    if explicit or args.peers or args.access_log_pair:
        p.error("--h2 runs its own jobs, 1 worker, beside h2o, nginx, nghttpd, Go and Tomcat: no --workers, "
                "--tool, --mode, --connections, --peers or --access-log-pair")
    args.targets = args.targets or ["sanic"]
    if targets.CALIBRATION in args.targets:
        p.error(f"--h2 measures personas that speak HTTP/2 (not {targets.CALIBRATION})")
    if not args.quick:
        args.repeat = max(args.repeat, 5)
    # h2load's HTTP/2 modes are no --mode: the jobs are --h2's own.
    args.jobs = list(H2_JOBS)


def h2_items(args, split, cert):
    """--h2's targets, all with 1 worker, once in clear (variant "h2c") and
    once over TLS with `cert` (variant "h2"): the personas with --h2, h2o,
    nginx, nghttpd and Tomcat, and Go over TLS only."""
    cpus = plan.cpu_text(split.server)
    items = []
    for variant, over in (("h2c", None), ("h2", cert)):
        kw = dict(cpus=cpus, tls=over, http2=True)
        chosen = [targets.Persona(n, args.build_dir, **kw) for n in args.targets]
        chosen += [targets.H2o("h2o", **kw), targets.Nginx("nginx", **kw), targets.NgHttpd("nghttpd", **kw)]
        chosen += [targets.GoHello("go", **kw)] if over else []
        chosen += [targets.Tomcat("tomcat", **kw)]
        items += [(t, args.jobs, variant) for t in chosen]
    return items


def h2_idle_targets(args, split, cert):
    """(target, variant) of --h2's idle measure: the personas (kept open 75
    s, nginx's keepalive_timeout, where sanic's own 5 s could close the
    first connections before the last are open), h2o, nginx and nghttpd in
    clear and over TLS, and Go over TLS. Not Tomcat: a JVM's RSS follows
    its heap, not its connections."""
    cpus = plan.cpu_text(split.server)
    out = []
    for variant, over in (("h2c", None), ("h2", cert)):
        kw = dict(cpus=cpus, tls=over, http2=True)
        out += [(targets.Persona(n, args.build_dir, admin=False, extra=["--keepalive-timeout", "75"], **kw), variant)
                for n in args.targets]
        out += [(targets.H2o("h2o", **kw), variant), (targets.Nginx("nginx", **kw), variant),
                (targets.NgHttpd("nghttpd", **kw), variant)]
        out += [(targets.GoHello("go", **kw), variant)] if over else []
    return out


def h2_run(args, split, runs, cells, meta):
    """--h2: every target of h2_items started at once and run in
    alternating rounds (measure_interleaved), then the RSS per idle HTTP/2
    connection of each of h2_idle_targets."""
    cert_dir = tempfile.mkdtemp(prefix="bench-h2-")
    try:
        try:
            cert = tls.make_certificates(cert_dir, kinds=(tls.JUDGED,))[tls.JUDGED]
        except tls.CertificateError as e:
            sys.exit(f"scripts/bench --h2: {e}")
        items = h2_items(args, split, cert)
        meta["h2"] = {"personas": args.targets, "rounds": args.repeat, "key": cert.label, "quick": args.quick,
                      "idle_connections": args.idle_connections}
        print("  Go net/http: h2 over TLS only (its h2c needs golang.org/x/net, which is not here)", file=sys.stderr)
        start_plan(items, args)
        run_plan(items, args, split, runs, cells, alternate=True)
        print(f"  idle HTTP/2 connections ({args.idle_connections:,} to each)", file=sys.stderr)
        idle = []
        for target, variant in h2_idle_targets(args, split, cert):
            r = dict(extras.idle_rss(target, args.idle_connections), variant=variant)
            shown = f"{r['bytes_per_connection']:,.0f} bytes" if r.get("bytes_per_connection") else r.get("error")
            print(f"  {r['target']}: {shown}", file=sys.stderr)
            idle.append(r)
        meta["h2"]["idle_rss"] = idle
    finally:
        shutil.rmtree(cert_dir, ignore_errors=True)
