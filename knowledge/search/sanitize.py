"""The search query sanitiser: what a person types becomes literal terms.

User text never reaches FTS5 `MATCH` raw: `parse_groups` turns it into alternatives (a bare `OR`
between words, as in Hermes and FTS5) of literal terms, and `match_expression` quotes every one
of them, so nothing a person types is FTS syntax.
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
    prefix: bool = False  # typed as `word*`: words that start with it

    @property
    def prefix_filter(self) -> str | None:
        """The folded start a matching word must have, for the backends' exact check of a prefix
        term (their indexes stem the prefix and are asked a little more widely); None when the
        index's answer is used as it is."""
        return self.text.lower() if self.prefix and self.text.isascii() else None

    @property
    def unsegmented(self) -> bool:
        return bool(_UNSEGMENTED.search(self.text))


def _clean(text: str) -> str:
    # Control, format and surrogate characters become spaces: they are never searchable and
    # a lone surrogate cannot even be encoded for SQLite.
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch for ch in text)


def _searchable(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _bare_terms(segment: str) -> list[tuple[str, bool]]:
    """Words outside quotes, each with whether a `*` ends it (a prefix): anything but letters,
    digits and joiners separates them. `%` is kept inside Chinese, Japanese… text, where the
    substring index matches it literally ("100%的"); elsewhere it separates words as the word
    index does."""
    words: list[tuple[str, bool]] = []
    current: list[str] = []
    for ch in segment + " ":
        if ch.isalnum() or ch in _JOINERS or ch == "%":
            current.append(ch)
        elif current:
            word = "".join(current)
            parts = [word] if _UNSEGMENTED.search(word) else word.split("%")
            star = ch == "*" and not _UNSEGMENTED.search(word)  # a substring search has no prefixes
            words += [(w.strip(_JOINERS), star and i == len(parts) - 1) for i, w in enumerate(parts)]
            current = []
    return [(w, star) for w, star in words if _searchable(w)]


def _tokens(text: str) -> list[Term | None]:
    """Terms in order, None where a bare OR stands between two of them."""
    text = _clean(text[:MAX_QUERY_CHARS])
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unbalanced, drop it
        parts[-2:] = [parts[-2] + parts[-1]]
    tokens: list[Term | None] = []
    operators: list[Term] = []
    for i, part in enumerate(parts):
        if i % 2:
            phrase = " ".join(part.split())
            if _searchable(phrase):
                tokens.append(Term(phrase, phrase=True))
            continue
        for word, prefix in _bare_terms(part):
            # Bare AND/NOT/NEAR mean "operator" to the person typing them; terms are already
            # ANDed, so they are dropped — unless they are all there is. OR separates groups.
            if word in _OPERATORS and not prefix:
                operators.append(Term(word))
                if word == "OR":
                    tokens.append(None)
            else:
                tokens.append(Term(word, prefix=prefix))
    fallback: list[Term | None] = [*operators]
    return tokens if any(tokens) else fallback


def _unique(terms: list[Term]) -> list[Term]:
    seen: set[str] = set()
    unique: list[Term] = []
    for term in terms:  # `deploy` and `deploy*` are two terms
        key = term.text.casefold() + ("*" if term.prefix else "")
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


def parse_groups(text: str) -> list[list[Term]]:
    """The query as alternatives (`A OR B`), each a list of terms that must all match."""
    groups: list[list[Term]] = [[]]
    count = 0
    for token in _tokens(text):
        if token is None:
            groups.append([])
        elif count < MAX_TERMS:
            groups[-1].append(token)
            count += 1
    return [_unique(g) for g in groups if g]


def parse_terms(text: str) -> list[Term]:
    """The literal terms of a query, in order, without duplicates (of every alternative)."""
    return _unique([t for t in _tokens(text) if t is not None])[:MAX_TERMS]


def quote_term(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def match_term(term: Term) -> str:
    """A term for FTS5 MATCH: a quoted phrase, or a prefix query. The porter tokenizer stems the
    prefix too ("deploy" -> "deploi", which "deployment", indexed as "deploy", does not start
    with), so a prefix is also asked one letter shorter; the backends then keep only the words
    that really start with it (Term.prefix_filter)."""
    quoted = quote_term(term.text)
    if not term.prefix:
        return quoted
    if len(term.text) < 4 or not term.text.isalnum():
        return quoted + "*"
    return f"({quoted}* OR {quote_term(term.text[:-1])}*)"


def _all_of(parts: list[str]) -> str:
    # FTS5 reads side by side as AND between phrases only: a parenthesised part needs the word.
    return (" AND " if any(p.startswith("(") for p in parts) else " ").join(parts)


def match_expression(groups: list[list[Term]]) -> str:
    """An FTS5 MATCH expression: every term a quoted phrase, alternatives joined by OR."""
    ands = [_all_of([match_term(t) for t in group]) for group in groups]
    return ands[0] if len(ands) == 1 else " OR ".join(f"({a})" for a in ands)


def sanitize_query(text: str) -> str | None:
    """An FTS5 MATCH expression for `text` (every term a quoted phrase), or None."""
    groups = parse_groups(text)
    return match_expression(groups) if groups else None


_PREFIX = re.compile(r"\w\*")
_EXCLUDE = re.compile(r"(?:^|\s)-\w")


def syntax_hint(text: str) -> str:
    """One line for a query that found nothing: what its syntax meant here, and what to try."""
    bare = " ".join(part for i, part in enumerate(text.split('"')) if i % 2 == 0)
    if _PREFIX.search(bare):
        return "word* finds words that start with it: try a shorter start, or A OR B for either."
    if _EXCLUDE.search(bare):
        return "A leading - does not leave a word out here: every word you type must appear. Try fewer words."
    if "AND" in bare.split():
        return "Every word must appear already, so AND adds nothing: try fewer words, or A OR B for either."
    return 'Try fewer words, a "quoted phrase" for words side by side, or A OR B for either.'
