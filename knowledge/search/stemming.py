"""Snowball stemmers, one per thread: a stemmer object keeps its word in its own state while it
works, so one shared by two threads (two reviews, a search beside a review) corrupts both
words — seen as an IndexError deep in the stemmer under load."""

from __future__ import annotations

import threading
from typing import Any

import snowballstemmer

_local = threading.local()


def stemmer(language: str) -> Any:
    """This thread's stemmer for `language` ("english", "porter", …)."""
    cache: dict[str, Any] | None = getattr(_local, "stemmers", None)
    if cache is None:
        cache = _local.stemmers = {}
    if language not in cache:
        cache[language] = snowballstemmer.stemmer(language)
    return cache[language]
