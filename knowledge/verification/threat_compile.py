r"""How the threat patterns are compiled so that scanning a text costs time linear in its length.

Python's `re` backtracks: a pattern tried at every position of a 64 KiB text is as slow as the
slowest failing attempt times the number of positions. These keep that bounded:

- every reading is lower-cased once and patterns are compiled without IGNORECASE (their
  literals lower-cased here), which lets the engine skip ahead to a pattern's first letters
  instead of attempting a full match at every position;
- a pattern's top-level alternatives become patterns of their own, for the same reason (a
  top-level `|` hides each alternative's first letters from the engine);
- each piece carries the literal words that any match must contain (`required`, worked out from
  the parsed pattern), and the further sets of which a match holds one word each (`also`: the
  verbs of "verb … file" beside the file names); a piece is run only on the readings holding a
  word of every set, and a plain note holds the words of only a few pieces;
- a piece opening with `\b(?:word|…)` is searched without the `\b`, which lets the engine skip to
  the words' first letters, and the `\b` is checked where it matches (`Piece.search`);
- the few words a pattern allows after its opening verbs may not be another of the verbs
  (`temper_first_gap`), so a text repeating a verb reads each word once, not four times over.

The patterns themselves keep every repetition between key words bounded (`{0,n}`), never an
open `[^>]*` or `.*` from a prefix that can repeat: knowledge/verification/threat_patterns.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

__all__ = ["Piece", "compile_specs", "constraints", "lower_source", "required", "split_top"]

_FLAGS = re.DOTALL


@dataclass(frozen=True)
class Piece:
    id: str
    reason: str
    rx: re.Pattern[str]
    # One of these is in every match (never holding a space); None: no word is required.
    needles: frozenset[str] | None
    # The pattern without its leading `\b`, when it has one: see `search`.
    unbounded: re.Pattern[str] | None = None
    # More sets of words a match needs besides `needles` (one of each): a pattern "verb … file"
    # is not run on a text holding the file names but none of the verbs.
    also: tuple[frozenset[str], ...] = ()

    def search(self, text: str) -> bool:
        r"""Whether the piece matches `text`: `rx.search`, faster.

        A pattern opening with `\b(?:word|word…)` is tried at every position of the text, as
        the engine cannot skip ahead past a `\b`; without it, it skips to the words' first
        letters. So the pattern without the `\b` is searched, and a match is kept only where
        the `\b` holds (a word character on one side of its start only); else the search goes
        on from the next position. Every match of `rx` is a match of the shorter pattern at the
        same place, so none is missed."""
        if self.unbounded is None:
            return self.rx.search(text) is not None
        pos = 0
        while (m := self.unbounded.search(text, pos)) is not None:
            at = m.start()
            if _is_word(text, at - 1) != _is_word(text, at) and self.rx.match(text, at):
                return True
            pos = at + 1
        return False


def _is_word(text: str, i: int) -> bool:
    # What `\w` is for a str pattern: a Unicode letter or digit, or "_".
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


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


def constraints(items: Any) -> list[frozenset[str]]:
    """Sets of strings, one per part of the sequence that spells something: every match holds
    at least one string of each set."""
    found: list[frozenset[str]] = []
    run: list[str] = []

    def consider(needles: frozenset[str] | None) -> None:
        if needles:
            found.append(needles)

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
    return found


def required(items: Any) -> frozenset[str] | None:
    """Strings of which every match contains at least one (the best such set), or None."""
    return max(constraints(items), key=_score, default=None)


# The few words allowed between key words (threat_patterns_intl's `_W`).
_WORD_GAP = r"(?:\S+\s+){0,4}?"


def _group_end(source: str, start: int) -> int:
    """The index of the `)` closing the group opened at `start` (escapes and classes skipped)."""
    depth, i = 0, start
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i += 1 + (source[i + 1 : i + 2] == "^")
            i += source[i : i + 1] == "]"
            while i < len(source) and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def temper_first_gap(part: str) -> str:
    r"""`\b(?:verb|verb…)\s+` + a few words: the words may not be another of the verbs.

    On a text repeating a verb, each occurrence would otherwise read the next four words, and
    try every noun after each. A match from one verb whose gap runs over a later verb implies a
    match from the later one (its gap is shorter), so nothing is lost; this is the `_gap` of
    threat_patterns.py for the word gaps."""
    if not part.startswith(r"\b(?:"):
        return part
    end = _group_end(part, 2)
    lead = r"\s+" + _WORD_GAP
    if end < 0 or not part.startswith(lead, end + 1):
        return part
    verbs = part[2 : end + 1]
    tempered = rf"\s+(?:(?!{verbs}\b)\S+\s+){{0,4}}?"
    return part[: end + 1] + tempered + part[end + 1 + len(lead) :]


def compile_specs(specs: list[tuple[str, str, str]]) -> list[Piece]:
    """Each spec's top-level alternatives, lower-cased and compiled, with the words each needs."""
    pieces: list[Piece] = []
    for pid, reason, source in specs:
        for part in map(temper_first_gap, split_top(lower_source(source))):
            unbounded = re.compile(part[2:], _FLAGS) if part.startswith(r"\b") else None
            sets = constraints(sre_parse.parse(part, _FLAGS))
            needles = max(sets, key=_score, default=None)
            also = tuple(dict.fromkeys(x for x in sets if x != needles))
            pieces.append(Piece(pid, reason, re.compile(part, _FLAGS), needles, unbounded, also))
    return pieces
