"""Session titles, matched beside messages: a session whose title alone matches is found too.

Titles are short and few (one per session), so they are matched as text — every term of an
alternative inside the title, case-insensitively — with the ORM, the same on both databases.
That is one scan of the sessions table per search (about 1 ms per thousand sessions here); a
history of tens of thousands of sessions would want a title index of its own.
A model often wraps what it recalls of a title in quotes ("fingerprint-login", `deploy notes`,
“…”): quotes around the whole query are stripped first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledge.search.results import TitleHit, to_datetime
from knowledge.search.sanitize import search_groups
from knowledge.search.schema import SESSIONS

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
    found = title_condition(query)
    if found is None:
        return []
    where, params = [found[0]], list(found[1])
    if sources:
        where.append(f"source IN ({', '.join(['%s'] * len(sources))})")
        params += list(sources)
    if exclude_session_id:
        where.append("id <> %s")
        params.append(exclude_session_id)
    if session_id:
        where.append("id = %s")
        params.append(session_id)
    # Sorted as an expression, not through the updated_at index: walking that index to find a
    # title that no session has visits every row in random order (3x the cost of one scan).
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT id, title, name, source, started_at, updated_at FROM {SESSIONS} WHERE {' AND '.join(where)}"
            " ORDER BY coalesce(updated_at, started_at) DESC LIMIT %s",
            [*params, max(1, limit)],
        )
        rows = cur.fetchall()
    return [
        TitleHit(sid, title or name or "New chat", source, to_datetime(updated), to_datetime(started))
        for sid, title, name, source, started, updated in rows
    ]
