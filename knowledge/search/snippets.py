"""Search snippets built in Python for the word index.

FTS5's snippet() re-runs the MATCH and reads each row back through the external-content view,
which at a million messages cost a fifth of a search. The page's message text is already in
hand, so the snippet is cut here instead, highlighting exactly the words the index matched:
the same unicode61 tokens (letters and digits; case and diacritics folded) reduced by the same
Porter stemmer the index uses. When no word of the content matches (the hit was in a tool
name or tool arguments), the caller falls back to FTS5's snippet().
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from knowledge.search.stemming import stemmer

HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
ELLIPSIS = "…"

_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=65536)
def fold(token: str) -> str:
    if token.isascii():
        return token.lower()
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    folded = fold(token)
    # SQLite's porter tokenizer leaves one- and two-letter tokens alone ("is", "as", "os").
    return folded if len(folded) <= 2 else str(stemmer("porter").stemWord(folded))


def query_stems(terms: Iterable[str]) -> frozenset[str]:
    return frozenset(stem(w) for t in terms for w in _WORD.findall(t))


def _could_match(folded: str, prefixes: tuple[str, ...]) -> bool:
    # A Porter stem keeps the word's start except, at most, its last letter (happy -> happi),
    # so a token that does not start like any query stem cannot match: skip stemming it.
    return folded.startswith(prefixes)


def stem_snippet(text: str, stems: frozenset[str], tokens: int = 16) -> str | None:
    """About `tokens` words around the densest run of matches, matches wrapped in
    HIGHLIGHT_START/END; None when no word of `text` matches."""
    if not stems:
        return None
    text = " ".join(text.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "").split())
    prefixes = tuple(s[: max(1, len(s) - 1)] for s in stems)
    spans: list[tuple[int, int]] = []
    hits: list[int] = []
    for m in _WORD.finditer(text):
        word = m.group()
        if _could_match(fold(word), prefixes) and stem(word) in stems:
            hits.append(len(spans))
        spans.append((m.start(), m.end()))
    if not hits:
        return None
    start = _best_window(hits, len(spans), tokens)
    end = min(len(spans), start + tokens)
    lo = 0 if start == 0 else spans[start][0]
    hi = len(text) if end == len(spans) else spans[end - 1][1]
    out: list[str] = [ELLIPSIS] if start > 0 else []
    pos = lo
    for i in hits:
        if start <= i < end:
            a, b = spans[i]
            out += [text[pos:a], HIGHLIGHT_START, text[a:b], HIGHLIGHT_END]
            pos = b
    out.append(text[pos:hi])
    if end < len(spans):
        out.append(ELLIPSIS)
    return "".join(out)


def _best_window(hits: list[int], n_tokens: int, width: int) -> int:
    """The window start holding the most matches, leading with a little context."""
    best, best_count = 0, -1
    for h in hits:
        start = max(0, min(h - width // 4, n_tokens - width))
        count = sum(1 for x in hits if start <= x < start + width)
        if count > best_count:
            best, best_count = start, count
    return best


def snippet_segments(snippet: str) -> list[tuple[str, bool]]:
    """[(text, highlighted)] for templates, which escape the text and add the markup."""
    segments: list[tuple[str, bool]] = []
    for i, chunk in enumerate(re.split(f"[{HIGHLIGHT_START}{HIGHLIGHT_END}]", snippet)):
        if chunk:
            segments.append((chunk, i % 2 == 1))
    return segments


def snippet_to_text(snippet: str, start: str = "**", end: str = "**") -> str:
    return snippet.replace(HIGHLIGHT_START, start).replace(HIGHLIGHT_END, end)


def substring_snippet(text: str, needles: Sequence[str], width: int = 60) -> str:
    """A snippet around the first occurrence of any needle (for substring-only queries)."""
    text = " ".join(text.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "").split())
    folded = text.casefold()
    hits = [(folded.find(n.casefold()), n) for n in needles if n]
    hits = [(pos, n) for pos, n in hits if pos >= 0]
    if not hits:
        return text[: 2 * width] + (ELLIPSIS if len(text) > 2 * width else "")
    first = min(pos for pos, _ in hits)
    lo, hi = max(0, first - width), min(len(text), first + width)
    window = text[lo:hi]
    pattern = re.compile("|".join(re.escape(n) for _, n in hits), re.IGNORECASE)
    marked = pattern.sub(lambda m: HIGHLIGHT_START + m.group(0) + HIGHLIGHT_END, window)
    return (ELLIPSIS if lo else "") + marked + (ELLIPSIS if hi < len(text) else "")
