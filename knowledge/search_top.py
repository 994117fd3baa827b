"""Top lists for common words on SQLite (a textbook "champion list"): the best-ranked hits of a
word, kept so a search for it ranks a few hundred candidates instead of every hit.

FTS5 computes bm25 for every hit before it can return the best 20: ~0.6 µs a hit on this
machine, 45 ms for a word in 70,000 of 1M messages — bounded by FTS5 itself (a docsize lookup
and a position list per hit; the count, the snippets and the message rows cost < 1 ms; the
connection already maps the file and caches 64 MB; merging the index's segments changes
nothing). So for a one-word query with more than COUNT_CAP hits, the table
`knowledge_message_fts_top` (knowledge 0012) keeps the word's TOP_SIZE best hits by exact bm25,
and `upto`, the newest message id when the list was made. Hits are then ranked from:

- the list's first offset + limit (+ SLACK) entries that still match (deleted ones drop out),
- and every hit newer than `upto` (message ids are never reused),

both scored by bm25 in one pass over the word's hits, in the current state of the index: any
other hit ranked below the whole list when it was made, so the result is the exact order
relative to the list. What a list can miss: an older message edited into a better match (the
product does not edit stored messages) and drift as the collection's average message length
changes — so a list is remade (one exact ranking: the cost of the search without it) once the
word has more than TAIL_MAX newer hits, when entries a page needs were deleted, and by
`rebuild_search_index` for every word with more than COUNT_CAP hits. Pages beyond the list,
phrases and several words are ranked over every hit, as before; so are filtered searches
(knowledge/search.py) whose page the list's hits cannot fill.

The list is keyed by the word's token as the index stores it (porter-stemmed, case- and
diacritic-folded), read from FTS5's own tokenizer through a temporary table of the connection —
a Python stemmer disagrees with SQLite's porter on words like "as" or "technology".
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db import OperationalError, transaction

from knowledge import search_results
from knowledge.search_plan import FTS_TABLE

log = logging.getLogger(__name__)

TOP_TABLE = f"{FTS_TABLE}_top"
TOKENIZE = "porter unicode61 remove_diacritics 2"  # the word index's (knowledge 0003); a test checks they agree
TOP_SIZE = 200  # hits kept per word: ten pages of 20
SLACK = 20  # extra list entries read, so a few deleted messages do not force a remake
TAIL_MAX = 2000  # newer hits than this (ranked at each search, ~1 ms) and the list is remade
_TOKENS = "knowledge_query_tokens"  # temp: FTS5's tokenizer, applied to query words
_ROWS = "knowledge_fts_rows"  # temp: the word index's per-token hit counts (fts5vocab 'row')


def token(cur: Any, text: str) -> str | None:
    """The one token the word index stores for `text`, or None when it makes 0 or 2+ tokens."""
    # Temporary tables live and die with the connection (and a rolled-back transaction): made when missing.
    cur.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOKENS} USING fts5(t, tokenize='{TOKENIZE}')")
    cur.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOKENS}_v USING fts5vocab(temp, {_TOKENS}, instance)")
    cur.execute(f"INSERT INTO temp.{_TOKENS}(rowid, t) VALUES (1, %s)", [text])
    cur.execute(f"SELECT term FROM temp.{_TOKENS}_v LIMIT 2")
    found = [term for (term,) in cur.fetchall()]
    cur.execute(f"DELETE FROM temp.{_TOKENS}")
    return found[0] if len(found) == 1 else None


def _exact(cur: Any, match: str, n: int, after: int = 0) -> list[tuple[int, float]]:
    """The best `n` hits newer than message `after`, with their bm25 (lower is better)."""
    cur.execute(
        f"SELECT rowid, bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s AND rowid > %s "
        "ORDER BY score LIMIT %s",
        [match, after, n],
    )
    return [(rowid, score) for rowid, score in cur.fetchall()]


def _store(cur: Any, tok: str, match: str) -> list[tuple[int, float]]:
    """Rank all hits of the word exactly and keep the best TOP_SIZE as its list."""
    cur.execute(f"SELECT max(rowid) FROM {FTS_TABLE}")
    upto = cur.fetchone()[0] or 0
    ranked = _exact(cur, match, TOP_SIZE)
    try:
        with transaction.atomic():
            cur.execute(
                f"INSERT OR REPLACE INTO {TOP_TABLE} (token, upto, ids) VALUES (%s, %s, %s)",
                [tok, upto, json.dumps([rowid for rowid, _ in ranked])],
            )
    except OperationalError as exc:
        # A search inside a read transaction that another connection has since written past
        # cannot write (SQLite's snapshot rule): this page is still exact, the next search keeps the list.
        log.debug("top list of %r not stored: %s", tok, exc)
    return ranked


def _from_list(cur: Any, match: str, upto: int, ids: list[int], need: int) -> list[tuple[int, float]] | None:
    """The best `need` hits from the list and the newer hits, or None when the list cannot tell.

    One pass over the word's hits in rowid order, bm25 only for the list's entries and the new
    hits: an FTS5 lookup by rowid would recompute the word's idf (a pass over all its hits) for
    each entry."""
    wanted = ids[: need + SLACK]
    cur.execute(
        f"SELECT rowid, bm25({FTS_TABLE}) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
        "AND (rowid > %s OR rowid IN (SELECT value FROM json_each(%s)))",
        [match, upto, json.dumps(wanted)],
    )
    hits = [(rowid, score) for rowid, score in cur.fetchall()]
    newer = sum(1 for rowid, _ in hits if rowid > upto)
    if newer > TAIL_MAX or len(hits) - newer < min(need, len(wanted)):  # too many new hits, or entries deleted
        return None
    return sorted(hits, key=lambda hit: (hit[1], hit[0]))[:need]


def ranked_page(cur: Any, text: str, match: str, limit: int, offset: int) -> list[int] | None:
    """Ids of one page of hits for the one word `text` (MATCH expression `match`), best first by
    bm25, through the word's list; None when the page is beyond it or the word has no single token."""
    need = offset + limit
    tok = token(cur, text)
    if tok is None or need > TOP_SIZE:
        return None
    cur.execute(f"SELECT upto, ids FROM {TOP_TABLE} WHERE token = %s", [tok])
    row = cur.fetchone()
    hits = _from_list(cur, match, row[0], json.loads(row[1]), need) if row else None
    if hits is None:
        hits = _store(cur, tok, match)[:need]
    return [rowid for rowid, _ in hits[offset:need]]


def ranked(cur: Any, text: str, match: str) -> list[int] | None:
    """As many of the word's best hits as its list can tell (for filters and sessions, which may
    skip any of them); a few deleted entries do not force a remake."""
    return ranked_page(cur, text, match, max(1, TOP_SIZE - SLACK), 0)


def rebuild_lists(cur: Any) -> int:
    """Make the list of every token with more than COUNT_CAP hits (after a bulk load or an index
    rebuild); returns how many. Only tokens that a quoted query matches exactly get one here
    (the porter stemmer does not always return a stem unchanged); a search makes the others."""
    cur.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_ROWS} USING fts5vocab(main, {FTS_TABLE}, row)")
    cur.execute(f"DELETE FROM {TOP_TABLE}")
    cur.execute(f"SELECT term FROM temp.{_ROWS} WHERE doc > %s", [search_results.COUNT_CAP])
    made = 0
    for (tok,) in cur.fetchall():
        if token(cur, tok) == tok:
            _store(cur, tok, '"' + tok.replace('"', '""') + '"')
            made += 1
    return made
