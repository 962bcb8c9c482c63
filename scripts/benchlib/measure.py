"""How scripts/bench measures: one run of a job against a started target,
the cells (the median of their clean runs), the plan of every run kind
(started at once, run interleaved) and the progress counter."""
import os
import statistics
import sys

from . import admin, parsers, plan, progress, targets, tools


def summarize(cell, runs):
    """The median of the clean runs; problems are said, never averaged in."""
    clean = [r for r in runs if not r.get("error") and not r.get("failed") and not r.get("non2xx")]
    cell["runs"], cell["clean_runs"] = len(runs), len(clean)
    problems = sorted({r["error"] for r in runs if r.get("error")})
    failed = sum(r.get("failed") or 0 for r in runs)
    non2xx = sum(r.get("non2xx") or 0 for r in runs)
    if failed:
        problems.append(f"{failed} failed requests")
    if non2xx:
        problems.append(f"{non2xx} non-2xx responses")
    cell["error"] = "; ".join(problems) or None
    cell["failed"], cell["non2xx"] = failed, non2xx

    def median(key):
        values = [r[key] for r in clean if r.get(key) is not None]
        return statistics.median(values) if values else None

    cell["rps"] = median("rps")
    cell["p50_ms"], cell["p90_ms"], cell["p99_ms"] = median("p50"), median("p90"), median("p99")
    cell["cpu_us_per_request"] = median("cpu_us_per_request")
    cell["requests"] = median("requests")
    cell["bytes"] = median("bytes")
    # Each run's figure in run order, None for a run not clean: what pairs
    # runs of two targets made in the same round (the report's paired ratios).
    kept = {id(r) for r in clean}
    cell["cpu_us_runs"] = [r.get("cpu_us_per_request") if id(r) in kept else None for r in runs]
    cell["rps_runs"] = [r.get("rps") if id(r) in kept else None for r in runs]  # the charts' whiskers
    cell["peak_rss_kib"] = max((r["peak_rss_kib"] for r in runs if r.get("peak_rss_kib")), default=None)
    # The server's own service time (--admin /stats), for our personas only.
    # A silent admin port is a note, not a problem of the run: it still counts.
    for key in admin.SERVICE_TIME_KEYS:
        cell[f"server_{key}_ms"] = median(f"server_{key}")
    cell["server_count"] = median("server_count")
    # Who was the limit: the medians of the clean runs' figures.
    for key in ("tool_busy", "tool_cpus_busy", "server_busy"):
        cell[key] = median(key)
    for key in ("tool_threads", "tool_connections"):  # the same in every run of a cell
        cell[key] = next((r[key] for r in runs if r.get(key)), None)
    cell["limit"] = plan.limit(cell["tool_busy"], cell["server_busy"], cell["tool_cpus_busy"],
                               shared=any(r.get("shared_cpus") for r in runs))
    cell["tool_bound_runs"] = sum(1 for r in clean if r.get("limit") == "tool")
    # How evenly SO_REUSEPORT spread the work: each worker's share of the
    # requests of the clean runs together (our personas, from /stats).
    per_worker = [r["worker_requests"] for r in clean if r.get("worker_requests")]
    if per_worker and len({len(w) for w in per_worker}) == 1:
        sums = [sum(w) for w in zip(*per_worker)]
        cell["worker_shares"] = [x / sum(sums) for x in sums] if sum(sums) else None
    else:
        cell["worker_shares"] = None
    cell["server_problems"] = "; ".join(sorted({p for r in runs for p in r.get("problems") or ()})) or None
    return cell


def unsupported(target, tool, mode, conns, args):
    """Why this target cannot run this job, or None."""
    if target.name == targets.CALIBRATION and target.kind == "persona" and mode == "close":
        # It answers every CRLF CRLF and never closes: ab would wait for an end that never comes.
        return "hello-floor never closes a connection"
    if mode == "echo" and target.kind != "persona":
        return "only the personas have a JSON echo route"
    if tools.missing(tool) is None:
        try:
            tools.command(tool, mode, "http://x/", conns, args.duration, args.requests)
        except tools.Unsupported as e:
            return str(e)
    return None


def run_once(target, tool, mode, conns, i, args, split, cell):
    """One run of one job against one started target, on the CPUs of
    `split` (a benchlib.plan.Split)."""
    run = dict(cell, repeat=i)
    problem = tools.missing(tool)
    if problem:
        run["error"] = problem
        print(f"  {tag(args)}{target.label} {tool}: {problem}", file=sys.stderr)
        return run
    load = plan.tool_load(tool, len(split.tool), conns, args.requests if tool == "h2load" else None)
    run["tool_threads"], run["tool_connections"] = load.threads, load.connections
    url = args.url or f"{target.scheme}://127.0.0.1:{target.port}{target.path}"
    admin_port = None if args.url else getattr(target, "admin_port", None)
    if admin_port:
        try:
            admin.reset(admin_port)
        except admin.AdminError as e:
            run.setdefault("problems", []).append(str(e))
            admin_port = None
    cpu_before = target.cpu_seconds() if target.proc else None
    jiffies_before = plan.read_cpu_jiffies(split.tool)
    try:
        run.update(tools.run(tool, mode, url, load.connections, plan.cpu_text(split.tool), args.duration,
                             args.requests, load.threads))
    except parsers.ParseError as e:
        run["error"] = str(e)
    run["tool_cpus_busy"] = plan.cpus_busy(jiffies_before, plan.read_cpu_jiffies(split.tool))
    wall = run.get("tool_wall_seconds")
    run["tool_busy"] = plan.busy(run.get("tool_cpu_seconds"), wall, load.parallel)
    if target.proc:
        if target.proc.poll() is not None:
            run["error"] = f"{target.label} exited during the run: {target.stderr_tail()}"
        else:
            cpu = target.cpu_seconds() - cpu_before
            run["cpu_seconds"] = cpu
            if run.get("requests"):
                run["cpu_us_per_request"] = cpu * 1e6 / run["requests"]
            run["peak_rss_kib"] = target.peak_rss_kib()
            run["server_busy"] = plan.busy(cpu, wall, min(target.workers, len(split.server)))
    run["shared_cpus"] = bool(split.shared)
    run["limit"] = plan.limit(run.get("tool_busy"), run.get("server_busy"), run.get("tool_cpus_busy"),
                              shared=run["shared_cpus"])
    if admin_port and target.proc and target.proc.poll() is None:
        # After the CPU reading: the scrape is not the run's work.
        try:
            data = admin.stats(admin_port)
            run.update(admin.service_time(data))
            run["worker_requests"] = admin.worker_requests(data)
        except admin.AdminError as e:
            run.setdefault("problems", []).append(str(e))
    unit = "msg/s" if tool == "ws_load" else "req/s"
    shown = f"{run['rps']:,.0f} {unit}" if run.get("rps") else run.get("error")
    if run.get("rps") and run.get("error"):
        shown += f" ({run['error']}: not counted)"
    if run.get("failed") or run.get("non2xx"):
        shown += f" ({run.get('failed') or 0} failed, {run.get('non2xx') or 0} non-2xx: not counted)"
    if run.get("server_p99") is not None:
        shown = f"{shown}; server p50 {run['server_p50']:.3g} ms, p99 {run['server_p99']:.3g} ms"
    elif run.get("problems"):
        shown = f"{shown}; {'; '.join(run['problems'])}"
    if run.get("tool_busy") is not None:
        shown += f"; tool {run['tool_busy']:.0%}"
        if (run.get("tool_cpus_busy") or 0) - run["tool_busy"] >= 0.2:
            shown += f" (its CPUs {run['tool_cpus_busy']:.0%})"
        if run.get("server_busy") is not None:
            shown += f", server {run['server_busy']:.0%} busy"
        if run["limit"] == "tool":
            shown += " (tool-bound)"
    threads = f" -t{load.threads}" if tool in ("wrk", "h2load") else ""
    variant = f" {cell['variant']}" if cell.get("variant") else ""
    print(f"  {tag(args)}{target.label} w{target.workers} {tool}{threads} {mode} c{load.connections}{variant} "
          f"#{i + 1}: {shown}", file=sys.stderr)
    return run


def tag(args):
    """The place of a finished run and the time left, if counted."""
    counter = getattr(args, "progress", None)
    return counter.step() + " " if counter else ""


def repeats(tool, args):
    """The runs of one cell: one only for a tool that is not installed (its error)."""
    return args.repeat if tools.missing(tool) is None else 1


def planned_runs(target, jobs, args):
    """The runs measure() or measure_interleaved() will make of `jobs` on `target`."""
    return sum(repeats(tool, args) for tool, mode, conns in jobs
               if unsupported(target, tool, mode, conns, args) is None)


def start_progress(args, runs):
    """Counts the runs from here on: each run's line gets its place and the time left."""
    guess = (args.duration or 5) + 1.0
    args.progress = progress.Progress(runs, guess)


def new_cell(target, tool, mode, conns, variant):
    return {"target": target.label, "name": target.name, "kind": target.kind, "workers": target.workers,
            "tool": tool, "mode": mode, "connections": conns, "variant": variant}


def measure(target, args, split, all_runs, cells, variant=None, jobs=None):
    """Every tool, mode and connection count (or `jobs`) against one started target."""
    for tool, mode, conns in jobs or args.jobs:
        why = unsupported(target, tool, mode, conns, args)
        if why:
            print(f"  skip {target.label} {tool} {mode}: {why}", file=sys.stderr)
            continue
        cell = new_cell(target, tool, mode, conns, variant)
        runs = [run_once(target, tool, mode, conns, i, args, split, cell) for i in range(repeats(tool, args))]
        all_runs.extend(runs)
        cells.append(summarize(cell, runs))


def measure_interleaved(started, args, split, all_runs, cells, alternate=False):
    """Every (target, jobs, variant) of `started`, all targets started at once
    and run in turn: repeat 1 of every job on every target, then repeat 2,
    and so on. Drift of a shared machine over the minutes of a run then
    falls on every target alike, which keeps the ratios between them honest.
    With `alternate`, a job's runs on every target follow each other, and
    every second repeat goes through them in reverse order (A B, B A, ...),
    so that neither of two compared targets always runs first."""
    slots = []
    for target, jobs, variant in started:
        for tool, mode, conns in jobs:
            why = unsupported(target, tool, mode, conns, args)
            if why:
                print(f"  skip {target.label} {tool} {mode}: {why}", file=sys.stderr)
                continue
            slots.append((target, tool, mode, conns, new_cell(target, tool, mode, conns, variant), []))
    if alternate:
        jobs = list(dict.fromkeys((tool, mode, conns) for _, tool, mode, conns, _, _ in slots))
        slots.sort(key=lambda s: jobs.index(s[1:4]))  # stable: the plan's order within a job
    for i in range(args.repeat):
        for target, tool, mode, conns, cell, runs in (slots[::-1] if alternate and i % 2 else slots):
            if i >= repeats(tool, args):
                continue
            runs.append(run_once(target, tool, mode, conns, i, args, split, cell))
            log = getattr(target, "log_path", None)
            if log and os.path.exists(log):
                os.truncate(log, 0)  # opened with O_APPEND: the disk holds one run's lines at most
    for target, tool, mode, conns, cell, runs in slots:
        all_runs.extend(runs)
        cells.append(summarize(cell, runs))


def run_plan(items, args, split, runs, cells, alternate=False, workers=1, before=None):
    """Starts every (target, jobs, variant) of `items` with `workers`
    workers, calls `before` with the list of those started (if given; it
    may take one out of that list, once it has stopped it and given its
    cells, and it is not run), runs them interleaved (measure_interleaved) and stops them; a target
    that does not start gets its cells with the error."""
    started = []
    try:
        for target, jobs, variant in items:
            target.workers = workers
            try:
                target.start()
                started.append((target, jobs, variant))
            except targets.StartError as e:
                print(f"  {e}", file=sys.stderr)
                if getattr(args, "progress", None):
                    args.progress.skip(planned_runs(target, jobs, args))
                for tool, mode, conns in jobs:
                    cells.append(summarize(new_cell(target, tool, mode, conns, variant), [{"error": str(e)}]))
        if before:
            before(started)
        measure_interleaved(started, args, split, runs, cells, alternate=alternate)
    finally:
        for target, _, _ in started:
            target.stop()


def start_plan(items, args):
    """Counts the runs of every (target, jobs, variant) of `items`."""
    start_progress(args, sum(planned_runs(t, jobs, args) for t, jobs, _ in items))
