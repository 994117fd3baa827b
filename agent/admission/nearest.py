"""The existing entries nearest to a proposed one, by meaning when the model server can say.

The verifier is shown the entries a new one may repeat or contradict. With embeddings from the
configured server's `/v1/embeddings` (found out and remembered by the model client like its other
capabilities), entries are ranked by cosine similarity, so a paraphrase with no word in common is
still found; without them, by shared words (knowledge/verification/similarity.py). Vectors are kept
for the run, so a review embeds each entry once.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from agent.llm import LLMError
from knowledge.verification.similarity import terms

log = logging.getLogger(__name__)

Pair = tuple[str, str]  # (file, text)
Embed = Callable[[list[str]], "list[list[float]] | None"]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def held_share(text: str, candidate: str) -> float:
    """How much of `text`'s terms `candidate` holds (an entry against a long skill, where Jaccard
    would rank every skill near zero)."""
    wanted = terms(text)
    return len(wanted & terms(candidate)) / len(wanted) if wanted else 0.0


def _vectors(texts: list[str], llm: Any, cache: dict[str, list[float]]) -> dict[str, list[float]] | None:
    embed = getattr(llm, "embed", None)
    if embed is None:
        return None
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        try:
            found = embed(missing)
        except LLMError as exc:
            log.warning("embeddings failed, ranking by words: %s", exc)
            return None
        if found is None:  # the server has no embeddings (remembered by the client)
            return None
        cache.update(zip(missing, found, strict=True))
    return cache


def rank(
    text: str,
    candidates: Sequence[Pair],
    lexical: Callable[[str, str], float],
    *,
    llm: Any = None,
    cache: dict[str, list[float]] | None = None,
) -> list[Pair]:
    """`candidates`, nearest to `text` first: by embeddings when `llm` serves them, else `lexical`."""
    vectors = _vectors([text, *(c[1] for c in candidates)], llm, cache if cache is not None else {})
    if vectors is not None:
        return sorted(candidates, key=lambda c: -_cosine(vectors[text], vectors[c[1]]))
    return sorted(candidates, key=lambda c: -lexical(text, c[1]))
