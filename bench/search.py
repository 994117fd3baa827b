"""5. Full-text search (knowledge.search) on synthetic history (bench/search_data.py), at each size:

- search_messages (bm25, snippets, capped count) and search_sessions, against a LIKE '%term%'
  scan doing the same work (same page of 20 hits with snippets, same capped count, newest first
  so it can stop early on common words: the comparison favours the scan); all interleaved;
- ranking kept: the top 20 against an exact `ORDER BY bm25()` over the whole index (overlap,
  mean and lowest, over every query) — common words are ranked through their top lists
  (knowledge/search/top.py), made after the bulk load as `rebuild_search_index` makes them;
- the search page through a real daphne, and the Django admin's message search, against the
  in-process search_messages for the same query, interleaved; beside them the same page through
  Django's test client in this process, which splits the page's added time into Django's part
  (middleware, the view, rendering) and daphne's (HTTP, the ASGI handler's thread hops);
- daphne's resident memory after serving those on the largest database (figure 8).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Figure, Samples, figure_from, median, p95, rss_mb, temp_home
from bench.search_data import CHINESE, like_scan, load, migrate, queries, vocabulary
from tests.daphne import Http, start_daphne

SCALES: dict[str, dict[str, Any]] = {
    "full": {"sizes": [200_000, 1_000_000], "queries": 40, "like": 10, "pages": 40},
    "tiny": {"sizes": [2_000], "queries": 3, "like": 2, "pages": 2},
}


def stats(ms: list[float]) -> tuple[float, float]:
    """Median and p95 (bench/search_postgres.py reads them from here)."""
    return median(ms), p95(ms)


def timed(fns: dict[str, Callable[[str], object]], items: list[str], caps: dict[str, int]) -> dict[str, list[float]]:
    """Latencies in ms, the functions interleaved query by query; the order rotates, so no
    function always runs right after a LIKE scan (which sweeps the table through the cache)."""
    for q in items[:3]:  # warm the page cache, as a running server's would be
        for fn in fns.values():
            fn(q)
    out: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for i, q in enumerate(items):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            if len(out[name]) >= caps.get(name, len(items)):
                continue
            t = time.perf_counter()
            fns[name](q)
            out[name].append((time.perf_counter() - t) * 1000)
    return out


def exact_top(q: str) -> list[int]:
    """The exact bm25 top 20 of the whole word index: every hit scored (the ranking alone, no
    message rows or snippets) — what search_messages did for every query before top lists."""
    from django.db import connection

    from knowledge.search.plan import FTS_TABLE
    from knowledge.search.sanitize import parse_terms, quote_term

    words = " ".join(quote_term(t.text) for t in parse_terms(q))
    with connection.cursor() as cur:
        cur.execute(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s ORDER BY bm25({FTS_TABLE}) LIMIT 20", [words])  # fmt: skip
        return [r[0] for r in cur.fetchall()]


def overlap(qs: list[str]) -> tuple[float, float]:
    """Mean and lowest share of search_messages' top 20 also in the exact bm25 top 20."""
    import knowledge.search as search

    shares = []
    for q in qs:
        exact = set(exact_top(q))
        got = {h.message_id for h in search.search_messages(q, limit=20).results}
        if exact:
            shares.append(len(exact & got) / len(exact))
    return (sum(shares) / len(shares), min(shares)) if shares else (1.0, 1.0)


def in_process(size: int, qs: list[str], cfg: dict[str, Any]) -> list[Figure]:
    import knowledge.search as search

    ms = timed(
        {"fts": lambda q: search.search_messages(q, limit=20), "sessions": lambda q: search.search_sessions(q, limit=3),
         "like": like_scan, "exact": exact_top},
        qs, {"like": cfg["like"]},
    )  # fmt: skip
    cjk = timed({"cjk": lambda q: search.search_messages(q, limit=20)}, CHINESE * 2, {})["cjk"]
    like = ms["like"]
    label = f"{size:,} messages"
    fts = figure_from(
        "5", f"search_messages @{label}", "ms", Samples(ms["fts"], like), reference="LIKE scan, same page"
    )
    mean, lowest = overlap(qs)
    fts.result = (
        f"{median(like) / median(ms['fts']):.1f}x faster than the scan; "
        f"top-20 overlap with exact bm25 {mean:.2f} (lowest query {lowest:.2f})"
    )
    if size >= 1_000_000:
        fts.goal, fts.met = "p95 < 20 ms, overlap >= 0.9", (fts.p95 or 0) < 20 and mean >= 0.9
    ranking = figure_from(
        "5", f"search_messages vs exact bm25 ranking alone @{label}", "ms", Samples(ms["fts"], ms["exact"]),
        reference="exact bm25 top 20, every hit scored (no rows, no snippets)",
        result=f"p95 {p95(ms['fts']):.1f} vs {p95(ms['exact']):.1f} ms; common words ranked through top lists",
    )  # fmt: skip
    ses = figure_from("5", f"search_sessions @{label}", "ms", Samples(ms["sessions"], like), reference="LIKE scan, same page")  # fmt: skip
    zh = figure_from("5", f"trigram (Chinese) search @{label}", "ms", Samples(cjk, []))
    slow = sorted(zip(ms["fts"], qs, strict=False), reverse=True)[:3]
    fts.profile = "; ".join(f"'{q}' {t:.0f} ms over {hits(q):,} hits" for t, q in slow)
    return [fts, ranking, ses, zh]


def hits(q: str) -> int:
    """Every message the word index matches for `q` (a one-word query with more than COUNT_CAP
    scores only its top list and newer hits; any other query, each of them)."""
    from django.db import connection

    from knowledge.search import matching_ids_sql

    found = matching_ids_sql(q)
    if found is None:
        return 0
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM ({found[0]})", found[1])
        return int(cur.fetchone()[0])


def in_process_page() -> Callable[[str], None]:
    """The search page through Django's test client in this process: no HTTP, no ASGI."""
    from django.test import Client

    from hermes_site.access import login_token

    client = Client(HTTP_HOST="127.0.0.1")
    assert client.get("/login", {"token": login_token()}).status_code == 302

    def page(q: str) -> None:
        assert client.get("/search/", {"q": q}).status_code == 200

    return page


def through_daphne(home: Path, size: int, qs: list[str], cfg: dict[str, Any]) -> list[Figure]:
    import knowledge.search as search

    with start_daphne(home) as server:
        http = Http(server.port)
        http.login(server.token)

        def page(q: str) -> None:
            resp = http.get(f"/search/?q={q.replace(' ', '+')}")
            assert resp.status == 200, resp.status

        def admin(q: str) -> None:
            resp = http.get(f"/admin/knowledge/message/?q={q.replace(' ', '+')}")
            assert resp.status == 200, resp.status

        ms = timed({"page": page, "admin": admin, "django": in_process_page(),
                    "inproc": lambda q: search.search_messages(q, limit=20)},
                   qs[: cfg["pages"]], {"admin": max(2, cfg["pages"] // 3)})  # fmt: skip
        rss, anon = rss_mb(server.process.pid), rss_mb(server.process.pid, "RssAnon")
    label = f"{size:,} messages"
    inproc = ms["inproc"]
    out = []
    for key, name, goal in (("page", "search page through daphne", 20.0), ("admin", "admin message search", None)):
        f = figure_from("5", f"{name} @{label}", "ms", Samples(ms[key], inproc), reference="in-process search_messages")
        added = median(ms[key]) - median(inproc)
        f.result = f"+{added:.1f} ms median, +{p95(ms[key]) - p95(inproc):.1f} ms p95"
        if goal is not None:
            f.goal, f.met = f"< {goal:.0f} ms added", added < goal
        out.append(f)
    django, daphne = median(ms["django"]) - median(inproc), median(ms["page"]) - median(ms["django"])
    out[0].notes = (
        f"of the time added, +{django:.1f} ms is Django's (the same page through its test client in-process: "
        f"middleware, the view, rendering) and +{daphne:.1f} ms daphne's (HTTP, the ASGI handler)"
    )
    out.append(
        Figure(
            "8", f"daphne private memory (RssAnon) after searches @{label}", "MB", anon,
            result=f"{anon:.0f} MB private; VmRSS {rss:.0f} MB counts the mapped database file per connection",
        )
    )  # fmt: skip
    return out


def run(scale: str) -> list[Figure]:
    cfg = SCALES[scale]
    tmp = temp_home()
    # SQLite's FTS5, the embedded default (PostgreSQL is measured by bench/search_postgres.py).
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(HERMES_HOME=str(tmp), HERMES_DB=str(tmp / "unused.sqlite3"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")
    import django

    django.setup()
    from django.db import connection

    from knowledge.search import backend
    from knowledge.search import top as search_top

    words = vocabulary()
    qs = queries(words, cfg["queries"])
    figures: list[Figure] = []
    for size in cfg["sizes"]:
        home = tmp / f"home-{size}"
        home.mkdir()
        db = home / "dashboard.sqlite3"
        migrate(home, db)
        t = time.time()
        load(db, size, words)
        build = time.time() - t
        connection.close()
        connection.settings_dict["NAME"] = str(db)
        t = time.time()
        with connection.cursor() as cur:  # as rebuild_search_index does after filling the indexes
            lists = search_top.rebuild_lists(cur, backend().top)
        ranked = time.time() - t
        got = in_process(size, qs, cfg)
        got[0].notes = (
            f"loaded + indexed in {build:.0f}s, top lists for {lists} common words in {ranked:.0f}s, "
            f"database {db.stat().st_size / 1e6:.0f} MB; slowest: {got[0].profile}"
        )
        figures.extend(got)
        figures.extend(through_daphne(home, size, qs, cfg))
        connection.close()
        shutil.rmtree(home, ignore_errors=True)  # a 1M-message database is ~600 MB
    shutil.rmtree(tmp, ignore_errors=True)
    return figures
