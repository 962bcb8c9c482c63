"""The --tls and --h2 sections of report.md: each persona's CPU per request
against nginx's and h2o's (and for HTTP/2 nghttpd's, Go's and
Tomcat's), RSS per idle connection, and the cells."""
from .report_cells import _fmt, _rps_text, marked, paired_text, with_legend


# --tls (docs/benchmarks.md): each persona's server CPU per request over a
# peer's, with the judged certificate (ECDSA P-256), at most these; the
# other key type's ratio is shown beside, not judged.
TLS_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)"), ("wrk", "pipeline", "16-deep pipelining (wrk -c64)"),
            ("ab", "close", "a full handshake per request (ab -c20)"),
            ("tls_resume", "resume", "a resumed handshake per request (tls_resume)"))
TLS_TARGETS = (("wrk", "keepalive", "nginx", 0.90), ("wrk", "keepalive", "h2o", 0.90),
               ("wrk", "pipeline", "nginx", 0.15), ("ab", "close", "nginx", 0.90), ("ab", "close", "h2o", 0.95),
               ("tls_resume", "resume", "nginx", 0.85))
TLS_PEERS = {"nginx": "nginx", "h2o": "h2o 2.2.5 (static file)"}
# RSS per idle TLS connection, a persona's over nginx's, at most this.
TLS_IDLE_TARGET = 0.75


def _variant_cell(cells, name, kind, tool, mode, variant):
    return next((c for c in cells if (c["name"], c["kind"], c["tool"], c["mode"], c.get("variant"))
                 == (name, kind, tool, mode, variant)), None)


def _variant_ratio(cells, persona, peer, tool, mode, variant):
    """(the persona's cell, the peer's, their ratio of CPU per request or None)."""
    mine = _variant_cell(cells, persona, "persona", tool, mode, variant)
    theirs = _variant_cell(cells, peer, "peer", tool, mode, variant)
    a, b = (c.get("cpu_us_per_request") if c else None for c in (mine, theirs))
    return mine, theirs, (a / b if a and b else None)


def _row(*fields):
    return "| " + " | ".join(fields) + " |"


def _problem(*cells):
    """What a figure that is missing says: the first cell's error, or "not measured"."""
    return next((c["error"] for c in cells if c and c.get("error")), None) or "not measured"


def ratio_result(persona, peer, mine, theirs, ratio, limit):
    """The result and verdict of hello-`persona`'s CPU per request over
    `peer`'s (their cells and ratio, as _variant_ratio gives them) against
    `limit`, the rounds' own ratios beside it."""
    if ratio is None:
        return _problem(mine, theirs), "not measured"
    result = marked(f"hello-{persona} {mine['cpu_us_per_request']:.2f} µs, {peer} "
                    f"{theirs['cpu_us_per_request']:.2f} µs: {ratio:.3f}", mine, theirs) + paired_text(mine, theirs)
    return result, "yes" if ratio <= limit else "**no**"


def idle_result(persona, ours, peer, theirs, limit=None):
    """The result and verdict of RSS per idle connection, hello-`persona`'s
    (`ours`, an extras.idle_rss dict) over `peer`'s (`theirs`), against
    `limit` (None: informational, verdict "-")."""
    a, b = ours.get("bytes_per_connection"), theirs.get("bytes_per_connection")
    if a and b:
        result = (f"hello-{persona} {a:,.0f} bytes, {peer} {b:,.0f} bytes "
                  f"({ours['connections']:,} connections): {a / b:.2f}")
        return result, ("yes" if a / b <= limit else "**no**") if limit else "-"
    # Each side's figure or what went wrong, so that the one measured is still read.
    result = "; ".join(f"{who} {x:,.0f} bytes ({r['connections']:,} connections)" if x else
                       f"{who}: {r.get('error') or 'not measured'}"
                       for who, x, r in ((f"hello-{persona}", a, ours), (peer, b, theirs)))
    return result, "not measured" if limit else "-"


def tls_table(meta, cells):
    """--tls: each persona's CPU per request over nginx's and h2o's with the
    judged certificate, against TLS_TARGETS, the rounds' own ratios beside
    it and the other key type's ratio beside that; RSS per idle TLS
    connection against nginx's; then the cells themselves."""
    run = meta.get("tls")
    if not run:
        return ""
    keys, judged = run.get("keys", {}), run.get("judged")
    others = [k for k in keys if k != judged]
    jobs = {(tool, mode): label for tool, mode, label in TLS_JOBS}
    rows = [_row("measure", "target", f"{keys.get(judged, judged)}: result", "met?",
                 *(f"{keys.get(k, k)} (information)" for k in others)),
            _row(*["---"] * (4 + len(others)))]
    for persona in run.get("personas", []):
        for tool, mode, peer, limit in TLS_TARGETS:
            result, met = ratio_result(persona, peer, *_variant_ratio(cells, persona, peer, tool, mode, judged), limit)
            beside = []
            for kind in others:
                m, t, r = _variant_ratio(cells, persona, peer, tool, mode, kind)
                beside.append(f"{m['cpu_us_per_request']:.2f} / {t['cpu_us_per_request']:.2f} µs: {r:.3f}"
                              if r is not None else "not measured")
            rows.append(_row(f"CPU/request, {jobs[(tool, mode)]}, hello-{persona} vs {TLS_PEERS[peer]}",
                             f"≤ {limit:.2f}", result, met, *beside))
    idle = {(r.get("name"), r.get("kind")): r for r in run.get("idle_rss", [])}
    for persona in run.get("personas", []):
        ours = idle.get((persona, "persona"), {})
        for peer, limit in (("nginx", TLS_IDLE_TARGET), ("h2o", None)):
            result, met = idle_result(persona, ours, peer, idle.get((peer, "peer"), {}), limit)
            rows.append(_row(f"RSS per idle TLS connection, hello-{persona} vs {TLS_PEERS[peer]}",
                             f"≤ {limit:.2f}" if limit else "none (informational)", result, met,
                             *["-"] * len(others)))
    cell_rows = ["| server | certificate | job | req/s (median) | CPU µs/req (median) | runs | problems |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        if c.get("variant") in keys and (c["tool"], c["mode"]) in jobs:
            cell_rows.append(f"| {c['target']} | {keys[c['variant']]} | {jobs[(c['tool'], c['mode'])]} | "
                             f"{_rps_text(c)} | {_fmt(c.get('cpu_us_per_request'), 2)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return with_legend(rows) + "\n\n" + "\n".join(cell_rows)


def tls_text(meta):
    """What the TLS section measured, before its table."""
    run = meta["tls"]
    keys = run.get("keys", {})
    personas = ", ".join(f"hello-{p}" for p in run.get("personas", []))
    return (f"{personas} (started with `--tls --tls-cert CERT --tls-key KEY`), nginx and h2o 2.2.5, 1 worker each, "
            f"every one started once per certificate ({' and '.join(keys.values())}, self-signed for localhost, "
            "made for this run) and all at once. The clients (wrk, ab, tls_resume with `--tls-max 1.3`, Python's "
            "ssl) negotiate TLS 1.3 and send no ALPN: HTTP/1.1. nginx resumes sessions with its defaults: session tickets on, no shared session "
            "cache; h2o with its own (an internal cache and tickets), its private-key operations in its "
            "threads (`neverbleed: OFF`). Rounds alternate (each job on every target in turn, every second "
            f"round in reverse order), {run.get('rounds', '-')} rounds; each ratio divides two medians of server "
            f"CPU per request of this run, and the rounds' own ratios are shown beside it. The targets judge "
            f"{keys.get(run.get('judged'), '-')}; the other certificate's ratios are information. RSS per idle "
            "TLS connection: each connection a TLS handshake (Python's ssl) and one keep-alive request, then "
            f"idle, with the {keys.get(run.get('judged'), '-')} certificate.")


# --h2 (docs/benchmarks.md): each persona's server CPU per request over a
# peer's under h2load -c100 with -m streams at once, at most these, in
# clear (h2c) and over TLS (h2); the other ratios are shown, not judged.
H2_JOBS = (("h2load", "m1", "h2load -c100 -m1"), ("h2load", "m10", "h2load -c100 -m10"),
           ("h2load", "m100", "h2load -c100 -m100"))
H2_TARGETS = (("m100", "h2o", 0.60), ("m100", "nginx", 0.50), ("m1", "h2o", 0.90))
H2_VARIANTS = (("h2c", "h2c (prior knowledge, in clear)"), ("h2", "h2 (ALPN, TLS)"))
H2_PEERS = (("h2o", "h2o 2.2.5"), ("nginx", "nginx"), ("nghttpd", "nghttpd 1.52"), ("go", "Go 1.19 net/http"),
            ("tomcat", "Tomcat 10.1"))
# RSS per idle HTTP/2 connection, a persona's over nginx's, at most this:
# in clear half of nginx's, over TLS nginx's (issue 35).
H2_IDLE_TARGETS = {"h2c": 0.5, "h2": 1.0}


def h2_target_row(cells, persona, mode, peer, limit, variant):
    """One judged row of H2_TARGETS: measure, target, result and verdict of
    hello-`persona`'s CPU per request over `peer`'s, `variant` ("h2c", "h2")."""
    jobs, peers, variants = {m: j for _, m, j in H2_JOBS}, dict(H2_PEERS), dict(H2_VARIANTS)
    result, met = ratio_result(persona, peer, *_variant_ratio(cells, persona, peer, "h2load", mode, variant), limit)
    return _row(f"CPU/request, {variants[variant]}, {jobs[mode]}, hello-{persona} vs {peers[peer]}",
                f"≤ {limit:.2f}", result, met)


def h2_table(meta, cells):
    """--h2: each persona's CPU per request over h2o's and nginx's against
    H2_TARGETS, h2c and h2, with the rounds' own ratios; RSS per idle
    HTTP/2 connection against nginx's; every ratio to every peer; then the
    cells themselves."""
    run = meta.get("h2")
    if not run:
        return ""
    personas = run.get("personas", [])
    rows = [_row("measure", "target", "result", "met?"), _row(*["---"] * 4)]
    for persona in personas:
        for variant, _ in H2_VARIANTS:
            rows += [h2_target_row(cells, persona, mode, peer, limit, variant) for mode, peer, limit in H2_TARGETS]
    idle = {(r.get("name"), r.get("kind"), r.get("variant")): r for r in run.get("idle_rss", [])}
    for persona in personas:
        for variant, protocol in H2_VARIANTS:
            ours = idle.get((persona, "persona", variant), {})
            for peer, label in H2_PEERS:
                theirs = idle.get((peer, "peer", variant))
                if theirs is None and peer != "nginx":
                    continue  # not measured for this peer (Tomcat) or protocol (Go in clear)
                limit = H2_IDLE_TARGETS[variant] if peer == "nginx" else None
                result, met = idle_result(persona, ours, peer, theirs or {}, limit)
                rows.append(_row(f"RSS per idle HTTP/2 connection, {protocol}, hello-{persona} vs {label}",
                                 f"≤ {limit:.2f}" if limit else "none (informational)", result, met))
    peers = [(name, label) for name, label in H2_PEERS if any(c["name"] == name and c["kind"] == "peer"
                                                               for c in cells)]
    ratio_rows = [_row("protocol", "job", *(f"hello-{p} µs" for p in personas),
                       *(f"{label} µs (hello-{personas[0]} / it)" if personas else label for _, label in peers)),
                  _row(*["---"] * (2 + len(personas) + len(peers)))]
    for variant, protocol in H2_VARIANTS:
        for tool, mode, job in H2_JOBS:
            mine = [_variant_cell(cells, p, "persona", tool, mode, variant) for p in personas]
            shown = [_fmt(c.get("cpu_us_per_request"), 2) if c else "-" for c in mine]
            for name, _ in peers:
                theirs = _variant_cell(cells, name, "peer", tool, mode, variant)
                a = mine[0].get("cpu_us_per_request") if mine and mine[0] else None
                b = theirs.get("cpu_us_per_request") if theirs else None
                shown.append(f"{b:.2f} ({a / b:.3f})" if a and b else _fmt(b, 2) if b else
                             "not run" if theirs is None else "-")
            ratio_rows.append(_row(protocol, job, *shown))
    cell_rows = ["| server | protocol | job | req/s (median) | CPU µs/req (median) | runs | problems |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
    jobs, variants = {(t, m): j for t, m, j in H2_JOBS}, dict(H2_VARIANTS)
    for c in cells:
        if c.get("variant") in variants and (c["tool"], c["mode"]) in jobs:
            cell_rows.append(f"| {c['target']} | {c['variant']} | {jobs[(c['tool'], c['mode'])]} | "
                             f"{_rps_text(c)} | {_fmt(c.get('cpu_us_per_request'), 2)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n\n".join((with_legend(rows), "\n".join(ratio_rows), "\n".join(cell_rows)))


def h2_text(meta):
    """What the HTTP/2 section measured, before its table."""
    run = meta["h2"]
    personas = ", ".join(f"hello-{p}" for p in run.get("personas", []))
    text = (f"{personas} (started with `--h2`, and over TLS `--h2 --tls --tls-cert CERT --tls-key KEY`), h2o "
            "2.2.5, nginx 1.22 (`listen ... http2`), nghttpd 1.52 (`nghttp2-server`), Go 1.19 net/http (over TLS "
            "only: its h2c needs golang.org/x/net) and Tomcat 10.1 (`Http2Protocol` on its connector), 1 worker "
            "each (Tomcat 10 request threads, Spring Boot's at start: with one, its HTTP/2 stalls), every one "
            "started once in clear (h2c by prior knowledge) and once over TLS (h2 by ALPN, "
            f"{run.get('key', '-')}, self-signed, made for this run), all at once. h2load -c100 with -m1, -m10 "
            "and -m100 streams at once on each connection, for the run's duration each. Rounds alternate (each "
            "job on every target in turn, every second round in reverse order), "
            f"{run.get('rounds', '-')} rounds; each ratio divides two medians of server CPU per request of this "
            "run (user + system time from `/proc` over the requests completed), and the rounds' own ratios are "
            f"shown beside it. RSS per idle HTTP/2 connection: {run.get('idle_connections', '-'):,} connections "
            "(python3-h2, loopback), each one request, then idle; the personas with `--keepalive-timeout 75` "
            "(nginx's keepalive_timeout) so that none closes before its RSS is read; a measure where any closed "
            "is a problem, not a figure. Tomcat's (a JVM heap) is not measured.")
    if run.get("quick"):
        text = (f"**`--quick`: every target and job {run.get('rounds', '-')} times for {meta.get('load', '-')}: a "
                "check that everything starts and is measured, not a measurement.** " + text)
    return text
