"""6. Memory store throughput: `MemoryStore.add` (lock, re-read, threat scan, atomic write,
change-log row) from 4 contending processes, against 1 process alone; rounds interleaved. Each
write's latency is recorded; writes/s is the total over the round's wall time."""

from __future__ import annotations

import multiprocessing as mp
import time
import uuid
from typing import Any

from bench.common import Figure, django_setup, median, p95, temp_home

SCALES = {"full": {"writes": 60, "rounds": 4}, "tiny": {"writes": 3, "rounds": 2}}
CONFIG = "memory:\n  memory_char_limit: 10000000\n  user_char_limit: 10000000\n"


def _worker(writes: int, start: Any, out: Any) -> None:
    from django.db import connection

    from knowledge.memory.store import MemoryStore
    from knowledge.provenance import Provenance

    connection.close()  # never share the parent's SQLite handle across fork
    store = MemoryStore()
    prov = Provenance("user")
    start.wait()
    lat = []
    for _ in range(writes):
        t = time.perf_counter()
        result = store.add("memory", f"Bench note {uuid.uuid4().hex}", prov)
        lat.append((time.perf_counter() - t) * 1000)
        if not result.get("success"):
            raise RuntimeError(f"write failed: {result}")
    connection.close()
    out.put(lat)


def _round(procs: int, writes: int) -> tuple[float, list[float]]:
    from django.db import connection

    connection.close()
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(writes, start, out)) for _ in range(procs)]
    for w in workers:
        w.start()
    time.sleep(0.2)
    t = time.perf_counter()
    start.set()
    lat = [x for _ in workers for x in out.get(timeout=300)]
    wall = time.perf_counter() - t
    for w in workers:
        w.join()
        if w.exitcode != 0:
            raise RuntimeError(f"a writer process failed ({w.exitcode})")
    return procs * writes / wall, lat


def run(scale: str) -> list[Figure]:
    cfg = SCALES[scale]
    django_setup(temp_home(), CONFIG)
    rates: dict[int, list[float]] = {1: [], 4: []}
    lats: dict[int, list[float]] = {1: [], 4: []}
    for r in range(cfg["rounds"]):
        for procs in (1, 4) if r % 2 == 0 else (4, 1):
            rate, lat = _round(procs, cfg["writes"])
            rates[procs].append(rate)
            lats[procs].extend(lat)
    return [
        Figure(
            "6", "memory writes/s, 4 contending processes", "writes/s", median(rates[4]), min(rates[4]),
            median(rates[1]), min(rates[1]), "1 process alone",
            f"{median(rates[4]) / median(rates[1]):.2f}x the single writer", n=len(lats[4]),
            notes="p95 columns hold the slowest round",
        ),
        Figure(
            "6", "memory write latency, 4 contending processes", "ms", median(lats[4]), p95(lats[4]),
            median(lats[1]), p95(lats[1]), "1 process alone", n=len(lats[4]),
        ),
    ]  # fmt: skip
