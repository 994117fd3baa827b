"""The search query sanitiser: what a person types becomes literal terms.

User text never reaches FTS5 `MATCH` raw: `parse_terms` turns it into a list of literal terms
and `sanitize_query` quotes every one of them, so nothing a person types is FTS syntax.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_QUERY_CHARS = 2048
MAX_TERMS = 32  # a pasted paragraph should not become a 300-phrase AND

_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
# Characters that may join the parts of one term (docker-compose, v1.2, foo_bar, a/b, it's).
_JOINERS = "-._/'@#&"
# Scripts written without spaces between words: the word tokenizer would see a whole
# sentence as one token, so these go to the trigram index.
_UNSEGMENTED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u2fdf\u3040-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f]"
)


@dataclass(frozen=True)
class Term:
    text: str
    phrase: bool = False  # the person put it in double quotes

    @property
    def unsegmented(self) -> bool:
        return bool(_UNSEGMENTED.search(self.text))


def _clean(text: str) -> str:
    # Control, format and surrogate characters become spaces: they are never searchable and
    # a lone surrogate cannot even be encoded for SQLite.
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch for ch in text)


def _searchable(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _bare_terms(segment: str) -> list[str]:
    """Words outside quotes: anything but letters, digits and joiners separates them."""
    words: list[str] = []
    current: list[str] = []
    for ch in segment + " ":
        if ch.isalnum() or ch in _JOINERS:
            current.append(ch)
        elif current:
            words.append("".join(current).strip(_JOINERS))
            current = []
    return [w for w in words if _searchable(w)]


def parse_terms(text: str) -> list[Term]:
    """The literal terms of a query, in order, without duplicates."""
    text = _clean(text[:MAX_QUERY_CHARS])
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unbalanced, drop it
        parts[-2:] = [parts[-2] + parts[-1]]
    terms: list[Term] = []
    operators: list[Term] = []
    for i, part in enumerate(parts):
        if i % 2:
            phrase = " ".join(part.split())
            if _searchable(phrase):
                terms.append(Term(phrase, phrase=True))
            continue
        for word in _bare_terms(part):
            # Bare AND/OR/NOT/NEAR mean "operator" to the person typing them; terms are
            # already ANDed, so they are dropped — unless they are all there is.
            (operators if word in _OPERATORS else terms).append(Term(word))
    seen: set[str] = set()
    unique: list[Term] = []
    for term in terms or operators:
        key = term.text.casefold()
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique[:MAX_TERMS]


def quote_term(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def sanitize_query(text: str) -> str | None:
    """An FTS5 MATCH expression for `text` (every term a quoted phrase), or None."""
    terms = parse_terms(text)
    return " ".join(quote_term(t.text) for t in terms) if terms else None
