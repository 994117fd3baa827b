"""Near-duplicate detection for memory entries and skills (no duplicates, visible conflicts).

Two texts are near duplicates when their sets of terms — case folded, punctuation dropped, words
reduced to their stems, a few filler words ignored, and each CJK character a term of its own
(Chinese has no spaces to split on) — overlap almost entirely (Jaccard index >= THRESHOLD), and they
name the same things: two entries that differ in a name, number, version, host, path or date are two
facts ("server A runs nginx" / "server B runs nginx"), never duplicates.
"""

from __future__ import annotations

import functools
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


# Cached: the memory page compares every pair of entries, and stemming each text once per pair
# made a page of 76 long entries take seconds.
@functools.lru_cache(maxsize=4096)
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


# A token that names one thing: has a digit or a path/host/version separator inside, is a single
# capital letter ("server B"), or is capitalised in mid-sentence (a proper name).
_NAMED = re.compile(r"[\w./:@\\-]+")
_NAME_LIKE = re.compile(r"\d|\w[./:@\\]\w")


def identifiers(text: str) -> frozenset[str]:
    """The names, numbers, versions, hosts, paths and dates of a text, case folded."""
    text = unicodedata.normalize("NFKC", text)
    found: set[str] = set()
    first = True
    for raw in _NAMED.findall(text):
        tok = raw.strip(".:-/\\")
        if not tok:
            continue
        capital = tok[0].isupper() and not first
        if _NAME_LIKE.search(tok) or (len(tok) == 1 and tok.isupper() and tok != "I") or capital:
            found.add(tok.casefold())
        first = raw.endswith(".")
    return frozenset(found)


def said_words(text: str) -> set[str]:
    """Every word of a text, case folded, both whole (docker-compose, /etc/x.conf) and in pieces."""
    words = {w.strip(".:-/\\") for w in _NAMED.findall(unicodedata.normalize("NFKC", text).casefold())}
    return words | set(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def name_different_things(a: str, b: str) -> bool:
    """Whether one text names something (a name, number, version, host, path, date) the other does not."""
    said_a, said_b = said_words(a), said_words(b)
    return any(i not in said_b for i in identifiers(a)) or any(i not in said_a for i in identifiers(b))


def near_duplicate(a: str, b: str) -> bool:
    return similarity(a, b) >= THRESHOLD and not name_different_things(a, b)


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
        if score >= THRESHOLD and not name_different_things(text, candidate) and (best is None or score > best.score):
            best = Match(candidate, where, score)
    return best


def duplicate_pairs(entries: Sequence[tuple[str, str]]) -> list[tuple[Match, Match]]:
    """Pairs of existing entries that look like the same fact, for the memory page."""
    pairs: list[tuple[Match, Match]] = []
    for i, (where_a, a) in enumerate(entries):
        for where_b, b in entries[i + 1 :]:
            score = similarity(a, b)
            if score >= THRESHOLD and not name_different_things(a, b):
                pairs.append((Match(a, where_a, score), Match(b, where_b, score)))
    return pairs
