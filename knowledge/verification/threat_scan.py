"""Threat scan for text that ends up in the system prompt (Hermes Agent's `_scan_memory_content`, made stricter).

Memory entries are rendered into every future system prompt, so a single poisoned entry is a
persistent prompt injection. Every memory write is scanned (a hit means nothing is written) and
every entry is scanned again on load (a hit is masked in the prompt only).

Two rules, and why:
- Hidden characters are refused outright, checked on the RAW text: what the model reads must be
  what the curator reads. That covers the 17 code points Hermes Agent's scan checks and every other
  format character (direction marks U+200E/U+200F/U+061C, soft hyphen, TAG characters used for
  "ASCII smuggling"), stray variation selectors and blank fillers such as U+3164
  (knowledge/verification/threat_normalize.py, `first_hidden`). Ordinary emoji and flag sequences pass.
- Patterns (English, seven other languages, and everything Hermes Agent refuses) run on every
  reading of the text `threat_normalize.readings` produces: NFKC and hidden characters removed,
  confusable letters folded, spread-out letters joined, base64/hex/percent runs decoded. All
  patterns are case-insensitive; each has a stable id (`category.name`) for messages and logs.

What it cannot promise is in the README's security model: it is a second line behind the
evidence rule, and a determined paraphrase in words no pattern knows still passes.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from knowledge.verification import threat_normalize
from knowledge.verification.threat_compile import Piece, compile_specs
from knowledge.verification.threat_normalize import MAX_SCAN_CHARS, char_label
from knowledge.verification.threat_patterns import _PATTERN_SPECS, COMPACT_SPECS
from knowledge.verification.threat_patterns_hermes import HERMES_SPECS
from knowledge.verification.threat_patterns_intl import INTL_SPECS

__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "PATTERN_IDS",
    "ThreatHit",
    "normalise",
    "scan",
    "scan_all",
    "masked",
    "scan_all_long",
    "scan_long",
]


@dataclass(frozen=True)
class ThreatHit:
    id: str
    reason: str


# The 17 code points Hermes Agent's scan checks (all refused; `first_hidden` refuses more).
INVISIBLE_CHARS: dict[str, str] = {
    ch: char_label(ch).split(" (", 1)[1].rstrip(")")
    for ch in "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
}

PIECES: list[Piece] = compile_specs([*_PATTERN_SPECS, *HERMES_SPECS, *INTL_SPECS])
COMPACT_PIECES: list[Piece] = compile_specs(COMPACT_SPECS)
PATTERN_IDS: frozenset[str] = frozenset(piece.id for piece in PIECES)
_MAX_NEEDLE = max(
    len(n) for piece in (*PIECES, *COMPACT_PIECES) for words in (piece.needles or (), *piece.also) for n in words
)
_CHUNK = 64
# Scans are remembered by a digest of the text, so a prompt build or a page view does not scan
# again what was scanned when it was written; a digest keeps the cache small whatever the texts.
_CACHE_SIZE = 4096
_cache: OrderedDict[bytes, tuple[ThreatHit, ...]] = OrderedDict()
_cache_lock = threading.Lock()


def normalise(text: str) -> str:
    """The plain reading patterns are matched against: NFKC, hidden characters removed, spaces collapsed."""
    return threat_normalize.base(text)


def invisible_hit(text: str) -> ThreatHit | None:
    ch = threat_normalize.first_hidden(text)
    if ch is None:
        return None
    code = f"U+{ord(ch):04X}"
    return ThreatHit(id=f"invisible-{code}", reason=f"contains the invisible character {char_label(ch)}")


def _distinct_parts(subject: str) -> str:
    """The distinct pieces of a reading, joined by spaces, for the needle checks.

    A needle never holds a space, so it is in a reading only if it is in one of its words; prose
    repeats its words, and a long run without spaces is cut into overlapping chunks (overlap
    longer than any needle) that repeat too, so a check reads far less than the reading.
    """
    parts: set[str] = set()
    for word in set(subject.split()):
        if len(word) <= _CHUNK:
            parts.add(word)
            continue
        for start in range(0, len(word), _CHUNK):
            parts.add(word[start : start + _CHUNK + _MAX_NEEDLE])
    return " ".join(parts)


def _pattern_hits(texts: list[str], blobs: list[str]) -> list[ThreatHit]:
    hits: list[ThreatHit] = []
    seen: set[str] = set()
    for table, subjects in ((PIECES, texts), (COMPACT_PIECES, blobs)):
        # Each reading is matched only by the pieces whose words it holds: a reading made by
        # folding or joining rarely holds a word the plain one does not, and is then skipped.
        haystacks = [_distinct_parts(s) for s in subjects]
        for piece in table:
            if piece.id in seen:
                continue
            needles = piece.needles
            for subject, haystack in zip(subjects, haystacks, strict=True):
                if needles is not None and not any(needle in haystack for needle in needles):
                    continue  # no match can lack all of these words
                if not all(any(word in haystack for word in words) for words in piece.also):
                    continue
                if piece.search(subject):
                    hits.append(ThreatHit(id=piece.id, reason=piece.reason))
                    seen.add(piece.id)
                    break
    return hits


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def scan_all(text: str) -> list[ThreatHit]:
    """Every rule that fires, pattern hits first (remembered per text)."""
    key = _digest(text)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return list(cached)
    texts, blobs, has_hidden = threat_normalize.read(text)
    hits = _pattern_hits(texts, blobs)
    # Only the first MAX_SCAN_CHARS were read for patterns; hidden characters are looked for in all of it.
    invisible = invisible_hit(text) if has_hidden or len(text) > MAX_SCAN_CHARS else None
    if invisible is not None:
        hits.append(invisible)
    with _cache_lock:
        _cache[key] = tuple(hits)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return hits


# Consecutive windows of a long text overlap by more than any pattern's reach, so a threat
# straddling a window's end is whole in the next one.
_OVERLAP = 4096


def scan_long(text: str) -> ThreatHit | None:
    """`scan` for a text of any length (a skill file), in overlapping windows of MAX_SCAN_CHARS."""
    if len(text) <= MAX_SCAN_CHARS:
        return scan(text)
    step = MAX_SCAN_CHARS - _OVERLAP
    for start in range(0, len(text), step):
        hit = scan(text[start : start + MAX_SCAN_CHARS])
        if hit is not None:
            return hit
    return None


def scan_all_long(text: str) -> list[ThreatHit]:
    """`scan_all` for a text of any length, in overlapping windows; each rule reported once."""
    if len(text) <= MAX_SCAN_CHARS:
        return scan_all(text)
    found: dict[str, ThreatHit] = {}
    for start in range(0, len(text), MAX_SCAN_CHARS - _OVERLAP):
        for hit in scan_all(text[start : start + MAX_SCAN_CHARS]):
            found.setdefault(hit.id, hit)
    return list(found.values())


def masked(text: str) -> str:
    """`text`, or a placeholder naming the threat in it: for past text shown to a model again
    (session recall, session_search), which must not carry an injection into a new turn."""
    hit = scan_long(text)
    return text if hit is None else f"[withheld: this text matches threat pattern '{hit.id}' ({hit.reason})]"


def forget_cached() -> None:
    """Drop the remembered results (a benchmark timing first scans)."""
    with _cache_lock:
        _cache.clear()


def scan(text: str) -> ThreatHit | None:
    """The first threat in `text`, or None if it is safe to put in a prompt.

    Pattern hits are reported before hidden characters because they say what the text was
    trying to do; a zero-width-obfuscated injection still names its pattern.
    """
    hits = scan_all(text)
    return hits[0] if hits else None
