"""Search by meaning: the stored messages nearest to a query's embedding (docs/DECISIONS.md,
record 24).

The vectors are in the database (knowledge/vectors.py), written in the background by
agent/recall.py. Each process keeps the vectors of the model in use in memory as int8 (384 bytes
a message for a 384-dimension model) and appends the new ones before each search. Up to
EXACT_BELOW vectors it scans them exactly: every vector is scored. Above, an approximate index
(knowledge/search/nearest_index.py: k-means lists, as IVF) is built on a thread of its own, and a
search scores only the vectors of the lists nearest to the query, plus those appended since the
index was built; until the first index is ready, and whenever one is being rebuilt, the search
uses what it has (the exact scan, or the older index and an exact scan of what it lacks). The best
candidates are then read again from the database — which drops messages deleted or filtered out,
and rescores them exactly in float32 — so the in-memory copy only has to be a superset. The scan
itself is int8 summed in int32, not BLAS: its threads, on a machine whose cores are busy, made the
same scan ten times slower.

This package never calls a model server: the agent registers the one that embeds a query
(`register`, from agent/apps.py), as it registers the appliers of approved writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection

from knowledge.models import Message
from knowledge.search import nearest_index, nearest_postgres
from knowledge.search.filters import Filters, vector_conditions
from knowledge.search.nearest_index import ListIndex
from knowledge.search.schema import MESSAGES
from knowledge.vectors import MessageVector, RecallProgress, Vector, unpack

log = logging.getLogger(__name__)

# Below this cosine a message is not "about" the query: a hit by meaning must be at least this
# near (all-MiniLM-L6-v2 puts unrelated sentences around 0.0–0.2, paraphrases mostly above 0.3).
MIN_SIMILARITY = 0.2
CANDIDATES = 400  # nearest by the int8 scan, rescored exactly and filtered in one query
ROUNDS = 4  # further blocks of candidates read when filters leave too few (ROUNDS * CANDIDATES at most)
# The first block is smaller: a few times the hits wanted is plenty when no filter removes any
# (the int8 scores are within about 0.01 of the exact ones), and reading 400 rows again cost more
# than the whole indexed scan at a million messages.
FIRST_PER_HIT = 4
LOAD_CHUNK = 20000  # vectors read and quantized at a time when a process loads them
ROLES = ("user", "assistant")  # the messages that are embedded: what the person and the agent said
EXACT_BELOW = 50000  # vectors scanned exactly (about 20 ms); from this many on, an index is built
RETRAIN_GROWTH = 4  # the index is trained again when the vectors have grown this many times
FILE_AFTER = 5000  # vectors appended since the index was built that are filed in a newer one


@dataclass(frozen=True)
class Embedder:
    """How this process embeds a query, as the agent configured it."""

    space: str  # the vectors' model ("<model> @ <server>"); "" when search is by words only
    why_not: str  # why search is by words only, in the person's words ("" when it is not)
    embed: Callable[[list[str]], list[list[float]] | None] | None = None  # None: the server cannot

    @property
    def on(self) -> bool:
        return bool(self.space) and self.embed is not None


WORDS_ONLY = Embedder("", "no embedding model is set (embeddings.model in config.yaml)")
_provider: Callable[[], Embedder] = lambda: WORDS_ONLY  # noqa: E731  (replaced at start-up)


def register(provider: Callable[[], Embedder]) -> None:
    """The agent's way to embed (agent/apps.py); read anew for each search, so a changed setting
    applies at once."""
    global _provider
    _provider = provider


def embedder() -> Embedder:
    return _provider()


def query_vector(text: str) -> tuple[str, Vector] | None:
    """(space, unit vector) of `text`, or None when search is by words only or the server failed
    (then the words alone answer: a search never fails for lack of meaning)."""
    current = embedder()
    if not current.on or not text.strip() or current.embed is None:
        return None
    try:
        found = current.embed([text])
    except Exception as exc:  # noqa: BLE001  (any failure of the server: the words still answer)
        log.warning("embedding a search failed, searching by words only: %s", exc)
        return None
    if not found:
        return None
    v = np.asarray(found[0], dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return (current.space, v / norm) if norm > 0 else None


class _Space:
    """The int8 copy of one model's vectors held by this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0  # counts the times the copy started again: an older index is dropped
        self.builder: threading.Thread | None = None
        self._clear()

    def _clear(self) -> None:
        self.ids = np.empty(0, dtype=np.int64)
        self.codes = np.empty((0, 0), dtype=np.int8)
        self._ids_buf = self.ids
        self._codes_buf = self.codes
        self.last_id = 0
        self.written = -1  # RecallProgress.embedded when last read: a smaller one means start again
        self.index: ListIndex | None = None  # of the first index.covered vectors
        self.generation += 1

    @property
    def nbytes(self) -> int:
        """What the vectors take, with the room kept for new ones (up to a quarter more)."""
        return int(self._ids_buf.nbytes + self._codes_buf.nbytes)

    def refresh(self, space: str) -> None:
        progress = RecallProgress.objects.filter(model=space).values_list("embedded", flat=True).first()
        written = int(progress or 0)
        if written < self.written:  # rows went away (a restored database, a test's rollback)
            self._clear()
        if written == self.written:
            return
        rows = MessageVector.objects.filter(model=space, message_id__gt=self.last_id).order_by("message_id")
        # A first load makes room for every vector at once: blocks then go straight into place.
        room = rows.count() if not len(self.ids) else 0
        ids: list[int] = []
        raw = bytearray()
        width = self.codes.shape[1] * 4 if self.codes.size else 0
        for mid, blob in rows.values_list("message_id", "vector").iterator(chunk_size=LOAD_CHUNK):
            width = width or len(blob)
            if len(blob) != width:
                continue  # not a vector of this model's length: never compared
            ids.append(mid)
            raw += blob
            if len(ids) >= LOAD_CHUNK:  # a block at a time: its float32 is 4x its int8
                self._append(np.asarray(ids, dtype=np.int64), _quantized(raw, width), room)
                ids, raw = [], bytearray()
        if ids:
            self._append(np.asarray(ids, dtype=np.int64), _quantized(raw, width), room)
        if len(self.ids):
            self.last_id = int(self.ids[-1])
        self.written = written

    def _append(self, ids: np.ndarray[Any, Any], codes: np.ndarray[Any, Any], room: int = 0) -> None:
        """New rows after the others, in buffers that grow by a quarter when full: a search while the backlog
        is embedded adds a few rows, and copying every vector each time would cost more than the
        scan. Rows past the end are written in place; the views scans hold end before them."""
        n, k = len(self.ids), len(ids)
        if self._ids_buf.shape[0] < n + k or self._codes_buf.shape[1] != codes.shape[1]:
            # Exactly what a first load needs; then a quarter more each time (geometric, so appends
            # stay cheap on average, for 25 % more memory at most).
            capacity = max(n + k, room) if n == 0 else int((n + k) * 1.25) + 1024
            ids_buf = np.empty(capacity, dtype=np.int64)
            codes_buf = np.empty((capacity, codes.shape[1]), dtype=np.int8)
            if n:
                ids_buf[:n], codes_buf[:n] = self.ids, self.codes
            self._ids_buf, self._codes_buf = ids_buf, codes_buf
        self._ids_buf[n : n + k], self._codes_buf[n : n + k] = ids, codes
        self.ids, self.codes = self._ids_buf[: n + k], self._codes_buf[: n + k]

    def keep_index(self) -> None:
        """Start building a newer index on a thread of its own when one is due (never more than one
        at a time): the first once there are EXACT_BELOW vectors, a retrained one when they have
        grown RETRAIN_GROWTH times, or the same lists with FILE_AFTER appended vectors filed.
        Training a million vectors takes tens of seconds: never on a search's time."""
        if self.builder is not None and self.builder.is_alive():
            return
        n, index, codes = len(self.ids), self.index, self.codes
        work: Callable[[], ListIndex]
        if n < EXACT_BELOW:
            return
        if index is None or n >= RETRAIN_GROWTH * index.trained:
            work = lambda: nearest_index.train(codes)  # noqa: E731
        elif n - index.covered >= FILE_AFTER:
            work = lambda: index.extended(codes)  # noqa: E731
        else:
            return
        self.builder = threading.Thread(target=self._build, args=(work, self.generation), daemon=True)
        self.builder.start()

    def _build(self, work: Callable[[], ListIndex], generation: int) -> None:
        index = work()
        with self.lock:
            if generation == self.generation:  # not a copy started again meanwhile
                self.index = index

    def settle(self) -> None:
        """Wait for the index being built, if one is."""
        if self.builder is not None:
            self.builder.join()


def _quantized(raw: bytearray, width: int) -> np.ndarray[Any, Any]:
    floats = np.frombuffer(bytes(raw), dtype="<f4").reshape(-1, width // 4)
    return np.clip(np.rint(floats * 127.0), -127, 127).astype(np.int8)


def _scores(codes: np.ndarray[Any, Any], q: Vector) -> np.ndarray[Any, np.dtype[np.float32]]:
    """Approximate cosine of every vector with `q`, within about 0.01: int8 codes against the
    query's int8 code, summed in int32 by einsum. Measured at 100,000 vectors on 2 loaded cores:
    32 ms, against 44-105 ms for converting the codes to float32 for a BLAS product (and 500 ms
    when BLAS's threads fight other processes for the cores); float32 held in memory would take
    4x the memory for 24 ms."""
    code = np.clip(np.rint(q * 127.0), -127, 127).astype(np.int8)
    dots = np.einsum("ij,j->i", codes, code, dtype=np.int32)
    return (dots / np.float32(127.0 * 127.0)).astype(np.float32)


_spaces: dict[str, _Space] = {}
_spaces_lock = threading.Lock()


def _space(name: str) -> _Space:
    with _spaces_lock:
        for other in [k for k in _spaces if k != name]:
            del _spaces[other]  # another model's vectors: never compared again in this process
        return _spaces.setdefault(name, _Space())


def memory_bytes() -> int:
    """What the in-memory vectors of this process take."""
    return sum(s.nbytes + (s.index.nbytes if s.index else 0) for s in _spaces.values())


def settle(space: str) -> bool:
    """Wait until the index being built for `space`'s vectors, if any, is in use; True when
    searches use an index (the benchmark measures them once it is)."""
    held = _space(space)
    held.settle()
    return held.index is not None


@dataclass(frozen=True)
class Near:
    message_id: int
    session_id: str
    similarity: float


def nearest(
    space: str,
    q: Vector,
    filters: Filters,
    limit: int,
    *,
    leave_out_sql: list[tuple[str, list[Any]]] | None = None,
    exact: bool = False,
) -> list[Near]:
    """The `limit` messages nearest to `q` (a unit vector of `space`) that pass `filters`, nearest
    first, none below MIN_SIMILARITY. `leave_out_sql`: SQL selecting ids of messages that must
    not be found (an exclusion's matches). `exact`: scan every vector even when an index is built
    (what the index is measured against)."""
    if not exact and (version := nearest_postgres.ready(space)) is not None:  # PostgreSQL's index
        hits = nearest_postgres.nearest(space, q, filters, limit, MIN_SIMILARITY, ROLES, leave_out_sql or [], version)
        return [Near(mid, sid, similarity) for mid, sid, similarity in hits]
    held = _space(space)
    with held.lock:  # the refresh only: the arrays are replaced, never changed, so scans run side by side
        held.refresh(space)
        held.keep_index()
        ids, codes, index = held.ids, held.codes, held.index
    if not len(ids) or codes.shape[1] != len(q):
        return []
    waves = _waves(ids, codes, None if exact else index, q)
    pending = np.empty(0, dtype=np.int64)
    found: list[Near] = []
    budget, size = ROUNDS * CANDIDATES, min(CANDIDATES, FIRST_PER_HIT * limit)
    while budget > 0 and len(found) < limit:
        if not len(pending):  # the next lists only when the nearer ones have all been read
            pending = next(waves, pending)
        take = min(size, budget)
        candidates, pending = [int(i) for i in pending[:take]], pending[take:]
        if not candidates:
            break
        found += _checked(space, q, candidates, filters, leave_out_sql or [])
        budget, size = budget - len(candidates), CANDIDATES
    found.sort(key=lambda n: -n.similarity)
    return found[:limit]


def _waves(
    ids: np.ndarray[Any, Any], codes: np.ndarray[Any, Any], index: ListIndex | None, q: Vector
) -> Iterator[np.ndarray[Any, Any]]:
    """The ids worth reading again, nearest first, in waves: without an index all in one; with one,
    those of the lists nearest to `q` and the vectors the index lacks, then further lists."""
    if index is None:
        yield _ranked(ids, codes, q, np.arange(len(ids)))
        return
    lacking = np.arange(index.covered, len(ids))
    for positions in index.waves(q):
        yield _ranked(ids, codes, q, np.concatenate([positions, lacking]) if len(lacking) else positions)
        lacking = lacking[:0]


def _ranked(
    ids: np.ndarray[Any, Any], codes: np.ndarray[Any, Any], q: Vector, positions: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """The ids at `positions` whose approximate score may reach MIN_SIMILARITY, nearest first."""
    whole = len(positions) == len(ids)  # every vector: scanned in place, not gathered
    approx = _scores(codes if whole else np.take(codes, positions, axis=0), q)
    # A margin under the threshold: the int8 score may be a little under the exact one.
    above = np.flatnonzero(approx >= MIN_SIMILARITY - 0.02)
    chosen = above[np.argsort(-approx[above], kind="stable")]
    return ids[chosen if whole else positions[chosen]]


def _checked(
    space: str, q: Vector, ids: list[int], filters: Filters, leave_out: list[tuple[str, list[Any]]]
) -> list[Near]:
    """The candidates that still exist and pass the filters, scored exactly from their stored
    vectors."""
    join, where, params = vector_conditions(filters, ROLES, leave_out)
    placeholders = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT v.message_id, m.session_id, v.vector FROM {MessageVector._meta.db_table} v "
            f"JOIN {MESSAGES} m ON m.id = v.message_id{join} "
            f"WHERE v.model = %s AND v.message_id IN ({placeholders})" + "".join(f" AND {w}" for w in where),
            [space, *ids, *params],
        )
        rows = cur.fetchall()
    out = []
    for mid, sid, blob in rows:
        v = unpack(blob)
        if len(v) == len(q) and (similarity := float(v @ q)) >= MIN_SIMILARITY:
            out.append(Near(int(mid), str(sid), similarity))
    return out


@dataclass(frozen=True)
class Status:
    """What the settings and search pages say about search by meaning."""

    on: bool
    why_not: str  # why search is by words only ("" when it is not)
    model: str  # the vectors' model ("<model> @ <server>"), "" when off
    embedded: int  # messages with a vector of this model
    total: int  # messages that get one: what the person and the agent said, outside private chats
    error: str  # the background work's last failure, "" when fine
    where: str = ""  # where the nearest vectors are found (nearest_postgres.where), "" when off

    @property
    def done(self) -> bool:
        return self.embedded >= self.total

    @property
    def progress(self) -> str:
        """ "12,400 of 48,000 messages embedded" """
        return f"{self.embedded:,} of {self.total:,} message{'' if self.total == 1 else 's'} embedded"


def status() -> Status:
    current = embedder()
    total = Message.objects.filter(role__in=ROLES, session__private=False).exclude(content="").count()
    if not current.on:
        return Status(False, current.why_not, "", 0, total, "")
    progress = RecallProgress.objects.filter(model=current.space).first()
    embedded = MessageVector.objects.filter(model=current.space, message__session__private=False).count()
    error = progress.error if progress else ""
    return Status(True, "", current.space, min(embedded, total), total, error, nearest_postgres.where(current.space))
