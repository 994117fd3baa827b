"""The SQL of the top lists on PostgreSQL (the policy is knowledge/search/top.py), and how the
word index is matched and ranked there (shared with knowledge/search/postgres.py, which runs searches).

A list lives in `knowledge_message_search_top` (knowledge/search/schema.py): the word's lexeme under the
`hermes` configuration (to_tsvector's, as the index stores it), `upto` and its message ids.
Hits are ranked by ts_rank, best first, ties to the newest — search_pg's order. ts_rank reads
only the message's own vector (no collection statistics), so on PostgreSQL a list drifts only
when a listed message is edited.

The list's entries are looked up by primary key in `knowledge_message_search`, behind an
`OFFSET 0` fence: otherwise the planner may AND them with the GIN index's bitmap, which reads
every hit of the word — the cost the list is there to avoid.
"""

from __future__ import annotations

from typing import Any

from knowledge.search.results import RankedHit
from knowledge.search.schema import CONFIG, PG_REMOVED, PG_SEARCH, PG_TOP

TSQUERY = f"phraseto_tsquery('{CONFIG}', %s)"  # one literal term: nothing typed is tsquery syntax


def rank(vector: str, query: str) -> str:
    """SQL of the rank of a message's vector against a tsquery (higher is better)."""
    return f"ts_rank({vector}, {query}, 1)"


SEARCH_TABLE = PG_SEARCH
TOP_TABLE = PG_TOP
REMOVED_TABLE = PG_REMOVED


# The lexeme of a one-word text (a word repeated, "foo foo", is a phrase: two positions).
_TOKEN = (
    "(SELECT CASE WHEN count(*) = 1 AND min(array_length(positions, 1)) = 1 THEN min(lexeme) END"
    f" FROM unnest(to_tsvector('{CONFIG}', %s)))"
)


def _hits(rows: list[tuple[int, float]]) -> list[RankedHit]:
    return [(mid, (-r, -mid)) for mid, r in rows]


def token(cur: Any, text: str) -> str | None:
    """The one lexeme the index stores for `text`, or None when it makes 0 or 2+ words."""
    cur.execute(f"SELECT {_TOKEN}", [text])
    found = cur.fetchone()[0]
    return None if found is None else str(found)


def query_of(tok: str) -> str:
    """The text whose tsquery is exactly this lexeme (rebuild_lists keeps only such tokens)."""
    return tok


def exact(cur: Any, text: str, n: int) -> list[RankedHit]:
    """The best `n` hits of the word `text`, ranked over every hit."""
    cur.execute(
        f"SELECT m.id, {rank('m.search_vector', 'q.q')} AS r FROM (SELECT {TSQUERY} AS q) q, {SEARCH_TABLE} m"
        " WHERE m.search_vector @@ q.q ORDER BY r DESC, m.id DESC LIMIT %s",
        [text, n],
    )
    return _hits(cur.fetchall())


def candidates(cur: Any, text: str, upto: int, ids: list[int]) -> list[RankedHit]:
    """The hits among `ids` (primary-key lookups) and every hit newer than `upto`, ranked now."""
    cur.execute(
        f"WITH q AS (SELECT {TSQUERY} AS q)"
        f" SELECT c.id, {rank('c.search_vector', 'q.q')} FROM q,"
        f" (SELECT id, search_vector FROM {SEARCH_TABLE} WHERE id = ANY(%s) OFFSET 0) c WHERE c.search_vector @@ q.q"
        f" UNION ALL SELECT m.id, {rank('m.search_vector', 'q.q')} FROM q, {SEARCH_TABLE} m"
        " WHERE m.id > %s AND m.search_vector @@ q.q",
        [text, ids, upto],
    )
    return _hits(cur.fetchall())


def newest(cur: Any) -> int:
    cur.execute(f"SELECT max(id) FROM {SEARCH_TABLE}")
    return int(cur.fetchone()[0] or 0)


def load(cur: Any, tok: str) -> tuple[int, list[int]] | None:
    cur.execute(f"SELECT upto, ids FROM {TOP_TABLE} WHERE token = %s", [tok])
    row = cur.fetchone()
    return (int(row[0]), list(row[1])) if row else None


def _literal(tok: str) -> str:
    """The tsquery of exactly this lexeme (no parsing, no stemming)."""
    return "'" + tok.replace("\\", "\\\\").replace("'", "''") + "'"


def save(cur: Any, tok: str, upto: int, ids: list[int]) -> None:
    """Store the list with the word's hits and the removals so far (their difference bounds the
    word's hits from below: knowledge/search/schema.py)."""
    # One statement, one snapshot: the count and the removals describe the same moment.
    cur.execute(
        f"INSERT INTO {TOP_TABLE} (token, upto, ids, removed, hits)"
        f" SELECT %s, %s, %s, (SELECT n FROM {REMOVED_TABLE}),"
        f" (SELECT count(*) FROM {SEARCH_TABLE} WHERE search_vector @@ %s::tsquery)"
        " ON CONFLICT (token) DO UPDATE SET upto = EXCLUDED.upto, ids = EXCLUDED.ids,"
        " hits = EXCLUDED.hits, removed = EXCLUDED.removed",  # two searches making it: the later one's stands
        [tok, upto, ids, _literal(tok)],
    )


def hits_at_least(cur: Any, text: str) -> int:
    """A lower bound of the hits of the word `text` from its list (0 without one): each removal
    since the list was made took at most one hit away."""
    cur.execute(
        f"SELECT t.hits - (r.n - t.removed) FROM {TOP_TABLE} t, {REMOVED_TABLE} r WHERE t.token = {_TOKEN}", [text]
    )
    row = cur.fetchone()
    return int(row[0]) if row else 0


def clear(cur: Any) -> None:
    cur.execute(f"DELETE FROM {TOP_TABLE}")


def common(cur: Any, cap: int) -> list[str]:
    """Every lexeme in more than `cap` messages (one pass over every vector)."""
    cur.execute(f"SELECT word FROM ts_stat('SELECT search_vector FROM {SEARCH_TABLE}') WHERE ndoc > %s", [cap])
    return [str(tok) for (tok,) in cur.fetchall()]
