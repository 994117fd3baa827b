"""The approximate index of search by meaning: the lists nearest to a query hold the vectors the
exact scan ranks first, for vectors filed after training as for the others."""

from __future__ import annotations

from typing import Any

import numpy as np

from knowledge.search import nearest_index

Array = np.ndarray[Any, Any]
DIMS = 64
PROBE = 8  # lists read first, of the tests' few dozen


def _clustered(n: int, clusters: int, seed: int) -> tuple[Array, Array]:
    """(int8 codes of `n` unit vectors around `clusters` directions, the directions)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIMS))
    v = centres[rng.integers(0, clusters, n)] + 0.8 * rng.standard_normal((n, DIMS))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return np.clip(np.rint(v * 127), -127, 127).astype(np.int8), centres


def _query(centre: Array, seed: int) -> Array:
    v = centre + 0.8 * np.random.default_rng(seed).standard_normal(DIMS)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _scores(codes: Array, q: Array) -> Array:
    return codes.astype(np.int32) @ np.rint(q * 127).astype(np.int32)


def _exact_top(codes: Array, q: Array, k: int = 20) -> set[int]:
    return {int(i) for i in np.argsort(-_scores(codes, q), kind="stable")[:k]}


def _index_top(index: nearest_index.ListIndex, codes: Array, q: Array, k: int = 20) -> set[int]:
    positions = next(index.waves(q, probe=PROBE))
    return {int(i) for i in positions[np.argsort(-_scores(codes[positions], q), kind="stable")[:k]]}


def test_the_nearest_lists_hold_the_exact_scans_top_hits():
    codes, centres = _clustered(20_000, clusters=30, seed=1)
    index = nearest_index.train(codes, lists=40)
    assert index.covered == 20_000 and index.lists == 40
    assert sorted(index.order.tolist()) == list(range(20_000))  # every vector filed once
    first = next(index.waves(_query(centres[0], 0), probe=PROBE))
    assert len(first) < 20_000 // 3  # a query reads a part of the vectors, not all
    for i in range(20):
        q = _query(centres[i % 30], 100 + i)
        assert _index_top(index, codes, q) == _exact_top(codes, q)


def test_further_waves_reach_every_vector_once():
    codes, centres = _clustered(5_000, clusters=10, seed=2)
    index = nearest_index.train(codes, lists=30)
    waves = list(index.waves(_query(centres[3], 7), probe=4))
    assert [len(w) > 0 for w in waves] == [True] * len(waves)
    assert sorted(np.concatenate(waves).tolist()) == list(range(5_000))


def test_vectors_filed_after_training_are_found():
    codes, centres = _clustered(20_000, clusters=30, seed=3)
    index = nearest_index.train(codes, lists=40)
    later, _ = _clustered(2_000, clusters=30, seed=4)
    new_centre = np.random.default_rng(5).standard_normal(DIMS)  # a topic the training never saw
    news = np.clip(np.rint(np.stack([_query(new_centre, 200 + k) for k in range(50)]) * 127), -127, 127)
    everything = np.concatenate([codes, later, news.astype(np.int8)])
    grown = index.extended(everything)
    assert grown.covered == len(everything) and grown.trained == 20_000
    q = _query(new_centre, 999)
    assert _exact_top(everything, q) <= set(range(22_000, 22_050))
    # Filed under the lists nearest to them, as the query's nearest lists are chosen: the new
    # topic's messages are what the index finds first (a retraining groups them better).
    assert _index_top(grown, everything, q, k=10) <= set(range(22_000, 22_050))


def test_a_retrained_index_finds_the_same():
    codes, centres = _clustered(20_000, clusters=30, seed=6)
    first = nearest_index.train(codes[:5_000], lists=20).extended(codes)
    again = nearest_index.train(codes, lists=40, seed=1)
    assert again.trained == 20_000
    for i in range(10):
        q = _query(centres[i], 300 + i)
        assert _index_top(first, codes, q) == _index_top(again, codes, q) == _exact_top(codes, q)


def test_list_count_grows_as_the_square_root():
    assert nearest_index.list_count(1_000_000) == 1000
    assert nearest_index.probe_count(1000) == 16
    assert nearest_index.probe_count(40) == 16
