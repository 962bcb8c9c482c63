"""report.md's tables beside the articles' published figures."""
from .report_cells import _fmt


# Published figures of the articles (shared/articles), for the rows of
# frameworks that cannot run here (Sanic) and for side-by-side tables.
ARTICLES = {
    "ab-close": [
        {"framework": "Flask", "persona": "flask", "peer": "flask", "rps": 534.07, "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Flask + gunicorn", "persona": "gunicorn", "peer": "gunicorn", "rps": 4319.60,
         "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Sanic (fast=True, access_log=False)", "persona": "sanic", "peer": None, "rps": 6221.97,
         "source": "000: ab -n 20000 -c 1000"},
        # Spring Boot is not packaged for Debian: live, its engine (Tomcat 10.1) with a servlet.
        {"framework": "Spring (here: Tomcat 10.1 servlet, without Spring MVC)", "persona": "spring",
         "peer": "tomcat", "rps": 5477.01, "source": "000: ab -n 20000 -c 1000"},
        {"framework": "Tornado 6.0.2 (2 processes)", "persona": "tornado", "peer": "tornado", "rps": 1215.33,
         "source": "001: ab -c 30 -n 100000"},
        {"framework": "aiohttp", "persona": "aiohttp", "peer": "aiohttp", "rps": 1455,
         "source": "002: locust, 10 users, not ab"},
        {"framework": "Starlette (uvicorn)", "persona": "starlette", "peer": "starlette", "rps": 1539,
         "source": "002: locust, 10 users, not ab"},
    ],
    "locust-keepalive": [
        {"framework": "Flask", "persona": "flask", "peer": "flask", "rps": 463, "source": "002: locust, 10 users"},
        {"framework": "aiohttp", "persona": "aiohttp", "peer": "aiohttp", "rps": 1455, "source": "002: locust, 10 users"},
        {"framework": "Starlette (uvicorn)", "persona": "starlette", "peer": "starlette", "rps": 1539,
         "source": "002: locust, 10 users"},
    ],
}


def article_tables(cells):
    """The articles' rows beside the real framework and the persona here."""
    out = []
    for key, rows in ARTICLES.items():
        tool, mode = key.split("-")
        mine = {(c["kind"], c["name"]): c for c in cells
                if c["tool"] == tool and c["mode"] == mode and c["workers"] == 1 and not c.get("variant")}
        if not any(k[0] == "persona" for k in mine):
            continue
        out.append(f"### {tool}, {mode}\n")
        out.append("| framework | article req/s (their machine) | real framework here | persona here | persona / real |")
        out.append("| --- | --- | --- | --- | --- |")
        for r in rows:
            real = mine.get(("peer", r["peer"])) if r["peer"] else None
            persona = mine.get(("persona", r["persona"]))
            real_rps = real.get("rps") if real else None
            persona_rps = persona.get("rps") if persona else None
            if r["peer"] is None:
                real_text = "cannot run here: the article's figure is the only one"
            elif real is None:
                real_text = "not run"
            else:
                real_text = _fmt(real_rps) if real_rps else f"failed: {real.get('error')}"
            ratio = f"{persona_rps / real_rps:,.1f} x" if persona_rps and real_rps else "-"
            out.append(f"| {r['framework']} | {r['rps']:,.2f} ({r['source']}) | {real_text} | "
                       f"{_fmt(persona_rps) if persona else 'not run'} | {ratio} |")
        out.append("")
    return "\n".join(out)
