"""The SQL of the top lists on SQLite FTS5 (the policy is knowledge/search/top.py).

A list lives in `knowledge_message_fts_top` (knowledge/search/schema.py): the word's token, `upto` and its
message ids as JSON. Hits are ranked by bm25 (lower is better). The token is read from FTS5's
own tokenizer through a temporary table of the connection — a Python stemmer disagrees with
SQLite's porter on words like "as" or "technology".
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db import OperationalError, transaction

from knowledge.search.results import RankedHit
from knowledge.search.schema import FTS as FTS_TABLE
from knowledge.search.schema import FTS_TOP, TOKENIZE

log = logging.getLogger(__name__)

TOP_TABLE = FTS_TOP
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


def query_of(tok: str) -> str:
    """The MATCH expression of exactly this token."""
    return '"' + tok.replace('"', '""') + '"'


def exact(cur: Any, match: str, n: int) -> list[RankedHit]:
    """The best `n` hits of MATCH expression `match`, ranked over every hit."""
    cur.execute(
        f"SELECT rowid, bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s ORDER BY score LIMIT %s",
        [match, n],
    )
    return [(rowid, (score, rowid)) for rowid, score in cur.fetchall()]


def candidates(cur: Any, match: str, upto: int, ids: list[int]) -> list[RankedHit]:
    """The hits among `ids` and every hit newer than `upto`, scored now.

    One pass over the word's hits in rowid order, bm25 only for the list's entries and the new
    hits: an FTS5 lookup by rowid would recompute the word's idf (a pass over all its hits) for
    each entry."""
    cur.execute(
        f"SELECT rowid, bm25({FTS_TABLE}) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
        "AND (rowid > %s OR rowid IN (SELECT value FROM json_each(%s)))",
        [match, upto, json.dumps(ids)],
    )
    return [(rowid, (score, rowid)) for rowid, score in cur.fetchall()]


def newest(cur: Any) -> int:
    cur.execute(f"SELECT max(rowid) FROM {FTS_TABLE}")
    return int(cur.fetchone()[0] or 0)


def load(cur: Any, tok: str) -> tuple[int, list[int]] | None:
    cur.execute(f"SELECT upto, ids FROM {TOP_TABLE} WHERE token = %s", [tok])
    row = cur.fetchone()
    return (int(row[0]), json.loads(row[1])) if row else None


def save(cur: Any, tok: str, upto: int, ids: list[int]) -> None:
    try:
        with transaction.atomic():
            cur.execute(
                f"INSERT OR REPLACE INTO {TOP_TABLE} (token, upto, ids) VALUES (%s, %s, %s)",
                [tok, upto, json.dumps(ids)],
            )
    except OperationalError as exc:
        # A search inside a read transaction that another connection has since written past
        # cannot write (SQLite's snapshot rule): this page is still exact, the next search keeps the list.
        log.debug("top list of %r not stored: %s", tok, exc)


def clear(cur: Any) -> None:
    cur.execute(f"DELETE FROM {TOP_TABLE}")


def common(cur: Any, cap: int) -> list[str]:
    """Every token in more than `cap` messages."""
    cur.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_ROWS} USING fts5vocab(main, {FTS_TABLE}, row)")
    cur.execute(f"SELECT term FROM temp.{_ROWS} WHERE doc > %s", [cap])
    return [tok for (tok,) in cur.fetchall()]
