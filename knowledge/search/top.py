"""Top lists for common words (a textbook "champion list"): the best-ranked hits of a word, kept
so a search for it ranks a few hundred candidates instead of every hit. The policy, on both
databases; the SQL is knowledge/search/top_sqlite.py (SQLite FTS5, bm25) and
knowledge/search/top_postgres.py (PostgreSQL, ts_rank).

Ranking a word means scoring every hit before the best 20 are known: on FTS5 ~0.6 µs a hit on
this machine, 45 ms for a word in 70,000 of 1M messages — bounded by FTS5 itself (a docsize
lookup and a position list per hit); on PostgreSQL a ts_rank over each hit's vector. So for a
one-word query with more than COUNT_CAP hits, a list keeps the word's TOP_SIZE best hits by the
exact rank, and `upto`, the newest message id when the list was made. Hits are then ranked from:

- the list's first offset + limit (+ SLACK) entries that still match (deleted ones drop out),
- and every hit newer than `upto` (message ids are never reused),

both scored in the current state of the index: any other hit ranked below the whole list when
it was made, so the result is the exact order relative to the list. What a list can miss: an
older message edited into a better match (the product does not edit stored messages) and, with
bm25, drift as the collection's average message length changes — so a list is remade (one exact
ranking: the cost of the search without it) once the word has more than TAIL_MAX newer hits,
when entries a page needs were deleted, and by `rebuild_search_index` for every word with more
than COUNT_CAP hits. Pages beyond the list, phrases and several words are ranked over every hit,
as before; so are filtered searches whose page the list's hits cannot fill.

The list is keyed by the word's token as the index stores it (stemmed, case- and
diacritic-folded), read from the database's own tokenizer.
"""

from __future__ import annotations

from typing import Any, Protocol

from knowledge.search import results as search_results
from knowledge.search.results import RankedHit
from knowledge.search.sanitize import Term

TOP_SIZE = 200  # hits kept per word: ten pages of 20
SLACK = 20  # extra list entries read, so a few deleted messages do not force a remake
TAIL_MAX = 2000  # newer hits than this (ranked at each search, ~1 ms) and the list is remade


class TopLists(Protocol):
    """One database's SQL for the lists (`query`: what its word index matches one word with);
    each search backend (knowledge/search/backends.py) has one."""

    def token(self, cur: Any, text: str) -> str | None: ...
    def query_of(self, tok: str) -> str: ...
    def exact(self, cur: Any, query: str, n: int) -> list[RankedHit]: ...
    def candidates(self, cur: Any, query: str, upto: int, ids: list[int]) -> list[RankedHit]: ...
    def newest(self, cur: Any) -> int: ...
    def load(self, cur: Any, tok: str) -> tuple[int, list[int]] | None: ...
    def save(self, cur: Any, tok: str, upto: int, ids: list[int]) -> None: ...
    def clear(self, cur: Any) -> None: ...
    def common(self, cur: Any, cap: int) -> list[str]: ...


def _store(cur: Any, sql: TopLists, tok: str, query: str) -> list[RankedHit]:
    """Rank all hits of the word exactly and keep the best TOP_SIZE as its list."""
    upto = sql.newest(cur)
    ranked = sql.exact(cur, query, TOP_SIZE)
    sql.save(cur, tok, upto, [mid for mid, _ in ranked])
    return ranked


def _from_list(cur: Any, sql: TopLists, query: str, upto: int, ids: list[int], need: int) -> list[RankedHit] | None:
    """The best `need` hits from the list and the newer hits, or None when the list cannot tell."""
    wanted = ids[: need + SLACK]
    hits = sql.candidates(cur, query, upto, wanted)
    newer = sum(1 for mid, _ in hits if mid > upto)
    if newer > TAIL_MAX or len(hits) - newer < min(need, len(wanted)):  # too many new hits, or entries deleted
        return None
    return sorted(hits, key=lambda hit: hit[1])[:need]


def ranked_page(cur: Any, sql: TopLists, text: str, query: str, limit: int, offset: int) -> list[int] | None:
    """Ids of one page of hits for the one word `text` (matched by the backend's `query`), best
    first, through the word's list; None when the page is beyond it or the word has no single token."""
    need = offset + limit
    tok = sql.token(cur, text)
    if tok is None or need > TOP_SIZE:
        return None
    row = sql.load(cur, tok)
    hits = _from_list(cur, sql, query, row[0], row[1], need) if row else None
    if hits is None:
        hits = _store(cur, sql, tok, query)[:need]
    return [mid for mid, _ in hits[offset:need]]


def ranked(cur: Any, sql: TopLists, text: str, query: str, need: int | None = None) -> list[int] | None:
    """The word's best `need` hits; with None, as many as its list can tell (for filters and
    sessions, which may skip any of them) — a few deleted entries do not force a remake."""
    return ranked_page(cur, sql, text, query, max(1, TOP_SIZE - SLACK) if need is None else need, 0)


def rebuild_lists(cur: Any, sql: TopLists) -> int:
    """Make the list of every token with more than COUNT_CAP hits (after a bulk load or an index
    rebuild); returns how many. Only tokens that the backend's query of the token matches exactly
    get one here (a stemmer does not always return a stem unchanged); a search makes the others.
    Runs of Chinese, Japanese… text, which the word index keeps as tokens, get none: their
    searches go to the substring index."""
    sql.clear(cur)
    made = 0
    for tok in sql.common(cur, search_results.COUNT_CAP):
        if not Term(tok).unsegmented and sql.token(cur, tok) == tok:
            _store(cur, sql, tok, sql.query_of(tok))
            made += 1
    return made
