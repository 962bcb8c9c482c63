"""The --tls and --h2 sections of report.md: each persona's CPU per request
against nginx's and h2o's (and for HTTP/2 nghttpd's, Go's and
Tomcat's), RSS per idle connection, and the cells."""
from .report_cells import _fmt, _rps_text, marked, paired_text, with_legend


# --tls (docs/benchmarks.md): each persona's server CPU per request over a
# peer's, with the judged certificate (ECDSA P-256), at most these (issue
# 36's; pipelining's from before); the other key type's ratio is shown
# beside, not judged.
TLS_JOBS = (("wrk", "keepalive", "keep-alive (wrk -c64)"), ("wrk", "pipeline", "16-deep pipelining (wrk -c64)"),
            ("ab", "close", "a full handshake per request (ab -c20)"),
            ("tls_resume", "resume", "a resumed handshake per request (tls_resume)"))
TLS_TARGETS = (("wrk", "keepalive", "nginx", 0.85), ("wrk", "keepalive", "h2o", 0.85),
               ("wrk", "pipeline", "nginx", 0.15), ("ab", "close", "nginx", 0.85), ("ab", "close", "h2o", 0.90),
               ("tls_resume", "resume", "nginx", 0.80))
TLS_PEERS = {"nginx": "nginx", "h2o": "h2o 2.2.5 (static file)"}
# Every server on one suite (the run's "forced" variant): a persona's full
# handshake over the cheaper of nginx's and h2o's, at most this.
TLS_FORCED_TARGET = 0.95
# RSS per idle TLS connection, a persona's below the smaller of nginx's and h2o's.
TLS_IDLE_TARGET = 1.0


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


def _cpu_of(cell):
    return cell.get("cpu_us_per_request") if cell else None


def _server(record):
    """A probed server's name in the report: hello-NAME, or the peer's label."""
    name = record.get("name", "-")
    return f"hello-{name}" if record.get("kind") == "persona" else TLS_PEERS.get(name, name)


def not_like_for_like(run):
    """Each server of the run's forced variant whose probe did not see the
    forced suite negotiated, in words; [] if all did or none was probed."""
    forced = run.get("forced") or {}
    out = []
    for r in run.get("negotiated") or []:
        if r.get("variant") == forced.get("variant"):
            suite = (r.get("full") or {}).get("suite")
            if suite != forced.get("suite"):
                out.append(f"{_server(r)} negotiated {suite}" if suite else
                           f"{_server(r)}: {r.get('error') or 'no handshake completed'}")
    return out


def forced_ratios(run, cells, persona):
    """hello-`persona`'s full handshake with every server on the forced
    suite: (its cell, {peer: cell}, the cheaper peer or None)."""
    variant = run["forced"]["variant"]
    mine = _variant_cell(cells, persona, "persona", "ab", "close", variant)
    peers = {p: _variant_cell(cells, p, "peer", "ab", "close", variant) for p in TLS_PEERS}
    if not _cpu_of(mine) or not all(_cpu_of(c) for c in peers.values()):
        return mine, peers, None
    return mine, peers, min(peers, key=lambda p: _cpu_of(peers[p]))


def forced_result(run, cells, persona, limit=TLS_FORCED_TARGET):
    """The result and verdict of hello-`persona`'s full handshake over the
    cheaper of nginx's and h2o's, every server on the forced suite; "not
    like for like" where the probe saw a server negotiate another."""
    mine, peers, cheaper = forced_ratios(run, cells, persona)
    if cheaper is None:
        return _problem(mine, *peers.values()), "not measured"
    theirs = peers[cheaper]
    result, met = ratio_result(persona, cheaper, mine, theirs, _cpu_of(mine) / _cpu_of(theirs), limit)
    result += f"; {cheaper} is the cheaper (" + ", ".join(
        f"{p} {_cpu_of(c):.2f} µs" for p, c in peers.items() if p != cheaper) + ")"
    mismatch = not_like_for_like(run)
    if mismatch:
        return f"{result}; not like for like: {', '.join(mismatch)}", "not like for like"
    return result, met


def forced_table(run, cells):
    """The full handshake with every server on the forced suite: each
    persona's CPU per request, nginx's and h2o's with the ratios, the
    cheaper of the two, the target and the verdict."""
    suite = run["forced"].get("suite", "-")
    peers = [TLS_PEERS[p] for p in TLS_PEERS]
    rows = [f"**Full handshake per request (ab -c20), every server on {suite}** "
            f"({run.get('keys', {}).get(run['forced']['variant'], '-')}, each server made to by its own "
            "configuration): server CPU µs per request (medians), hello-NAME's over each peer's", "",
            _row("persona", "hello-NAME µs", *(f"{p} µs (ratio)" for p in peers), "the cheaper (ratio)", "target",
                 "met?"), _row(*["---"] * (5 + len(peers)))]
    for persona in run.get("personas", []):
        mine, theirs, cheaper = forced_ratios(run, cells, persona)
        a = _cpu_of(mine)
        shown = [f"{_cpu_of(c):.2f} ({a / _cpu_of(c):.3f})" if a and _cpu_of(c) else _fmt(_cpu_of(c), 2)
                 for c in theirs.values()]
        best = f"{cheaper} ({a / _cpu_of(theirs[cheaper]):.3f})" if cheaper else "-"
        met = forced_result(run, cells, persona)[1]
        rows.append(_row(f"hello-{persona}", _fmt(a, 2), *shown, best, f"≤ {TLS_FORCED_TARGET:.2f}", met))
    return "\n".join(rows)


def negotiated_table(run):
    """What each server negotiated, as the probe before the rounds saw it."""
    forced = run.get("forced") or {}
    keys = run.get("keys", {})
    rows = ["**What each server negotiated**, asked once before the rounds (build/tests/tls_resume, 5 connections: "
            "the first a full handshake, each other offered the session of the one before; OpenSSL 3.0's client "
            f"offer, for the variant on {forced.get('suite', '-')} that suite offered last, so that it is "
            "negotiated only by a server made to):", "",
            _row("server", "variant", "protocol", "cipher suite", "group", "tickets after a full handshake",
                 "resumed handshakes", "tickets after a resumed one", "problems"), _row(*["---"] * 9)]
    for r in run.get("negotiated") or []:
        full, resumed = r.get("full") or {}, r.get("resumed") or {}
        problems = ([r["error"]] if r.get("error") else []) + [
            f"also {x}" for x in full.get("also", []) + resumed.get("also", [])]
        if r.get("variant") == forced.get("variant") and full and full.get("suite") != forced.get("suite"):
            problems.append(f"not {forced.get('suite')}: not like for like")
        again = tuple(resumed.get(k) for k in ("protocol", "suite", "group"))
        resumed_text = str(resumed["handshakes"]) if resumed else "0"
        if resumed and again != tuple(full.get(k) for k in ("protocol", "suite", "group")):
            resumed_text += f" ({' '.join(again)})"
        rows.append(_row(_server(r), keys.get(r.get("variant"), r.get("variant") or "-"),
                         *(full.get(k) or "-" for k in ("protocol", "suite", "group")),
                         _fmt(full.get("tickets")) if full else "-", resumed_text,
                         _fmt(resumed.get("tickets")) if resumed else "-", "; ".join(problems)))
    return "\n".join(rows)


def idle_smaller_result(persona, ours, peers, limit=TLS_IDLE_TARGET):
    """The result and verdict of RSS per idle connection, hello-`persona`'s
    (`ours`, an extras.idle_rss dict) over the smaller of `peers`' ({name:
    dict}), below `limit`."""
    a = ours.get("bytes_per_connection")
    figures = {p: r.get("bytes_per_connection") for p, r in peers.items()}
    if not a or not all(figures.values()):
        # Each side's figure or what went wrong, so that the ones measured are still read.
        said = [(f"hello-{persona}", a, ours)] + [(p, figures[p], r) for p, r in peers.items()]
        return "; ".join(f"{who} {x:,.0f} bytes ({r['connections']:,} connections)" if x else
                         f"{who}: {r.get('error') or 'not measured'}" for who, x, r in said), "not measured"
    smaller = min(figures, key=figures.get)
    others = ", ".join(f"{p} {b:,.0f} bytes" for p, b in figures.items() if p != smaller)
    result = (f"hello-{persona} {a:,.0f} bytes, {smaller} {figures[smaller]:,.0f} bytes (the smaller; {others}; "
              f"{ours['connections']:,} connections): {a / figures[smaller]:.2f}")
    return result, "yes" if a / figures[smaller] < limit else "**no**"


def tls_table(meta, cells):
    """--tls: each persona's CPU per request over nginx's and h2o's with the
    judged certificate, against TLS_TARGETS, the rounds' own ratios beside
    it and the other key type's ratio beside that, and with every server on
    the forced suite over the cheaper of the two; RSS per idle TLS
    connection against the smaller of theirs; what each server negotiated;
    the forced suite's table; then the cells themselves."""
    run = meta.get("tls")
    if not run:
        return ""
    keys, judged = run.get("keys", {}), run.get("judged")
    forced = (run.get("forced") or {}).get("variant")
    others = [k for k in keys if k not in (judged, forced)]
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
        if forced:
            rows.append(_row(f"CPU/request, {jobs[('ab', 'close')]}, every server on {run['forced'].get('suite')}, "
                             f"hello-{persona} vs the cheaper of nginx and h2o", f"≤ {TLS_FORCED_TARGET:.2f}",
                             *forced_result(run, cells, persona), *["-"] * len(others)))
    idle = {(r.get("name"), r.get("kind")): r for r in run.get("idle_rss", [])}
    for persona in run.get("personas", []):
        ours = idle.get((persona, "persona"), {})
        theirs = {peer: idle.get((peer, "peer"), {}) for peer in TLS_PEERS}
        rows.append(_row(f"RSS per idle TLS connection, hello-{persona} vs the smaller of nginx's and h2o's",
                         f"< {TLS_IDLE_TARGET:.2f}", *idle_smaller_result(persona, ours, theirs),
                         *["-"] * len(others)))
        for peer in TLS_PEERS:
            result, met = idle_result(persona, ours, peer, theirs[peer])
            rows.append(_row(f"RSS per idle TLS connection, hello-{persona} vs {TLS_PEERS[peer]}",
                             "none (informational)", result, met, *["-"] * len(others)))
    parts = [with_legend(rows)]
    if run.get("negotiated"):
        parts.append(negotiated_table(run))
    if forced:
        parts.append(forced_table(run, cells))
    cell_rows = ["| server | certificate | job | req/s (median) | CPU µs/req (median) | runs | problems |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        if c.get("variant") in keys and (c["tool"], c["mode"]) in jobs:
            cell_rows.append(f"| {c['target']} | {keys[c['variant']]} | {jobs[(c['tool'], c['mode'])]} | "
                             f"{_rps_text(c)} | {_fmt(c.get('cpu_us_per_request'), 2)} | "
                             f"{c.get('clean_runs', 0)}/{c.get('runs', 0)} | {c.get('error') or ''} |")
    return "\n\n".join(parts + ["\n".join(cell_rows)])


def tls_text(meta):
    """What the TLS section measured, before its table."""
    run = meta["tls"]
    keys, forced = run.get("keys", {}), run.get("forced") or {}
    certificates = [label for kind, label in keys.items() if kind != forced.get("variant")]
    personas = ", ".join(f"hello-{p}" for p in run.get("personas", []))
    text = (f"{personas} (started with `--tls --tls-cert CERT --tls-key KEY`), nginx and h2o 2.2.5, 1 worker each, "
            f"every one started once per certificate ({' and '.join(certificates)}, self-signed for localhost, "
            "made for this run) and all at once. The clients (wrk, ab, tls_resume with `--tls-max 1.3`, Python's "
            "ssl) negotiate TLS 1.3 and send no ALPN: HTTP/1.1. nginx resumes sessions with its defaults: session "
            "tickets on, no shared session cache; h2o with its own (an internal cache and tickets), its "
            "private-key operations in its threads (`neverbleed: OFF`). Rounds alternate (each job on every target "
            f"in turn, every second round in reverse order), {run.get('rounds', '-')} rounds; each ratio divides "
            "two medians of server CPU per request of this run, and the rounds' own ratios are shown beside it. "
            f"The targets judge {keys.get(run.get('judged'), '-')}; the other certificate's ratios are "
            "information. RSS per idle TLS connection: each connection a TLS handshake (Python's ssl) and one "
            f"keep-alive request, then idle, with the {keys.get(run.get('judged'), '-')} certificate.")
    if forced:
        text += (f" Like for like: every one started a third time ({keys.get(forced.get('variant'), '-')}), each "
                 f"made to negotiate {forced.get('suite', '-')} alone by its own configuration (a persona's "
                 f"`--tls-ciphersuites {forced.get('suite', '-')}`, nginx's `ssl_conf_command Ciphersuites`, h2o "
                 "2.2.5, which has no option for TLS 1.3 suites, an `OPENSSL_CONF` file whose `system_default` "
                 "section sets `Ciphersuites`), under ab -c20 only; the table of what each server negotiated "
                 "says whether it took.")
    return text


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
