"""Stemming from many threads at once (reviews and searches run side by side) gives every thread
the same stems as one thread alone, and never fails inside the stemmer."""

from __future__ import annotations

import threading

from knowledge.search.snippets import stem
from knowledge.search.stemming import stemmer
from knowledge.verification.similarity import terms

WORDS = ["running", "generalizations", "relational", "conditional", "hopefulness", "adjustable", "caresses"] * 300


def test_each_thread_has_its_own_stemmer():
    mine = stemmer("english")
    theirs: list[object] = []
    t = threading.Thread(target=lambda: theirs.append(stemmer("english")))
    t.start()
    t.join()
    assert stemmer("english") is mine and theirs[0] is not mine


def test_concurrent_stemming_matches_one_thread():
    expected_terms = [terms(f"Learned fact {w}") for w in WORDS]
    expected_stems = [stem(w) for w in WORDS]
    failures: list[IndexError] = []
    results: list[bool] = []

    def work() -> None:
        try:
            results.append([terms(f"Learned fact {w}") for w in WORDS] == expected_terms)
            results.append([stem(w) for w in WORDS] == expected_stems)
        except IndexError as exc:  # what a stemmer shared between threads raised
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and results == [True] * 16
