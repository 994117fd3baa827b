"""An approximate index over the int8 vectors search by meaning holds in memory (docs/DECISIONS.md,
record 24): inverted lists, as in IVF.

k-means (spherical: unit centroids, nearest by cosine) is trained on a sample of the vectors, and
every vector is filed under its nearest centroid. A query scores the centroids, then only the
vectors filed under the nearest `probe` of them; further lists are scored in waves when filters
leave too few candidates. The index holds positions in the caller's arrays, never a copy of the
vectors: 8 bytes a vector (its position, and its list for filing more later) and the centroids.

An index is immutable once built: a newer one replaces it whole, so a search holding one is never
disturbed. Vectors appended after it was built are not in it: the caller scans them exactly until
a newer index files them (`extended`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

ASSIGN_CHUNK = 20000  # vectors turned into float32 at a time to find their nearest centroids
TRAIN_PER_LIST = 64  # sample vectors a list is trained on (fewer means looser centroids)
TRAIN_ROUNDS = 8  # k-means iterations: clustered data settles in a few
# The lists a query scores first: 16 of the thousand at a million vectors found 99 % of the exact
# scan's top 20 on the benchmark's clustered vectors; a larger share of fewer lists below.
PROBE_SHARE = 0.016
PROBE_AT_LEAST = 16


def list_count(n: int) -> int:
    """About sqrt(n) lists: the centroids a query scores cost about what one list's vectors do."""
    return max(1, round(math.sqrt(n)))


def probe_count(lists: int) -> int:
    return min(lists, max(PROBE_AT_LEAST, math.ceil(lists * PROBE_SHARE)))


@dataclass(frozen=True)
class ListIndex:
    """Centroids and, for the first `covered` vectors, the list each is filed under."""

    centroids: Array  # (lists, dims) float32, unit rows
    order: Array  # positions 0..covered-1 grouped by list (int32)
    starts: Array  # list l's positions are order[starts[l]:starts[l + 1]] (int64, lists + 1)
    lists_of: Array  # the list of each position below `covered` (int32)
    trained: int  # vectors there were when the centroids were trained

    @property
    def covered(self) -> int:
        return len(self.lists_of)

    @property
    def lists(self) -> int:
        return len(self.centroids)

    @property
    def nbytes(self) -> int:
        return int(self.centroids.nbytes + self.order.nbytes + self.starts.nbytes + self.lists_of.nbytes)

    def waves(self, q: Array, probe: int | None = None) -> Iterator[Array]:
        """Positions of the vectors filed under the lists nearest to `q` (a unit float32 vector):
        the nearest `probe` lists first, then twice as many further ones each time, until every
        list has been given."""
        # einsum, not BLAS: a search must not wait on the BLAS a build may be running meanwhile.
        near = np.einsum("ij,j->i", self.centroids, q.astype(np.float32))
        ranked = np.argsort(-near, kind="stable")
        step = probe or probe_count(self.lists)
        done = 0
        while done < len(ranked):
            chosen = ranked[done : done + step]
            yield np.concatenate([self.order[self.starts[c] : self.starts[c + 1]] for c in chosen])
            done, step = done + step, step * 2

    def extended(self, codes: Array) -> ListIndex:
        """This index with the vectors after `covered` (of `codes`, the caller's int8 rows) filed too."""
        more = assign(self.centroids, codes[self.covered :])
        return _grouped(self.centroids, np.concatenate([self.lists_of, more]), self.trained)


def train(codes: Array, *, lists: int | None = None, seed: int = 0) -> ListIndex:
    """An index of every row of `codes` (int8, or any numeric rows of one width)."""
    n = len(codes)
    k = min(n, lists or list_count(n))
    rng = np.random.default_rng(seed)
    sample = _unit(codes[np.sort(rng.choice(n, size=min(n, k * TRAIN_PER_LIST), replace=False))])
    centroids = sample[rng.choice(len(sample), size=k, replace=False)].copy()
    for _ in range(TRAIN_ROUNDS):
        centroids = _moved(centroids, sample, rng)
    return _grouped(centroids, assign(centroids, codes), n)


def assign(centroids: Array, codes: Array) -> Array:
    """The nearest centroid of each row, a block at a time (a block's float32 is 4x its int8)."""
    out = np.empty(len(codes), dtype=np.int32)
    for start in range(0, len(codes), ASSIGN_CHUNK):
        block = codes[start : start + ASSIGN_CHUNK].astype(np.float32)
        out[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


def _moved(centroids: Array, sample: Array, rng: np.random.Generator) -> Array:
    """One k-means step: each centroid to the mean direction of the sample vectors nearest to it;
    a centroid left with none restarts at a random sample vector."""
    nearest = np.argmax(sample @ centroids.T, axis=1)
    counts = np.bincount(nearest, minlength=len(centroids))
    by_list = np.argsort(nearest, kind="stable")
    sums = np.zeros_like(centroids)
    filled = np.flatnonzero(counts)
    sums[filled] = np.add.reduceat(sample[by_list], np.cumsum(counts)[filled] - counts[filled])
    empty = np.flatnonzero(counts == 0)
    sums[empty] = sample[rng.choice(len(sample), size=len(empty), replace=False)]
    return _unit(sums)


def _unit(rows: Array) -> Array:
    floats = rows.astype(np.float32)
    norms = np.linalg.norm(floats, axis=1, keepdims=True)
    return floats / np.where(norms > 0, norms, 1.0)


def _grouped(centroids: Array, lists_of: Array, trained: int) -> ListIndex:
    order = np.argsort(lists_of, kind="stable").astype(np.int32)
    starts = np.zeros(len(centroids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(lists_of, minlength=len(centroids)), out=starts[1:])
    return ListIndex(centroids, order, starts, lists_of, trained)
