"""Search by meaning through pgvector's index, on PostgreSQL when the `vector` extension is there
(docs/DECISIONS.md, record 29).

The vectors stay where they are on both databases (knowledge/vectors.py: float32 BLOBs, one row
a message). Where pgvector can be used, the same rows also get an `embedding vector` column,
filled as vectors are written (`write`) and, for rows written before, by the background work
(`prepare`, from agent/recall.py), which then builds one IVFFlat index per embedding model: a
partial index on `embedding::halfvec(<dimensions>)` for that model's rows (half precision: half
the index to read and to keep in PostgreSQL's cache), cosine distance, about sqrt(n) lists as the
process's own index (knowledge/search/nearest_index.py) has, or one list (an exact scan) below
EXACT_BELOW rows; it is built again, beside the old one, when the rows have grown RETRAIN_GROWTH
times. A search uses it only
while it is complete — the index valid and no row of the model without its `embedding` — and
otherwise falls back to the process's own copy (knowledge/search/meaning.py), so it never misses a
message. Through the index no process holds the vectors in memory; the filters and the similarity
floor are applied by PostgreSQL, which probes further lists while too few rows pass them
(pgvector's iterative scan, from 0.8).

Why IVFFlat and not HNSW: on benchmark 13's million vectors (bench/recall_postgres.py), HNSW
(pgvector's defaults) found 0.74–0.91 of the exact scan's top 20 at ef_search 100–400 and took
338 s to build; IVFFlat found 0.986 at 16 probes and took 66 s.

Nothing here runs on SQLite: `usable()` answers False there.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import DatabaseError, connection, transaction

from knowledge.search.filters import Filters, vector_conditions
from knowledge.search.schema import MESSAGES
from knowledge.vectors import MessageVector, Vector, unpack

log = logging.getLogger(__name__)

COLUMN = "embedding"
INDEX_PREFIX = "knowledge_vec_ivf_"
MISSING_INDEX = "knowledge_vec_missing"  # the rows still without their `embedding`
# Lists probed first, as the process's own index reads its 16 nearest lists; while filters or the
# similarity floor leave too few rows, up to MAX_PROBES_PER_PROBE times as many.
PROBES = 16
MAX_PROBES_PER_PROBE = 4
RETRAIN_GROWTH = 4  # the index is built again when its model's rows have grown this many times
# Below this many rows the index has one list, which every search reads whole: an exact scan, as
# the process's own copy scans exactly below the same number (meaning.EXACT_BELOW).
EXACT_BELOW = 50000
BACKFILL_BATCH = 2000


def _table() -> str:
    return MessageVector._meta.db_table


def index_name(space: str) -> str:
    """One index per embedding model (a space's name is free text: a digest names it)."""
    return INDEX_PREFIX + hashlib.sha256(space.encode()).hexdigest()[:16]


def _literal(value: str) -> str:
    """`value` as an SQL string literal, for the index's predicate (DDL takes no parameters): the
    planner also needs to see the literal in a query to use a partial index. An escape string,
    so its meaning does not depend on the server's standard_conforming_strings."""
    return "E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _as_vector(v: Vector | Iterable[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(f"{x:.8g}" for x in np.asarray(v, dtype=np.float32).tolist()) + "]"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


@dataclass(frozen=True)
class State:
    """Whether search by meaning can go through pgvector here, and why not."""

    usable: bool  # the extension and the column are there
    why_not: str  # "" when usable
    version: str = ""  # the extension's


def usable() -> State:
    if connection.vendor != "postgresql":
        return State(False, "the database is SQLite")
    with connection.cursor() as cur:
        cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cur.fetchone()
        if row is None:
            return State(False, "the pgvector extension is not enabled in this database")
        if _version(str(row[0])) < (0, 7):
            return State(False, f"pgvector {row[0]} is older than 0.7, the first with half-precision vectors")
        cur.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped",
            [_table(), COLUMN],
        )
        if cur.fetchone() is None:
            return State(False, "the vectors' column for pgvector is not made yet", str(row[0]))
    return State(True, "", str(row[0]))


def enable() -> State:
    """Make pgvector usable if the server has it: the extension (which needs a superuser the
    first time) and the column. Safe to call again; never raises for a server without it."""
    if (state := usable()).usable:
        # Nothing to change: the schema is not touched again (an ALTER, even one with nothing to
        # do, would wait for every search of the table and hold the next ones back meanwhile).
        return state
    if connection.vendor != "postgresql":
        return state
    with connection.cursor() as cur:
        cur.execute("SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'")
        row = cur.fetchone()
        if row is None:
            return State(False, "the PostgreSQL server has no pgvector extension installed")
        if row[0] is None:
            try:
                with transaction.atomic():
                    cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except DatabaseError as exc:
                why = (
                    f"pgvector is installed but not enabled in this database ({exc}); "
                    "a superuser enables it with CREATE EXTENSION vector"
                )
                return State(False, why.replace("\n", " "))
        _settle_checks(cur)
        cur.execute(f"ALTER TABLE {_table()} ADD COLUMN IF NOT EXISTS {COLUMN} vector")
        # Made with the column, in the same transaction: finds at once whether a model's rows all
        # have theirs (`ready`).
        cur.execute(f"CREATE INDEX IF NOT EXISTS {MISSING_INDEX} ON {_table()} (model) WHERE {COLUMN} IS NULL")
    return usable()


def _settle_checks(cur: Any) -> None:
    """Inside a transaction, a table whose rows were written in it can be neither altered nor
    indexed while their deferred foreign-key checks are pending: they are made now, then the
    constraints deferred again as they were."""
    if connection.in_atomic_block:
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cur.execute("SET CONSTRAINTS ALL DEFERRED")


def write(rows: Sequence[tuple[int, Vector | list[float]]]) -> None:
    """Set the `embedding` of these messages' vector rows (message id, vector), when pgvector is
    usable; a no-op otherwise (the BLOB is what every search can read)."""
    if not rows or not usable().usable:
        return
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {_table()} AS v SET {COLUMN} = d.e::vector "
            "FROM unnest(%s::bigint[], %s::text[]) AS d(id, e) WHERE v.message_id = d.id",
            [[mid for mid, _ in rows], [_as_vector(v) for _, v in rows]],
        )


def backfill(space: str, limit: int = BACKFILL_BATCH) -> int:
    """Fill the `embedding` of up to `limit` of `space`'s rows written without one (before pgvector
    was usable). Returns how many were filled: 0 once every row has its own."""
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT message_id, vector FROM {_table()} WHERE model = %s AND {COLUMN} IS NULL LIMIT %s",
            [space, limit],
        )
        rows = [(int(mid), unpack(blob)) for mid, blob in cur.fetchall()]
    write(rows)
    return len(rows)


def _index_valid(cur: Any, name: str) -> bool | None:
    """None: no such index; False: one left invalid (a build interrupted)."""
    cur.execute(
        "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s", [name]
    )
    row = cur.fetchone()
    return None if row is None else bool(row[0])


def _built_for(cur: Any, name: str) -> int:
    """The rows the index was built for (its comment), 0 when unknown."""
    cur.execute("SELECT obj_description(%s::regclass, 'pg_class')", [name])
    row = cur.fetchone()
    comment = str(row[0] or "") if row else ""
    return int(comment.removeprefix("rows=")) if comment.startswith("rows=") and comment[5:].isdigit() else 0


def build_index(space: str) -> bool:
    """The index of `space`'s vectors, built if missing or outgrown (concurrently, unless inside a
    transaction, where PostgreSQL cannot), a new one beside the old until it is ready; other
    models' indexes dropped. True when one is there."""
    name, fresh = index_name(space), index_name(space) + "_new"
    concurrently = "" if connection.in_atomic_block else " CONCURRENTLY"
    with connection.cursor() as cur:
        _settle_checks(cur)
        cur.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
            "WHERE i.indrelid = %s::regclass AND c.relname LIKE %s",
            [_table(), INDEX_PREFIX.replace("_", "\\_") + "%"],
        )
        for (other,) in cur.fetchall():
            if other not in (name, fresh):  # another model's vectors: never searched again
                cur.execute(f"DROP INDEX{concurrently} IF EXISTS {other}")
        cur.execute(f"SELECT count(*) FROM {_table()} WHERE model = %s", [space])  # from the (model, message) index
        rows = int(cur.fetchone()[0])
        if not rows:
            return bool(_index_valid(cur, name))  # nothing embedded: the dimensions are not known
        cur.execute(f"SELECT octet_length(vector) / 4 FROM {_table()} WHERE model = %s LIMIT 1", [space])
        dims = int(cur.fetchone()[0])
        valid = _index_valid(cur, name)
        if valid and rows < RETRAIN_GROWTH * max(1, _built_for(cur, name)):
            return True
        # A new index beside the one in use (searches go on through it), then put in its place.
        cur.execute(f"DROP INDEX{concurrently} IF EXISTS {fresh}")  # one a build left unfinished
        lists = max(1, round(math.sqrt(rows))) if rows >= EXACT_BELOW else 1
        cur.execute(
            f"CREATE INDEX{concurrently} {fresh} ON {_table()} USING ivfflat "
            f"(({COLUMN}::halfvec({dims})) halfvec_cosine_ops) WITH (lists = {lists}) "
            f"WHERE model = {_literal(space)}"
        )
        cur.execute(f"COMMENT ON INDEX {fresh} IS 'rows={rows}'")
        with transaction.atomic():
            cur.execute(f"DROP INDEX IF EXISTS {name}")
            cur.execute(f"ALTER INDEX {fresh} RENAME TO {name}")
        return bool(_index_valid(cur, name))


def prepare(space: str, batches: int = 50) -> State:
    """The background work's part (agent/recall.py, each round): pgvector made usable, up to
    `batches` of older rows given their `embedding` (each batch its own transaction, so a round
    cut short keeps what it did), and the index built once none lacks it."""
    try:
        with transaction.atomic():
            state = enable()
        if not state.usable:
            return state
        for _ in range(batches):
            with transaction.atomic():
                filled = backfill(space)
            if not filled:
                # Outside a transaction where there is none, so that it is built concurrently.
                with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
                    build_index(space)
                break
    except DatabaseError as exc:  # a lock, a full disk: the searches go on through the process's copy
        log.warning("pgvector's index for %s not made this round: %s", space, exc)
        return State(False, f"the last attempt failed: {exc}".replace("\n", " "))
    return state


def where(space: str) -> str:
    """Where searches of `space` find their nearest vectors, in the person's words (the settings
    page)."""
    if (version := ready(space)) is not None:
        return f"through pgvector's index in PostgreSQL (pgvector {version})"
    held = "through an index each server process holds in its memory"
    if connection.vendor != "postgresql":
        return held
    state = usable()
    if state.usable:
        return held + " until pgvector's index is built (the background work builds it)"
    return f"{held}: {state.why_not}"


def ready(space: str) -> str | None:
    """The extension's version when searches of `space` can go through its index (the index valid,
    no row of the model without its `embedding`), None otherwise."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cur:
        # The index's existence proves the column's, which the second query needs.
        cur.execute(
            "SELECT e.extversion FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid, pg_extension e "
            "WHERE c.relname = %s AND i.indisvalid AND e.extname = 'vector'",
            [index_name(space)],
        )
        row = cur.fetchone()
        if row is None:
            return None
        cur.execute(f"SELECT 1 FROM {_table()} WHERE model = %s AND {COLUMN} IS NULL LIMIT 1", [space])
        lacking = cur.fetchone() is not None
    return None if lacking else str(row[0])


def nearest(
    space: str,
    q: Vector,
    filters: Filters,
    limit: int,
    min_similarity: float,
    roles: tuple[str, ...],
    leave_out: list[tuple[str, list[Any]]],
    version: str,
) -> list[tuple[int, str, float]]:
    """(message id, session id, cosine) of the `limit` rows of `space` nearest to `q` through its
    index, passing the filters, none below `min_similarity`, nearest first (`ready` said the
    index can be used)."""
    dims = len(q)
    join, where, params = vector_conditions(filters, roles, leave_out)
    distance = f"v.{COLUMN}::halfvec({dims}) <=> %s::halfvec({dims})"  # the index's expression
    query = _as_vector(q)
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"SET LOCAL ivfflat.probes = {PROBES}")
        if _version(version) >= (0, 8):
            # While the filters or the floor leave fewer than `limit` rows, further lists are
            # probed (in about the right order: sorted again below).
            cur.execute("SET LOCAL ivfflat.iterative_scan = relaxed_order")
            cur.execute(f"SET LOCAL ivfflat.max_probes = {PROBES * MAX_PROBES_PER_PROBE}")
        cur.execute(
            f"SELECT v.message_id, m.session_id, 1 - ({distance}) FROM {_table()} v "
            f"JOIN {MESSAGES} m ON m.id = v.message_id{join} "
            f"WHERE v.model = {_literal(space).replace('%', '%%')}"  # a literal % among the parameters
            + "".join(f" AND {w}" for w in where)
            + f" AND ({distance}) < %s ORDER BY {distance} LIMIT %s",
            [query, *params, query, 1 - min_similarity, query, limit],
        )
        rows = cur.fetchall()
    hits = [(int(mid), str(sid), float(sim)) for mid, sid, sim in rows if float(sim) >= min_similarity]
    hits.sort(key=lambda h: -h[2])
    return hits
