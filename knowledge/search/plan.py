"""Planning a search: which FTS5 index a query goes to, and the SQL pieces for its terms and
filters (used by knowledge/search/__init__.py, which runs them).

Queries with Chinese, Japanese, Korean, Thai… characters go to the trigram index (substring
matching, 3+ characters through MATCH, shorter terms by a scan of the small trigram table);
everything else to the word index, ranked by bm25.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from knowledge.models import ChatSession, Message
from knowledge.search.sanitize import Term, quote_term
from knowledge.search.snippets import ELLIPSIS, query_stems

# Table names come from the models; the two indexes are created by knowledge 0003_search_index.
MESSAGES = Message._meta.db_table
SESSIONS = ChatSession._meta.db_table
FTS_TABLE = f"{MESSAGES}_fts"
TRIGRAM_TABLE = f"{MESSAGES}_trigram"
SNIPPET_TOKENS = 16
_TRIGRAM_MIN = 3  # the trigram tokenizer cannot match anything shorter


@dataclass
class Filters:
    date_from: date | datetime | None = None
    date_to: date | datetime | None = None
    roles: Sequence[str] | None = None
    sources: Sequence[str] | None = None
    exclude_session_id: str | None = None
    session_id: str | None = None


def _bound(value: date | datetime, *, end: bool) -> str:
    """A stored-format timestamp; a plain date means the whole day (local time)."""
    if not isinstance(value, datetime):
        value = datetime.combine(value + timedelta(days=1) if end else value, time.min)
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return str(connection.ops.adapt_datetimefield_value(value))


def filter_sql(f: Filters) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if f.date_from is not None:
        where.append("m.created_at >= %s")
        params.append(_bound(f.date_from, end=False))
    if f.date_to is not None:
        # A datetime bound is inclusive; a date bound covers that whole day.
        where.append("m.created_at <= %s" if isinstance(f.date_to, datetime) else "m.created_at < %s")
        params.append(_bound(f.date_to, end=True))
    if f.roles:
        where.append(f"m.role IN ({', '.join(['%s'] * len(f.roles))})")
        params.extend(f.roles)
    if f.sources:
        where.append(f"s.source IN ({', '.join(['%s'] * len(f.sources))})")
        params.extend(f.sources)
    if f.exclude_session_id:
        where.append("m.session_id <> %s")
        params.append(f.exclude_session_id)
    if f.session_id:
        where.append("m.session_id = %s")
        params.append(f.session_id)
    return where, params


@dataclass
class Plan:
    """The FROM/WHERE/ORDER of one query, for whichever index fits its terms."""

    table: str
    index_where: list[str]  # conditions on the FTS table alone
    index_params: list[Any]
    filter_where: list[str]  # conditions on the message / session
    filter_params: list[Any]
    needs_session: bool  # a filter reads the sessions table
    snippet: str | None  # SQL for the snippet, or None to build it in Python
    needles: list[str]
    match: str | None
    # Word index: snippets are cut in Python from the page's content (knowledge/search/snippets.py),
    # with snippet() only as the fallback for hits in tool names or arguments.
    stems: frozenset[str] = frozenset()

    @property
    def ranked(self) -> bool:
        return self.match is not None

    @property
    def order_sql(self) -> str:
        """Best first. `rank` (bm25) is consumed by FTS5 itself, so rows stream in rank order
        and a LIMIT stops the join, the filters and snippet() after the page."""
        return f"{self.table}.rank" if self.ranked else f"{self.table}.rowid DESC"

    @property
    def from_sql(self) -> str:
        sql = f"{self.table} JOIN {MESSAGES} m ON m.id = {self.table}.rowid"
        return sql + (f" JOIN {SESSIONS} s ON s.id = m.session_id" if self.needs_session else "")

    @property
    def where_sql(self) -> str:
        return " AND ".join(self.index_where + self.filter_where)

    @property
    def params(self) -> list[Any]:
        return self.index_params + self.filter_params


def _snippet_sql(table: str) -> str:
    return f"snippet({table}, -1, char(2), char(3), '{ELLIPSIS}', {SNIPPET_TOKENS})"


def plan_query(terms: list[Term], filters: Filters) -> Plan:
    where, params = filter_sql(filters)
    needs_session = bool(filters.sources)
    if not any(t.unsegmented for t in terms):
        words = " ".join(quote_term(t.text) for t in terms)
        return Plan(
            FTS_TABLE, [f"{FTS_TABLE} MATCH %s"], [words], where, params, needs_session,
            _snippet_sql(FTS_TABLE), [], words, query_stems(t.text for t in terms),
        )  # fmt: skip
    # Trigram index: terms of 3+ characters through MATCH (substring), shorter ones by a
    # scan of the trigram table, which holds only the messages with non-ASCII text.
    long_terms = [t.text for t in terms if len(t.text) >= _TRIGRAM_MIN]
    short_terms = [t.text for t in terms if len(t.text) < _TRIGRAM_MIN]
    pre: list[str] = []
    pre_params: list[Any] = []
    match = " ".join(quote_term(t) for t in long_terms) if long_terms else None
    if match:
        pre.append(f"{TRIGRAM_TABLE} MATCH %s")
        pre_params.append(match)
    for term in short_terms:
        pre.append(
            f"(instr(lower({TRIGRAM_TABLE}.content), lower(%s)) > 0"
            f" OR instr(lower(coalesce({TRIGRAM_TABLE}.tool_args, '')), lower(%s)) > 0)"
        )
        pre_params.extend([term, term])
    return Plan(
        TRIGRAM_TABLE, pre, pre_params, where, params, needs_session,
        _snippet_sql(TRIGRAM_TABLE) if match else None,
        short_terms if match else [t.text for t in terms], match,
    )  # fmt: skip
