"""Benchmark 13 on PostgreSQL: hybrid search (words and meaning) against search by words only.

    BENCH_RECALL_CACHE=/some/folder .venv/bin/python bench/recall_postgres.py [--sizes 1000000] [--queries 200]

The history and its vectors are benchmark 13's (bench/recall.py: the search benchmark's synthetic
history with a clustered vector for every user and assistant message), built in SQLite, or
reused from BENCH_RECALL_CACHE, then copied row for row into a fresh PostgreSQL database migrated
by the real migrations (sessions, messages and vectors; the search entries and indexes built
after the copy, as a restore would). Uses DATABASE_URL (a server where it may CREATE DATABASE),
or starts a throwaway cluster from Debian's packages with scripts/services.sh and stops it after.

A process of its own on that database then measures exactly what bench/recall.py measures on
SQLite (`search_figures_at`): each query searched through the index, by the exact scan and by
words only, in turns; recall@20 of the index; the first search's load of the vectors. Its rows
are printed as bench/RESULTS.md's.

Where the server has pgvector (scripts/services.sh builds it for the throwaway cluster), the
background work's step that makes its index (knowledge/search/nearest_postgres.py) then runs as
the product runs it, timed: the vectors' `embedding` column filled from the stored rows, the index
built (concurrently, with maintenance_work_mem and a parallel worker as an operator would give a
big build, BUILD_OPTIONS below); and a fresh process measures the same figures again, its searches
now going through pgvector's index (the exact scan, the reference of recall@20, stays the
process's own).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Figure  # noqa: E402
from bench.search_postgres import TABLES, copy_to_postgres, postgres  # noqa: E402

VECTORS = "knowledge_messagevector"
PROGRESS = "knowledge_recallprogress"


def worker(size: int, db: str, vectors: int, queries: int) -> None:
    """On the database DATABASE_URL names: the figures, one JSON line."""
    import django
    import numpy as np

    django.setup()
    from django.db import connection, transaction

    from bench import recall
    from bench.search_data import queries as make_queries
    from bench.search_data import vocabulary
    from knowledge.search import meaning
    from knowledge.search import top as search_top
    from knowledge.search.backends import backend

    with transaction.atomic(), connection.cursor() as cur:
        search_top.rebuild_lists(cur, backend().top)
    centroids = np.load(Path(db).with_suffix(".centroids.npy"))
    on = meaning.Embedder("bench", "", recall.query_embedder(centroids))
    qs = make_queries(vocabulary(), queries)
    label = f"{size:,} messages ({vectors:,} vectors) on PostgreSQL"
    figures = recall.search_figures_at(label, qs, on, vectors)
    print(json.dumps([f.to_json() for f in figures]), flush=True)


# What an operator gives a one-off index build of this size (memory for its k-means and a parallel
# worker); the product itself leaves the server's settings alone.
BUILD_OPTIONS = "-c maintenance_work_mem=3GB -c max_parallel_maintenance_workers=1"


def prepare_pgvector() -> None:
    """The background work's pgvector step, timed: one JSON line."""
    import time

    import django

    django.setup()
    from django.db import connection

    from knowledge.search import nearest_postgres

    t = time.perf_counter()
    state = nearest_postgres.enable()
    filled = 0
    while state.usable and (n := nearest_postgres.backfill("bench", 20000)):
        filled += n
    backfill_s = time.perf_counter() - t
    t = time.perf_counter()
    built = state.usable and nearest_postgres.build_index("bench")
    build_s = time.perf_counter() - t
    size = 0
    if built:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_relation_size(%s::regclass)", [nearest_postgres.index_name("bench")])
            size = int(cur.fetchone()[0])
    print(json.dumps({"why_not": state.why_not, "version": state.version, "filled": filled, "backfill_s": backfill_s,
                      "built": built, "build_s": build_s, "index_mb": size / 1e6}), flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--prepare-pgvector", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare_pgvector:
        prepare_pgvector()
        return
    if args.worker:
        size, db, vectors, queries = args.worker
        worker(int(size), db, int(vectors), int(queries))
        return
    with postgres("hermes-bench-recall-pg-") as (tmp, admin_url, base_env):
        # The SQLite history is built (or found in the cache) with Django set up on a throwaway
        # SQLite home, as bench/recall.py does.
        os.environ.update(HERMES_HOME=str(tmp), HERMES_DB=str(tmp / "unused.sqlite3"))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")
        import django

        django.setup()
        from bench import recall
        from bench.search_data import vocabulary

        for size in args.sizes:
            _, db, vectors, _ = recall.history(tmp, size, vocabulary())
            for row in _run_size(size, db, vectors, args.queries, admin_url, base_env):
                print(row, flush=True)


def _run_size(size: int, db: Path, vectors: int, queries: int, admin_url: str, base_env: dict[str, str]) -> list[str]:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    pg_url = admin_url.rsplit("/", 1)[0] + "/" + name
    env = {**base_env, "DATABASE_URL": pg_url}
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        copied = copy_to_postgres(db, pg_url, (*TABLES, VECTORS, PROGRESS))
        print(f"{size:,} messages copied into PostgreSQL and indexed in {copied:.0f} s", flush=True)
        worker = [sys.executable, __file__, "--worker", str(size), str(db), str(vectors), str(queries)]
        out = subprocess.run(worker, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        rows = [_row(Figure(**f)) for f in json.loads(out.stdout.strip().splitlines()[-1])]
        prepared = subprocess.run(
            [sys.executable, __file__, "--prepare-pgvector"], cwd=ROOT, check=True, capture_output=True, text=True,
            env={**env, "PGOPTIONS": BUILD_OPTIONS},
        )  # fmt: skip
        step = json.loads(prepared.stdout.strip().splitlines()[-1])
        if not step["built"]:
            return [*rows, f"pgvector not used: {step['why_not'] or 'its index was not built'}"]
        rows.append(
            f"pgvector {step['version']}: {step['filled']:,} vectors given their column in {step['backfill_s']:.0f} s, "
            f"IVFFlat index built in {step['build_s']:.0f} s ({step['index_mb']:.0f} MB)"
        )
        out = subprocess.run(worker, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        rows += [_row(Figure(**f)) for f in json.loads(out.stdout.strip().splitlines()[-1])]
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    return rows


def _row(f: Figure) -> str:
    def num(v: float | None) -> str:
        return "—" if v is None else f"{v:,.3g}" if abs(v) < 10 else f"{v:,.1f}"

    cells = [f.bench, f.name, num(f.median), num(f.p95), f.reference, num(f.ref_median), num(f.ref_p95), f.result]
    return "| " + " | ".join(cells) + " |" + (f"  ({f.notes})" if f.notes else "")


if __name__ == "__main__":
    main()
