"""The search query sanitiser: what a person types becomes literal terms.

User text never reaches FTS5 `MATCH` raw: `parse_groups` turns it into alternatives (a bare `OR`
between words, as in Hermes and FTS5) of literal terms, and `match_expression` quotes every one
of them, so nothing a person types is FTS syntax. A term typed as `-word` or after a bare `NOT`
(FTS5's own operator, which Hermes passes through) is an exclusion: its alternative keeps only
the messages without it. An alternative needs a word to find: one of exclusions alone would be
"everything but", so it is refused with `exclusion_problem`'s message.
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
    exclude: bool = False  # typed as `-word` or `NOT word`: messages holding it are left out

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


def _bare_terms(segment: str) -> list[tuple[str, bool, bool]]:
    """Words outside quotes, each with whether a `*` ends it (a prefix) and a `-` starts it (an
    exclusion): anything but letters, digits and joiners separates them, so a `-` inside a word
    (docker-compose) joins. `%` is kept inside Chinese, Japanese… text, where the substring
    index matches it literally ("100%的"); elsewhere it separates words as the word index does."""
    words: list[tuple[str, bool, bool]] = []
    current: list[str] = []
    for ch in segment + " ":
        if ch.isalnum() or ch in _JOINERS or ch == "%":
            current.append(ch)
        elif current:
            word = "".join(current)
            parts = [word] if _UNSEGMENTED.search(word) else word.split("%")
            star = ch == "*" and not _UNSEGMENTED.search(word)  # a substring search has no prefixes
            minus = word.startswith("-")
            words += [(w.strip(_JOINERS), star and i == len(parts) - 1, minus) for i, w in enumerate(parts)]
            current = []
    return [(w, star, minus) for w, star, minus in words if _searchable(w)]


_MINUS_BEFORE_QUOTE = re.compile(r"(?:^|\s)-$")


def _tokens(text: str) -> list[Term | None]:
    """Terms in order, None where a bare OR stands between two of them."""
    text = _clean(text[:MAX_QUERY_CHARS])
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is unbalanced, drop it
        parts[-2:] = [parts[-2] + parts[-1]]
    tokens: list[Term | None] = []
    operators: list[Term] = []
    negate = False  # the next term follows a bare NOT, or a `-` right before its quote
    for i, part in enumerate(parts):
        if i % 2:
            phrase = " ".join(part.split())
            if _searchable(phrase):
                tokens.append(Term(phrase, phrase=True, exclude=negate))
            negate = False
            continue
        for word, prefix, minus in _bare_terms(part):
            # Bare AND/NEAR mean "operator" to the person typing them; terms are already ANDed,
            # so they are dropped — unless they are all there is. OR separates groups; NOT
            # leaves out the term after it.
            if word in _OPERATORS and not prefix and not minus:
                operators.append(Term(word))
                if word == "OR":
                    tokens.append(None)
                negate = word == "NOT"
            else:
                tokens.append(Term(word, prefix=prefix, exclude=minus or negate))
                negate = False
        negate = negate or bool(_MINUS_BEFORE_QUOTE.search(part))
    fallback: list[Term | None] = [*operators]
    return tokens if any(tokens) else fallback


def _unique(terms: list[Term]) -> list[Term]:
    seen: set[str] = set()
    unique: list[Term] = []
    for term in terms:  # `deploy`, `deploy*` and `-deploy` are three terms
        key = ("-" if term.exclude else "") + term.text.casefold() + ("*" if term.prefix else "")
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


def parse_groups(text: str) -> list[list[Term]]:
    """The query as alternatives (`A OR B`), each a list of terms that must all match, the
    terms to find first and its exclusions after them."""
    groups: list[list[Term]] = [[]]
    count = 0
    for token in _tokens(text):
        if token is None:
            groups.append([])
        elif count < MAX_TERMS:
            groups[-1].append(token)
            count += 1
    return [sorted(_unique(g), key=lambda t: t.exclude) for g in groups if g]


def parse_terms(text: str) -> list[Term]:
    """The literal terms to find of a query, in order, without duplicates (of every alternative;
    exclusions are in `parse_groups`)."""
    return _unique([t for t in _tokens(text) if t is not None and not t.exclude])[:MAX_TERMS]


def found(group: list[Term]) -> list[Term]:
    return [t for t in group if not t.exclude]


def excluded(group: list[Term]) -> list[Term]:
    return [t for t in group if t.exclude]


def has_exclusions(groups: list[list[Term]]) -> bool:
    return any(t.exclude for g in groups for t in g)


def exclusion_problem(text: str) -> str | None:
    """What is wrong with a query whose alternative only leaves words out (it would list every
    other message), or None."""
    for group in parse_groups(text):
        if not found(group):
            left_out = " ".join("-" + (quote_term(t.text) if t.phrase else t.text) for t in group)
            return (
                f"{left_out} only leaves words out, so it would list every other message: "
                "add a word to find, e.g. deploy -docker."
            )
    return None


def search_groups(text: str) -> list[list[Term]]:
    """The alternatives to search, or [] when there is nothing to find (no word, or an
    alternative of exclusions alone)."""
    return [] if exclusion_problem(text) else parse_groups(text)


def segmented(group: list[Term]) -> bool:
    """The word index answers this alternative whole: no term of it needs substring matching."""
    return not any(t.unsegmented for t in group)


def substring(group: list[Term]) -> bool:
    """The substring index answers this alternative: a term it must find is Chinese, Japanese…"""
    return any(t.unsegmented for t in found(group))


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


def _group_expression(group: list[Term]) -> str:
    wanted = _all_of([match_term(t) for t in found(group)])
    unwanted = [match_term(t) for t in excluded(group)]
    return f"({wanted}) NOT ({' OR '.join(unwanted)})" if unwanted else wanted


def match_expression(groups: list[list[Term]]) -> str:
    """An FTS5 MATCH expression: every term a quoted phrase, alternatives joined by OR, each
    alternative's exclusions after FTS5's NOT."""
    ands = [_group_expression(group) for group in groups]
    return ands[0] if len(ands) == 1 else " OR ".join(f"({a})" for a in ands)


def sanitize_query(text: str) -> str | None:
    """An FTS5 MATCH expression for `text` (every term a quoted phrase), or None."""
    groups = search_groups(text)
    return match_expression(groups) if groups else None


_PREFIX = re.compile(r"\w\*")
_EXCLUDE = re.compile(r"(?:^|\s)-\w")


def syntax_hint(text: str) -> str:
    """One line for a query that found nothing: what its syntax meant here, and what to try."""
    bare = " ".join(part for i, part in enumerate(text.split('"')) if i % 2 == 0)
    if _PREFIX.search(bare):
        return "word* finds words that start with it: try a shorter start, or A OR B for either."
    if _EXCLUDE.search(bare) or "NOT" in bare.split():
        return "-word leaves out messages with that word: try leaving out fewer, or A OR B for either."
    if "AND" in bare.split():
        return "Every word must appear already, so AND adds nothing: try fewer words, or A OR B for either."
    return 'Try fewer words, a "quoted phrase" for words side by side, or A OR B for either.'
