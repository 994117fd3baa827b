"""Reading an answer of POST /embeddings: one list of floats per text sent, all of one length.

Servers that embed are few and their answers vary (a base64 string where floats belong, Ollama's
native `{"embeddings": [...]}` at the OpenAI path, a proxy's HTML page), so an answer is checked
whole before any vector of it is used; what is wrong is said in `BadEmbeddings`.
"""

from __future__ import annotations

import math
from typing import Any

# Texts per request: small enough for local servers that embed a request in one batch of
# tokens (llama.cpp refuses an input larger than its batch), large enough to be few requests.
EMBED_BATCH = 32


class BadEmbeddings(ValueError):
    """An answer that cannot be used; its text says why, for the person reading the error."""


def read_vectors(answer: Any, count: int) -> list[list[float]]:
    """The vectors of one answer, in the order of the texts sent (OpenAI's `data[].index`)."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise BadEmbeddings("the answer has no list of embeddings (`data`)")
    if len(data) != count:
        raise BadEmbeddings(f"{count} texts were sent, {len(data)} embeddings came back")
    items = [item if isinstance(item, dict) else {} for item in data]
    indexes = [item.get("index") for item in items]
    if sorted(i for i in indexes if isinstance(i, int)) == list(range(count)):
        items = sorted(items, key=lambda item: int(item["index"]))
    vectors = []
    for item in items:
        vector = item.get("embedding")
        if not isinstance(vector, list) or not vector:
            raise BadEmbeddings("an embedding is not a list of numbers")
        # Checked by C loops (map, set, sum), not a Python loop per number: the background work
        # reads thousands of these while a chat may be answering in the same process, and a
        # per-number loop held the interpreter ~18 ms per batch of 32. A NaN or an infinity
        # makes the sum one of them.
        if not set(map(type, vector)) <= _NUMBER_TYPES or not _finite(vector):
            raise BadEmbeddings("an embedding holds something other than finite numbers")
        vectors.append(list(map(float, vector)))
    return vectors


_NUMBER_TYPES = {int, float}  # exactly: bool, a subclass of int, is not a number here


def _finite(vector: list[float]) -> bool:
    try:
        return math.isfinite(math.fsum(vector))
    except (ValueError, OverflowError):  # inf + -inf, or a sum past the largest float
        return False


def check_lengths(vectors: list[list[float]]) -> None:
    """Vectors of different lengths cannot be compared: the whole answer is refused."""
    if vectors and any(len(v) != len(vectors[0]) for v in vectors):
        raise BadEmbeddings("its vectors are not all of one length")
