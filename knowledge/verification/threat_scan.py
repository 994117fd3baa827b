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

import re
from dataclasses import dataclass

from knowledge.verification import threat_normalize
from knowledge.verification.threat_normalize import MAX_SCAN_CHARS, char_label
from knowledge.verification.threat_patterns import _PATTERN_SPECS, COMPACT_SPECS
from knowledge.verification.threat_patterns_intl import INTL_SPECS

__all__ = ["INVISIBLE_CHARS", "MAX_SCAN_CHARS", "PATTERN_IDS", "ThreatHit", "normalise", "scan", "scan_all"]


@dataclass(frozen=True)
class ThreatHit:
    id: str
    reason: str


# The 17 code points Hermes Agent's scan checks (all refused; `first_hidden` refuses more).
INVISIBLE_CHARS: dict[str, str] = {
    ch: char_label(ch).split(" (", 1)[1].rstrip(")")
    for ch in "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
}

_FLAGS = re.IGNORECASE | re.DOTALL
PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (pid, reason, re.compile(rx, _FLAGS)) for pid, reason, rx in [*_PATTERN_SPECS, *INTL_SPECS]
]
COMPACT_PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (pid, reason, re.compile(rx, _FLAGS)) for pid, reason, rx in COMPACT_SPECS
]
PATTERN_IDS: frozenset[str] = frozenset(pid for pid, _, _ in PATTERNS)


def normalise(text: str) -> str:
    """The plain reading patterns are matched against: NFKC, hidden characters removed, spaces collapsed."""
    return threat_normalize.base(text)


def invisible_hit(text: str) -> ThreatHit | None:
    ch = threat_normalize.first_hidden(text)
    if ch is None:
        return None
    code = f"U+{ord(ch):04X}"
    return ThreatHit(id=f"invisible-{code}", reason=f"contains the invisible character {char_label(ch)}")


def _pattern_hits(text: str, first_only: bool) -> list[ThreatHit]:
    texts, blobs = threat_normalize.readings(text)
    hits: list[ThreatHit] = []
    seen: set[str] = set()
    for table, subjects in ((PATTERNS, texts), (COMPACT_PATTERNS, blobs)):
        for pid, reason, rx in table:
            if pid in seen or not any(rx.search(s) for s in subjects):
                continue
            hits.append(ThreatHit(id=pid, reason=reason))
            seen.add(pid)
            if first_only:
                return hits
    return hits


def scan_all(text: str) -> list[ThreatHit]:
    """Every rule that fires, pattern hits first."""
    hits = _pattern_hits(text, first_only=False)
    invisible = invisible_hit(text)
    if invisible is not None:
        hits.append(invisible)
    return hits


def scan(text: str) -> ThreatHit | None:
    """The first threat in `text`, or None if it is safe to put in a prompt.

    Pattern hits are reported before hidden characters because they say what the text was
    trying to do; a zero-width-obfuscated injection still names its pattern.
    """
    hits = _pattern_hits(text, first_only=True)
    return hits[0] if hits else invisible_hit(text)
