"""Sentences and clauses of a message, and the ones a quote sits in.

Read by the removal check (knowledge/verification/removal.py) and by the signals the verifier is
given about a learned write (agent/admission/signals.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knowledge.verification.documents import Located
from knowledge.verification.evidence import fold

SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；…])|\n+")
CLAUSE_END = re.compile(
    r"(?<=[,;:，；：、])\s*|\s+(?=(?:but|although|though|whereas|while|except)\b)|(?=但是|可是|不过|但)"
)


def pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [p for p in pattern.split(text) if p and p.strip()]


def covering(parts: Sequence[str], quote: str) -> list[str]:
    """The parts (sentences, clauses) that the quote overlaps, or all of them if it cannot be placed."""
    folded_parts = [fold(p) for p in parts]
    joined = " ".join(folded_parts)
    at = joined.find(fold(quote))
    if at < 0:
        return list(parts)
    end, offset, found = at + len(fold(quote)), 0, []
    for part, folded in zip(parts, folded_parts, strict=True):
        if offset <= end and at <= offset + len(folded):
            found.append(part)
        offset += len(folded) + 1
    return found


def sentences(text: str) -> list[str]:
    return pieces(text, SENTENCE_END)


def sentences_of(located: Located) -> tuple[list[str], list[str], str]:
    """(the sentences holding the quote, the clauses holding it, the sentence after)."""
    sentences = pieces(located.text, SENTENCE_END)
    held = covering(sentences, located.quote)
    after = ""
    if held and held[-1] in sentences:
        nxt = sentences.index(held[-1]) + 1
        after = sentences[nxt] if nxt < len(sentences) else ""
    clauses: list[str] = []
    for sentence in held:
        clauses += covering(pieces(sentence, CLAUSE_END), located.quote)
    return held, clauses or held, after
