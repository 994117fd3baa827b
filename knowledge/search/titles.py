"""Session titles, matched beside messages: a session whose title alone matches is found too.

A title matches when it holds every term of an alternative (and none of its exclusions) as
text, case-insensitively, the same on both databases. Each has a title index so a search reads
the sessions whose titles hold the words, not every session (knowledge/search/schema.py): on
SQLite a trigram FTS5 table, searched with LIKE for terms of three characters or more (the
trigram index cannot serve shorter ones, nor terms holding LIKE's own wildcards, which are
matched with instr on the index's narrow rows instead); on PostgreSQL a pg_trgm index that its
planner uses for the same LIKE on lower(title).
A model often wraps what it recalls of a title in quotes ("fingerprint-login", `deploy notes`,
“…”): quotes around the whole query are stripped first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledge.search.results import TitleHit, to_datetime
from knowledge.search.sanitize import search_groups
from knowledge.search.schema import SESSIONS, TITLE_ROWS, TITLES

_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»", "「": "」", "”": "”"}


def unquote(query: str) -> str:
    """The query without the quotes a model put around all of it."""
    text = query.strip()
    while len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _like(term: str) -> str:
    return "%" + term.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def title_condition(query: str) -> tuple[str, list[Any]] | None:
    """SQL for sessions whose title holds every term of one of the query's alternatives, and
    none of its exclusions."""
    ors: list[str] = []
    params: list[Any] = []
    for group in search_groups(unquote(query)):
        conds = ["lower(title) " + ("NOT LIKE" if t.exclude else "LIKE") + " %s ESCAPE '\\'" for t in group]
        ors.append("(" + " AND ".join(conds) + ")")
        params += [_like(t.text) for t in group]
    return ("(" + " OR ".join(ors) + ")", params) if ors else None


def _indexable(term: str) -> bool:
    return len(term) >= 3 and not any(ch in term for ch in "%_")


def sqlite_title_condition(query: str) -> tuple[str, list[Any]] | None:
    """The same condition through SQLite's title index: each alternative is a set of index rows."""
    ors: list[str] = []
    params: list[Any] = []
    for group in search_groups(unquote(query)):
        conds: list[str] = []
        for term in group:
            text = term.text.lower()
            if not term.exclude and _indexable(text):
                conds.append("title LIKE %s")
                params.append(f"%{text}%")
            else:
                conds.append("instr(title, %s) " + ("= 0" if term.exclude else "> 0"))
                params.append(text)
        ors.append(f"r.row IN (SELECT rowid FROM {TITLES} WHERE {' AND '.join(conds)})")
    return ("(" + " OR ".join(ors) + ")", params) if ors else None


def matching_sessions(
    query: str,
    *,
    limit: int,
    sources: Sequence[str] | None = None,
    exclude_session_id: str | None = None,
    session_id: str | None = None,
) -> list[TitleHit]:
    """Sessions whose title matches `query`, most recently active first. Plain SQL: building
    the ORM's query cost more than running it, on every search."""
    sqlite = connection.vendor == "sqlite"
    found = sqlite_title_condition(query) if sqlite else title_condition(query)
    if found is None:
        return []
    where, params = [found[0], "NOT s.private"], list(found[1])  # a private chat is never found
    if sources:
        where.append(f"s.source IN ({', '.join(['%s'] * len(sources))})")
        params += list(sources)
    if exclude_session_id:
        where.append("s.id <> %s")
        params.append(exclude_session_id)
    if session_id:
        where.append("s.id = %s")
        params.append(session_id)
    # Sorted as an expression, not through the updated_at index: walking that index to find a
    # title that no session has visits every row in random order (3x the cost of one scan).
    rows_join = f" JOIN {TITLE_ROWS} r ON r.session_id = s.id" if sqlite else ""
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT s.id, s.title, s.name, s.source, s.started_at, s.updated_at FROM {SESSIONS} s{rows_join}"
            f" WHERE {' AND '.join(where)} ORDER BY coalesce(s.updated_at, s.started_at) DESC LIMIT %s",
            [*params, max(1, limit)],
        )
        rows = cur.fetchall()
    return [
        TitleHit(sid, title or name or "New chat", source, to_datetime(updated), to_datetime(started))
        for sid, title, name, source, started, updated in rows
    ]
