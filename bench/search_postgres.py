"""Benchmark: search on PostgreSQL beside SQLite FTS5, on the same synthetic history.

    .venv/bin/python bench/search_postgres.py [--sizes 100000 1000000] [--queries 50]

The history is made by bench/search.py (same vocabulary, seed and distribution) in SQLite, then
copied row for row into a fresh PostgreSQL database migrated by the real migrations (the trigger
computes every tsvector; the GIN indexes are built after the copy, as a restore would). Uses
DATABASE_URL (a server where it may CREATE DATABASE), or starts a throwaway cluster from Debian's
packages with scripts/services.sh and stops it afterwards.

After the load each side makes the top lists of its common words (knowledge/search/top.py), as
`rebuild_search_index` does, so both are measured in their steady state.

Each side runs in its own process (a Django process has one default database); the parent sends
the same query to each in turn, rotating the order, and each reports the time of its own call:
search_messages on FTS5, search_messages on PostgreSQL, and an ILIKE '%term%' scan on PostgreSQL
returning the same page and capped count.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.search import CHINESE, load, migrate, queries, stats, vocabulary  # noqa: E402

TABLES = ("knowledge_chatsession", "knowledge_message")


def _services(tmp: Path) -> tuple[str, str]:
    """A throwaway PostgreSQL (scripts/services.sh); returns (DATABASE_URL, pg bin dir)."""
    out = subprocess.run(
        ["bash", "-c", f'source scripts/services.sh; ensure_packages; PG_EXTRA_OPTS="-c fsync=off $(pg_memory_opts)" '
         f'start_postgres "{tmp}" "$(free_port)" >/dev/null; echo "$DATABASE_URL $HERMES_PG_BIN"'],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    url, pg_bin = out.stdout.split()
    return url, pg_bin


def copy_to_postgres(sqlite_db: Path, url: str, tables: tuple[str, ...] = TABLES) -> float:
    """The rows of `tables` copied as a restore would (triggers off), then the search entries
    computed and the indexes built once by the search schema's SQL, as `rebuild_search_index` does."""
    import psycopg

    t = time.time()
    src = sqlite3.connect(sqlite_db)
    from knowledge.search import schema

    with psycopg.connect(url) as pg:
        pg.execute("DROP INDEX IF EXISTS knowledge_message_search_vector")
        pg.execute("DROP INDEX IF EXISTS knowledge_message_search_trgm")
        pg.execute("SET session_replication_role = replica")  # no per-row triggers during the copy
        for table in tables:
            cols = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
            with pg.cursor().copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
                for row in src.execute(f"SELECT {', '.join(cols)} FROM {table}"):
                    copy.write_row(row)
        pg.execute("SET session_replication_role = DEFAULT")
        pg.execute(
            "SELECT setval(pg_get_serial_sequence('knowledge_message', 'id'), (SELECT max(id) FROM knowledge_message))"
        )
        pg.commit()
        for sql in schema.PG_SCHEMA + schema.PG_REBUILD + schema.PG_INDEXES:
            pg.execute(sql)
        pg.commit()
    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("VACUUM ANALYZE knowledge_message")
        pg.execute("VACUUM ANALYZE knowledge_message_search")
    src.close()
    return time.time() - t


class Side:
    """One benchmark process: answers "NAME QUERY" lines with the milliseconds of that call."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def time(self, name: str, query: str) -> float:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([name, query]) + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def worker() -> None:
    import django

    django.setup()
    from django.db import connection, transaction

    from bench.search import like_scan
    from knowledge.search import backend, search_messages
    from knowledge.search import top as search_top

    def ilike(q: str) -> object:
        return like_scan(q.replace("%", ""), operator="ILIKE")

    def lists(_: str) -> object:
        with transaction.atomic(), connection.cursor() as cur:
            return search_top.rebuild_lists(cur, backend().top)

    fns = {"search": lambda q: search_messages(q, limit=20), "ilike": ilike, "lists": lists}
    for line in sys.stdin:
        name, q = json.loads(line)
        t = time.perf_counter()
        fns[name](q)
        print((time.perf_counter() - t) * 1000, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    words = vocabulary()
    qs = queries(words, args.queries)
    with postgres("hermes-bench-pg-") as (tmp, admin_url, base_env):
        # The SQLite load (bench/search_data.py) runs the index's own SQL, from modules that need
        # Django's settings (a throwaway SQLite home; no database is opened here).
        os.environ.update(HERMES_HOME=str(tmp), DJANGO_SETTINGS_MODULE="hermes_site.settings")
        import django

        django.setup()
        for size in args.sizes:
            _run_size(size, words, qs, tmp, admin_url, base_env)


@contextmanager
def postgres(prefix: str) -> Iterator[tuple[Path, str, dict[str, str]]]:
    """(a temporary folder, a server URL where databases may be created, the environment for this
    benchmark's processes): DATABASE_URL's server, or a throwaway cluster started in that folder
    and stopped afterwards. DATABASE_URL is taken out of this process's environment: the SQLite
    side must not inherit it."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    tmp.chmod(0o755)  # the postgres user runs the cluster inside it
    admin_url, started = os.environ.pop("DATABASE_URL", ""), False
    try:
        if not admin_url:
            admin_url, _ = _services(tmp)
            started = True
        base_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "HERMES_DB")}
        base_env.update(HERMES_HOME=str(tmp), DJANGO_SETTINGS_MODULE="hermes_site.settings")
        yield tmp, admin_url, base_env
    finally:
        if started:
            subprocess.run(["bash", "-c", f'source scripts/services.sh; HERMES_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1) stop_services "{tmp}"'], cwd=ROOT)  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)


def _run_size(size: int, words: list[str], qs: list[str], tmp: Path, admin_url: str, base_env: dict[str, str]) -> None:
    import psycopg

    db = tmp / f"bench-{size}.sqlite3"
    migrate(tmp, db)
    t = time.time()
    load(db, size, words)
    sqlite_build = time.time() - t
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    pg_url = admin_url.rsplit("/", 1)[0] + "/" + name
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=ROOT,
        env={**base_env, "DATABASE_URL": pg_url},
        check=True,
    )
    pg_build = copy_to_postgres(db, pg_url)
    fts, pg = Side({**base_env, "HERMES_DB": str(db)}), Side({**base_env, "DATABASE_URL": pg_url})
    sides = {"fts5": (fts, "search"), "postgres": (pg, "search"), "ilike": (pg, "ilike")}
    try:
        lists = {"fts5": fts.time("lists", "") / 1000, "postgres": pg.time("lists", "") / 1000}
        for q in qs[:5]:  # warm caches, as a running server's would be
            for side, fn in sides.values():
                side.time(fn, q)
        ms: dict[str, list[float]] = {k: [] for k in sides}
        names = list(sides)
        for i, q in enumerate(qs):
            for key in names[i % 3 :] + names[: i % 3]:
                side, fn = sides[key]
                ms[key].append(side.time(fn, q))
        cjk = {k: [sides[k][0].time("search", c) for c in CHINESE * 2] for k in ("fts5", "postgres")}
    finally:
        fts.close()
        pg.close()
    (fm, fp), (pm, pp), (im, ip) = stats(ms["fts5"]), stats(ms["postgres"]), stats(ms["ilike"])
    print(f"\n{size:,} messages: SQLite built in {sqlite_build:.0f}s, PostgreSQL copied + indexed in {pg_build:.0f}s")
    print(f"  top lists made in {lists['fts5']:.0f}s (FTS5) and {lists['postgres']:.0f}s (PostgreSQL)")
    print(f"  FTS5 search_messages        median {fm:7.2f} ms   p95 {fp:7.2f} ms")
    print(f"  PostgreSQL search_messages  median {pm:7.2f} ms   p95 {pp:7.2f} ms")
    print(f"  PostgreSQL ILIKE scan       median {im:7.2f} ms   p95 {ip:7.2f} ms")
    print(
        f"  Chinese: FTS5 median {stats(cjk['fts5'])[0]:.2f} ms, PostgreSQL median {stats(cjk['postgres'])[0]:.2f} ms"
    )
    print(f"  PostgreSQL / FTS5 (median)  {pm / fm:7.2f}x   (goal: within 2x)")
    print(f"  ILIKE / PostgreSQL (median) {im / pm:7.1f}x   (goal: at least 10x)")
    db.unlink()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}"')


if __name__ == "__main__":
    main()
