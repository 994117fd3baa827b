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

from django.db.models import Q
from django.db.models.functions import Coalesce

from knowledge.models import ChatSession
from knowledge.search.sanitize import parse_groups

_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»", "「": "」", "”": "”"}


def unquote(query: str) -> str:
    """The query without the quotes a model put around all of it."""
    text = query.strip()
    while len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def title_condition(query: str) -> Q | None:
    """A filter for sessions whose title holds every term of one of the query's alternatives."""
    condition: Q | None = None
    for group in parse_groups(unquote(query)):
        every = Q()
        for term in group:
            every &= Q(title__icontains=term.text)
        condition = every if condition is None else condition | every
    return condition


def matching_sessions(
    query: str,
    *,
    limit: int,
    sources: Sequence[str] | None = None,
    exclude_session_id: str | None = None,
    session_id: str | None = None,
) -> list[ChatSession]:
    """Sessions whose title matches `query`, most recently active first."""
    condition = title_condition(query)
    if condition is None:
        return []
    # Only what a hit shows: a whole session row is ten times slower to turn into an object.
    qs = ChatSession.objects.filter(condition).only("id", "title", "name", "source", "started_at", "updated_at")
    if sources:
        qs = qs.filter(source__in=list(sources))
    if exclude_session_id:
        qs = qs.exclude(id=exclude_session_id)
    if session_id:
        qs = qs.filter(id=session_id)
    # Sorted as an expression, not through the updated_at index: walking that index to find a
    # title that no session has visits every row in random order (3x the cost of one scan).
    return list(qs.order_by(Coalesce("updated_at", "started_at").desc())[: max(1, limit)])
