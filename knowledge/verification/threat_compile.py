"""How the threat patterns are compiled so that scanning a text costs time linear in its length.

Python's `re` backtracks: a pattern tried at every position of a 64 KiB text is as slow as the
slowest failing attempt times the number of positions. Three things keep that bounded:

- every reading is lower-cased once and patterns are compiled without IGNORECASE (their
  literals lower-cased here), which lets the engine skip ahead to a pattern's first letters
  instead of attempting a full match at every position;
- a pattern's top-level alternatives become patterns of their own, for the same reason (a
  top-level `|` hides each alternative's first letters from the engine);
- each piece carries the literal words that any match must contain (`required`, worked out from
  the parsed pattern); a piece whose words appear in none of the readings is not run at all, and
  a plain note holds the words of only a few pieces.

The patterns themselves keep every repetition between key words bounded (`{0,n}`), never an
open `[^>]*` or `.*` from a prefix that can repeat: knowledge/verification/threat_patterns.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

__all__ = ["Piece", "compile_specs", "lower_source", "required", "split_top"]

_FLAGS = re.DOTALL


@dataclass(frozen=True)
class Piece:
    id: str
    reason: str
    rx: re.Pattern[str]
    # One of these is in every match (never holding a space); None: no word is required.
    needles: frozenset[str] | None


def lower_source(source: str) -> str:
    """The pattern with its literal letters lower-cased; escapes (`\\S`, `\\W`, `\\U000E0020`) kept."""
    out: list[str] = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            out.append(source[i : i + 2])
            i += 2
            continue
        out.append(ch.lower())
        i += 1
    return "".join(out)


def split_top(source: str) -> list[str]:
    """The pattern's top-level alternatives (`a|b(c|d)` -> `a`, `b(c|d)`)."""
    parts: list[str] = []
    depth = start = i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # skip the class whole; a `]` first in it is a member, not its end
            i += 1
            i += source[i : i + 1] == "^"
            i += source[i : i + 1] == "]"
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
        i += 1
    parts.append(source[start:])
    return parts


def _score(needles: frozenset[str] | None) -> tuple[int, int]:
    """Better needles are longer (rarer in prose) and fewer."""
    if not needles:
        return (0, 0)
    return (min(len(n) for n in needles), -len(needles))


def _class_needles(av: list[tuple[Any, Any]]) -> frozenset[str] | None:
    if len(av) <= 3 and all(op is sre_c.LITERAL for op, _ in av):
        chars = frozenset(chr(int(str(code))) for _, code in av)
        return None if any(ch.isspace() for ch in chars) else chars
    return None


def _node_needles(op: object, av: Any) -> frozenset[str] | None:
    if op is sre_c.SUBPATTERN:
        return required(av[-1])
    if op is sre_c.ATOMIC_GROUP:
        return required(av)
    if op is sre_c.BRANCH:
        found: set[str] = set()
        for alternative in av[1]:
            needles = required(alternative)
            if needles is None:
                return None
            found |= needles
        return frozenset(found)
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return required(sub) if low >= 1 else None
    if op is sre_c.IN:
        return _class_needles(av)
    return None  # anchors, lookarounds, categories, `.`: nothing a match must spell


def required(items: Any) -> frozenset[str] | None:
    """Strings of which every match contains at least one (the best such set), or None."""
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(needles: frozenset[str] | None) -> None:
        nonlocal best
        if needles and _score(needles) > _score(best):
            best = needles

    for op, av in items:
        if op is sre_c.LITERAL and not chr(av).isspace():
            run.append(chr(av))
            continue
        if run:
            consider(frozenset({"".join(run)}))
            run = []
        consider(_node_needles(op, av))
    if run:
        consider(frozenset({"".join(run)}))
    return best


def compile_specs(specs: list[tuple[str, str, str]]) -> list[Piece]:
    """Each spec's top-level alternatives, lower-cased and compiled, with the words each needs."""
    pieces: list[Piece] = []
    for pid, reason, source in specs:
        for part in split_top(lower_source(source)):
            pieces.append(Piece(pid, reason, re.compile(part, _FLAGS), required(sre_parse.parse(part, _FLAGS))))
    return pieces
