"""Near-duplicate detection for memory entries and skills (no duplicates, visible conflicts).

Two texts are near duplicates when their sets of terms — case folded, punctuation dropped, words
reduced to their stems, a few filler words ignored, and each CJK character a term of its own
(Chinese has no spaces to split on) — overlap almost entirely (Jaccard index >= THRESHOLD).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knowledge.search.stemming import stemmer

THRESHOLD = 0.75
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Words that say nothing about the fact itself; "user" because entries are often phrased
# "User prefers X" or "Prefers X" for the same fact. CJK particles likewise.
_FILLER_WORDS = (
    "a an the is are was be to of and or in on for with at by it its this that user user's users "
    "he she they them their his her i me my we our you your"
)
_FILLER = frozenset(_FILLER_WORDS.split(" ")) | frozenset("的了是在和也都很")


def terms(text: str) -> frozenset[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    found: set[str] = set()
    for word in _WORD.findall(text):
        if _CJK.search(word):
            found.update(ch for ch in word if _CJK.match(ch) and ch not in _FILLER)
            rest = _CJK.sub(" ", word).split()
            found.update(stemmer("english").stemWords([w for w in rest if w not in _FILLER]))
        elif word not in _FILLER:
            found.add(stemmer("english").stemWord(word))
    return frozenset(found)


def similarity(a: str, b: str) -> float:
    ta, tb = terms(a), terms(b)
    if not ta or not tb:
        return 1.0 if fold_equal(a, b) else 0.0
    return len(ta & tb) / len(ta | tb)


def fold_equal(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


@dataclass(frozen=True)
class Match:
    text: str
    where: str  # e.g. "memory" / "user" / a skill's name
    score: float


def nearest(text: str, candidates: Iterable[tuple[str, str]]) -> Match | None:
    """The most similar (where, candidate) at or above THRESHOLD, if any."""
    best: Match | None = None
    for where, candidate in candidates:
        score = similarity(text, candidate)
        if score >= THRESHOLD and (best is None or score > best.score):
            best = Match(candidate, where, score)
    return best


def duplicate_pairs(entries: Sequence[tuple[str, str]]) -> list[tuple[Match, Match]]:
    """Pairs of existing entries that look like the same fact, for the memory page."""
    pairs: list[tuple[Match, Match]] = []
    for i, (where_a, a) in enumerate(entries):
        for where_b, b in entries[i + 1 :]:
            score = similarity(a, b)
            if score >= THRESHOLD:
                pairs.append((Match(a, where_a, score), Match(b, where_b, score)))
    return pairs
