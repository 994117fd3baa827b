"""13. Recall by meaning: what the background embedding costs a chat turn, and what hybrid search
costs against search by words alone, with the memory its vectors take.

    .venv/bin/python -m bench --only recall --out /tmp/recall.md

- Turn time with a large backlog being embedded, against the same turn with the embedding idle,
  interleaved in blocks (as bench/review_overhead.py). The turns claim their chat's lease as the
  browser's do, so the embedding pauses between batches while one runs; a batch already sent
  finishes. The embedding server is a process of its own answering each batch of 32 after 30 ms
  (a GPU server's pace) with vectors made once per batch size: the model's time is the server's,
  not the product's. The backlog never runs out (the mark is put back when it reaches the end).
- Hybrid search (words and meaning, knowledge/search/hybrid.py) against the same search by words
  only, in process, over the search benchmark's synthetic history (bench/search_data.py) with a
  vector for every user and assistant message. The vectors lie in clusters (so a query has
  neighbours above the similarity floor, as a real one does), and the query's own embedding is
  not timed (the model server's time). The first search of a process loads the vectors: timed
  on its own, with the time its index then takes to build on its own thread. Each query is then
  searched through the index, by the exact scan and by words only, in turns; recall@20 is the
  share of the exact scan's 20 nearest the index finds too. BENCH_RECALL_SIZES chooses the
  history sizes, BENCH_RECALL_CACHE a folder keeping the built histories for the next run.

Goals: hybrid search through the index at a million messages adds under 50 ms p95 to the search by
words; recall@20 at least 0.95.

Goal: turn ratio (median with the backlog / median without) at most 1.10.
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT, Figure, Samples, django_setup, figure_from, median, p95, temp_home

SCALES: dict[str, dict[str, Any]] = {
    "full": {"turns": 60, "backlog": 5_000, "sizes": [100_000, 1_000_000], "queries": 200},
    "tiny": {"turns": 4, "backlog": 200, "sizes": [5_000], "queries": 10},
}
DIMS = 384
EMBED_DELAY = 0.03  # seconds the embedding server takes for a batch
CLUSTERS = 2000
CACHE = "BENCH_RECALL_CACHE"  # a folder to keep the built histories in, reused by later runs
SIZES = "BENCH_RECALL_SIZES"  # history sizes searched, "200000,1000000" (the scale's when unset)


def _vector(text: str) -> list[float]:
    rng = np.random.default_rng(abs(hash(text)) % (2**32))
    v = rng.standard_normal(DIMS)
    return [float(x) for x in v / np.linalg.norm(v)]


_ANSWERS: dict[int, bytes] = {}


def _answer(count: int, model: str) -> bytes:
    """The answer to a batch of `count` texts, made once per size: the server's own work must not
    take the machine's processors from the product being measured (a real one runs elsewhere)."""
    if count not in _ANSWERS:
        data = [{"object": "embedding", "index": i, "embedding": _vector(f"text {i}")} for i in range(count)]
        _ANSWERS[count] = json.dumps({"object": "list", "data": data, "model": model}).encode()
    return _ANSWERS[count]


class _Embeddings(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(EMBED_DELAY)
        out = _answer(len(body["input"]), body["model"])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        return


def serve() -> None:
    """The embedding server, in a process of its own (`python -m bench.recall serve`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


def _start_embedding_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.recall", "serve"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


# -- the turn with a backlog ----------------------------------------------------------------------


class _Backlog:
    """The background embedding, run round after round on its own thread while `on` is set."""

    def __init__(self) -> None:
        self.on = threading.Event()
        self.stop = threading.Event()
        self.idle = threading.Event()
        self.embedded = 0
        self.paused = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        from django.db import connection

        from agent import recall
        from knowledge.vectors import RecallProgress

        while not self.stop.is_set():
            if not self.on.is_set():
                self.idle.set()
                self.on.wait(0.1)
                continue
            self.idle.clear()
            done = recall.embed_backlog(max_batches=20)
            self.embedded += done.embedded
            if done.waited:
                self.paused += 1
                time.sleep(0.05)  # the next round (every 10 s in the product: this is harsher)
            elif not done.embedded and not done.error:
                RecallProgress.objects.update(high_water=0)  # the end: the same backlog again
        connection.close()

    def pause(self) -> None:
        self.on.clear()
        self.idle.wait(120)


def _turn(agent: Any, i: int) -> float:
    from knowledge.history import turns

    time.sleep(random.Random(i).uniform(0.0, 0.3))  # the message comes at any moment of a batch
    t = time.perf_counter()
    turns.claim(agent.session.pk)
    for _ in agent.run_turn(f"question {i}"):
        pass
    turns.release(agent.session.pk)
    return (time.perf_counter() - t) * 1000


def _backlog(n: int) -> None:
    from knowledge.models import ChatSession, Message

    for start in range(0, n, 500):
        session = ChatSession.objects.create(title=f"old chat {start}")
        Message.objects.bulk_create(
            Message(session=session, role=("user", "assistant")[k % 2], content=f"an older message {start + k} " * 6)
            for k in range(min(500, n - start))
        )


def turn_figure(scale: str) -> list[Figure]:
    from bench.model_server import ModelProcess

    cfg = SCALES[scale]
    proc, embed_url = _start_embedding_server()
    config = f"embeddings:\n  model: bench-embed\n  base_url: {embed_url}\nmemory:\n  nudge_interval: 0\n"
    config += "skills:\n  creation_nudge_interval: 0\n"
    django_setup(temp_home(), config, {"OPENAI_API_KEY": "k", "HERMES_MODEL": "b"})
    chat = ModelProcess()
    chat.script({"default": {"text": "A short answer of a few words. " * 8}})
    os.environ["OPENAI_BASE_URL"] = chat.base_url
    from agent.chat.runner import AgentSession

    _backlog(cfg["backlog"])
    backlog = _Backlog()
    busy, quiet = AgentSession.open(source="cli"), AgentSession.open(source="cli")
    for i in range(3):
        _turn(quiet, -1 - i)
    out = Samples()
    block = 2
    for b in range(math.ceil(cfg["turns"] / block)):
        for with_backlog in (True, False) if b % 2 == 0 else (False, True):
            if with_backlog:
                backlog.on.set()
                time.sleep(0.2)  # the embedding is under way when the turn comes
                _turn(busy, -1)
                out.product += [_turn(busy, b * block + k) for k in range(block)]
            else:
                backlog.pause()
                _turn(quiet, -1)
                out.reference += [_turn(quiet, b * block + k) for k in range(block)]
    backlog.pause()
    backlog.stop.set()
    chat.stop()
    proc.terminate()
    f = figure_from("13", "chat turn while a backlog is embedded", "ms", out, reference="embedding idle")
    ratio = (f.median or 0) / (f.ref_median or 1)
    f.result, f.goal, f.met = f"ratio {ratio:.2f}", "<= 1.10", ratio <= 1.10
    f.notes = (
        f"{backlog.embedded:,} messages embedded during the run; the embedding paused {backlog.paused} times "
        f"for a turn; batches of 32, {EMBED_DELAY * 1000:.0f} ms each at the embedding server"
    )
    return [f]


# -- hybrid search at scale -----------------------------------------------------------------------


def _store_vectors(db: Any, space: str, seed: int = 5) -> int:
    """A clustered unit vector for every user and assistant message, straight into the table."""
    import sqlite3

    rng = np.random.default_rng(seed)
    centroids = rng.standard_normal((CLUSTERS, DIMS)).astype(np.float32)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    ids = [mid for (mid,) in conn.execute("SELECT id FROM knowledge_message WHERE role IN ('user', 'assistant')")]
    conn.execute("BEGIN")
    for start in range(0, len(ids), 20_000):
        part = ids[start : start + 20_000]
        v = centroids[rng.integers(0, CLUSTERS, len(part))] + 1.2 * rng.standard_normal((len(part), DIMS))
        v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype("<f4")
        conn.executemany(
            "INSERT INTO knowledge_messagevector (message_id, model, vector) VALUES (?, ?, ?)",
            [(mid, space, v[k].tobytes()) for k, mid in enumerate(part)],
        )
    conn.execute(
        "INSERT INTO knowledge_recallprogress (model, high_water, embedded, worker, error, updated_at) "
        "VALUES (?, ?, ?, '', '', datetime('now'))",
        (space, max(ids), len(ids)),
    )
    conn.execute("COMMIT")
    conn.close()
    np.save(db.with_suffix(".centroids.npy"), centroids)
    return len(ids)


def query_embedder(centroids: np.ndarray[Any, Any]) -> Any:
    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            rng = np.random.default_rng(abs(hash(text)) % (2**32))
            v = centroids[rng.integers(0, CLUSTERS)] + 1.2 * rng.standard_normal(DIMS)
            out.append([float(x) for x in v / np.linalg.norm(v)])
        return out

    return embed


def _same(embedder: Any) -> Any:
    return embedder


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def history(tmp: Path, size: int, words: list[str]) -> tuple[Path, Path, int, float]:
    """(home, database, vectors, seconds to build) of the synthetic history of `size` messages. With
    BENCH_RECALL_CACHE set to a folder, a history built there before is used again (a million
    messages take a while to build): the same seeds make the same one."""
    from bench.search_data import load, migrate

    cache = os.environ.get(CACHE)
    home = Path(cache) / f"recall-{size}" if cache else tmp / f"home-{size}"
    db = home / "dashboard.sqlite3"
    done = home / "vectors.txt"
    if done.exists():
        return home, db, int(done.read_text(encoding="ascii")), 0.0
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    t = time.time()
    migrate(home, db)
    load(db, size, words)
    vectors = _store_vectors(db, "bench")
    done.write_text(str(vectors), encoding="ascii")
    return home, db, vectors, time.time() - t


def search_figures_at(label: str, qs: list[str], on: Any, vectors: int) -> list[Figure]:
    """Hybrid search with the index and with the exact scan, each against words only; what the
    index finds against the exact scan; the process's first search and the index's build."""
    from knowledge.search import meaning, nearest_postgres, search_messages

    pgvector = nearest_postgres.ready("bench")  # on PostgreSQL with its index built: searches go through it
    before = _rss_mb()
    meaning.register(partial(_same, on))
    t = time.perf_counter()
    search_messages(qs[0])
    load_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    indexed = meaning.settle("bench")  # built on a thread of its own; searches scan exactly until then
    index_ms = (time.perf_counter() - t) * 1000
    held, rss = meaning.memory_bytes() / 1e6, _rss_mb() - before
    by_index, by_scan, found, cpu = _timed(qs, on)
    recall, lowest = _recall_at_20(qs, on)
    figures = []
    for out, how, side in (
        (
            by_index,
            f"pgvector {pgvector}'s IVFFlat index" if pgvector else "index" if indexed else "exact scan: no index",
            "index",
        ),
        (by_scan, "exact scan", "scan"),
    ):
        f = figure_from("13", f"hybrid search_messages ({how}) @{label}", "ms", out, reference="words only, same query")
        added = f"+{(f.median or 0) - (f.ref_median or 0):.1f} ms median, +{(f.p95 or 0) - (f.ref_p95 or 0):.1f} ms p95"
        f.result = f"{added}; {found} of {len(qs)} queries got hits by meaning"
        f.notes = (
            f"processor time: +{median(cpu[side]) - median(cpu['words']):.1f} ms median, "
            f"+{p95(cpu[side]) - p95(cpu['words']):.1f} ms p95 over words only"
        )
        figures.append(f)
    quality = Figure("13", f"hits by meaning, index against exact scan @{label}", "recall@20", recall)
    quality.result = f"recall@20 {recall:.3f} (lowest query {lowest:.2f}) over {len(qs)} queries"
    load_f = Figure("13", f"first search of a process (loads the vectors) @{label}", "ms", load_ms)
    built = (
        "searches through pgvector's index: nothing loaded"
        if pgvector
        else f"index built {index_ms / 1000:.1f} s later on its own thread"
        if indexed
        else "no index: an exact scan"
    )
    load_f.result = (
        f"vectors and index held: {held:.0f} MB ({held * 1e6 / max(vectors, 1):.0f} B each); RssAnon +{rss:.0f} MB; "
        + built
    )
    return [*figures, quality, load_f]


def _timed(qs: list[str], on: Any) -> tuple[Samples, Samples, int, dict[str, list[float]]]:
    """Each query by the index, by the exact scan and by words only, in turns (the order rotates);
    with the processor time of each, which other work on the machine disturbs less."""
    from knowledge.search import meaning, search_messages

    nearest = meaning.nearest
    by_index, by_scan, words = Samples(), Samples(), list[float]()
    cpu: dict[str, list[float]] = {"index": [], "scan": [], "words": []}
    found = 0
    sides: list[tuple[str, list[float]]] = [("index", by_index.product), ("scan", by_scan.product), ("words", words)]
    for i, q in enumerate(qs):
        for how, into in sides[i % 3 :] + sides[: i % 3]:
            meaning.register(partial(_same, meaning.WORDS_ONLY if how == "words" else on))
            meaning.nearest = partial(nearest, exact=True) if how == "scan" else nearest
            t, c = time.perf_counter(), time.thread_time()
            page = search_messages(q)
            into.append((time.perf_counter() - t) * 1000)
            cpu[how].append((time.thread_time() - c) * 1000)
            found += how == "index" and any(h.by_meaning for h in page.results)
    meaning.nearest = nearest
    by_index.reference = by_scan.reference = words
    return by_index, by_scan, found, cpu


def _recall_at_20(qs: list[str], on: Any) -> tuple[float, float]:
    """Mean and lowest share of the exact scan's 20 nearest that the index finds too (the hits by
    meaning a search shows, before they join the hits by words)."""
    from knowledge.search import meaning
    from knowledge.search.filters import Filters
    from knowledge.search.hybrid import MEANING_HITS

    meaning.register(partial(_same, on))
    shares = []
    for q in qs:
        found = meaning.query_vector(q)
        if found is None:
            continue
        space, v = found
        exact = {n.message_id for n in meaning.nearest(space, v, Filters(), MEANING_HITS, exact=True)[:20]}
        got = {n.message_id for n in meaning.nearest(space, v, Filters(), MEANING_HITS)[:20]}
        if exact:
            shares.append(len(exact & got) / len(exact))
    return (sum(shares) / len(shares), min(shares)) if shares else (float("nan"), float("nan"))


def search_figures(scale: str) -> list[Figure]:
    from bench.search_data import queries, vocabulary

    cfg = SCALES[scale]
    sizes = [int(n) for n in os.environ.get(SIZES, "").split(",") if n] or cfg["sizes"]
    tmp = temp_home()
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(HERMES_HOME=str(tmp), HERMES_DB=str(tmp / "unused.sqlite3"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")
    import django

    django.setup()
    from django.db import connection

    from knowledge.search import meaning
    from knowledge.search import top as search_top
    from knowledge.search.backends import backend

    words = vocabulary()
    qs = queries(words, cfg["queries"])
    figures: list[Figure] = []
    for size in sizes:
        home, db, vectors, build = history(tmp, size, words)
        connection.close()
        connection.settings_dict["NAME"] = str(db)
        with connection.cursor() as cur:
            search_top.rebuild_lists(cur, backend().top)
        centroids = np.load(db.with_suffix(".centroids.npy"))
        on = meaning.Embedder("bench", "", query_embedder(centroids))
        label = f"{size:,} messages ({vectors:,} vectors)"
        figures += search_figures_at(label, qs, on, vectors)
        built = f"built in {build:.0f}s" if build else "reused from an earlier run"
        figures[-4].notes += f"; history and vectors {built}; database {db.stat().st_size / 1e6:.0f} MB"
        connection.close()
        meaning._spaces.clear()
        if not os.environ.get(CACHE):
            shutil.rmtree(home, ignore_errors=True)
    return figures


def run(scale: str) -> list[Figure]:
    figures = turn_figure(scale)
    figures += search_figures(scale)
    figures.append(
        Figure("13", "peak resident memory of the benchmark process", "MB",
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    )  # fmt: skip
    return figures


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    serve()
