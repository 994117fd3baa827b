"""Full-text search over stored messages: the public functions. Callers import from here.

Private chats (knowledge/private_chats.py) are never found: not their messages, not their titles,
not in the recent sessions.

What a person or the model types becomes literal terms (knowledge/search/sanitize.py), so no
text reaches MATCH or a tsquery as syntax. The terms go to the backend of the database
(knowledge/search/backends.py): knowledge/search/sqlite.py (FTS5) or knowledge/search/postgres.py.
Both return the same results; common words are ranked through top lists (knowledge/search/top.py).

Snippets (knowledge/search/snippets.py) are plain text with HIGHLIGHT_START / HIGHLIGHT_END control
characters around the matched words — never HTML — so the template layer escapes the text and adds
its own markup (`snippet_segments`), and the agent's tool renders them as `**word**` (`snippet_to_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from django.db.models import Count, Exists, OuterRef, Subquery

from knowledge.models import ChatSession, Message
from knowledge.search import hybrid
from knowledge.search.backends import SearchBackend, backend
from knowledge.search.filters import Filters
from knowledge.search.results import (
    ContextMessage,
    MessageHit,
    RebuildCounts,
    SearchPage,
    SessionHit,
    SessionSummary,
    TitleHit,
)
from knowledge.search.sanitize import parse_terms, search_groups
from knowledge.search.titles import matching_sessions

TITLE_HITS = 5  # sessions listed by title above a page of messages

__all__ = [
    "ContextMessage",
    "Filters",
    "MessageHit",
    "SORTS",
    "RebuildCounts",
    "SearchBackend",
    "SearchPage",
    "SessionHit",
    "SessionSummary",
    "TitleHit",
    "backend",
    "matching_ids_sql",
    "messages_around",
    "rebuild_index",
    "recent_sessions",
    "search_messages",
    "search_sessions",
]


def search_messages(
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    date_from: date | datetime | None = None,
    date_to: date | datetime | None = None,
    roles: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    exclude_session_id: str | None = None,
    session_id: str | None = None,
) -> SearchPage:
    """One page of matching messages, best first, with a capped total count. Not searchable:
    nothing to find, or only words to leave out (sanitize.exclusion_problem says why)."""
    terms, groups = parse_terms(query or ""), search_groups(query or "")
    if not groups:
        return SearchPage(query=query, results=[], total=0, total_capped=False, searchable=False)
    filters = Filters(date_from, date_to, roles, sources, exclude_session_id, session_id, _any_private())
    page = hybrid.search_page(query, terms, groups, filters, max(1, limit), max(0, offset))  # words and meaning
    if offset <= 0 and not (roles or date_from or date_to):  # titles have no role and no time of their own
        found = matching_sessions(
            query, limit=TITLE_HITS, sources=sources, exclude_session_id=exclude_session_id, session_id=session_id
        )
        page.titles = found
    return page


SORTS = ("relevance", "newest", "oldest")


def _any_private() -> bool:
    """Whether a private chat exists, whose messages every search leaves out (its partial index)."""
    return ChatSession.objects.filter(private=True).exists()


def _ranked(titled: list[TitleHit], best: list[tuple[str, int]]) -> list[tuple[Any, ...]]:
    """(id, title, source, started, updated, matched) of each session once, best first: a matching
    title ranks its session first (the person or the model named it so), then the sessions ranked
    by their best message."""
    sessions = ChatSession.objects.in_bulk([sid for sid, _ in best])
    rows = [(t.session_id, t.title, t.source, t.started_at, t.updated_at, "title") for t in titled] + [
        (sid, s.display_title, s.source, s.started_at, s.updated_at, "message")
        for sid, _ in best
        if (s := sessions.get(sid)) is not None  # None: deleted between the two queries
    ]
    unique: dict[str, tuple[Any, ...]] = {}
    for row in rows:
        unique.setdefault(row[0], row)
    return list(unique.values())


SORT_CANDIDATES = 100  # sessions ranked by relevance among which newest / oldest choose


def search_sessions(
    query: str,
    *,
    limit: int = 3,
    exclude_session_id: str | None = None,
    session_id: str | None = None,
    context: int = 2,
    roles: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    date_from: date | datetime | None = None,
    date_to: date | datetime | None = None,
    sort: str = "relevance",
) -> list[SessionHit]:
    """Sessions ranked by their best-matching message, each with the messages around it.
    `sort`: "relevance" (best first), or "newest" / "oldest" (by when the session started) among
    the SORT_CANDIDATES most relevant."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    terms, groups = parse_terms(query or ""), search_groups(query or "")
    if not groups:
        return []
    filters = Filters(date_from, date_to, roles, sources, exclude_session_id, session_id, _any_private())
    limit = max(1, limit)
    wanted = limit if sort == "relevance" else max(limit, SORT_CANDIDATES)
    best, snippets, by_meaning = hybrid.best_per_session(terms, groups, filters, wanted)
    titled: list[TitleHit] = []
    if not (roles or date_from or date_to):  # titles have no role and no time of their own
        titled = matching_sessions(
            query, limit=wanted, sources=sources, exclude_session_id=exclude_session_id, session_id=session_id
        )
    message_of = dict(best)
    ranked = _ranked(titled, best)
    if sort != "relevance":  # stable: sessions started at the same time keep their relevance order
        ranked.sort(key=lambda row: row[3] or datetime.min.replace(tzinfo=UTC), reverse=sort == "newest")
    hits: list[SessionHit] = []
    for sid, title, source, started, updated, matched in ranked[:limit]:
        mid = message_of.get(sid, 0)
        hits.append(
            SessionHit(
                session_id=sid,
                title=title,
                source=source,
                started_at=started,
                updated_at=updated,
                message_id=mid,
                snippet=snippets.get(mid, ""),
                context=messages_around(sid, mid, before=context, after=context if mid else 2 * context),
                matched="meaning" if matched == "message" and sid in by_meaning else matched,
            )
        )
    return hits


def messages_around(session_id: str, message_id: int, *, before: int = 2, after: int = 2) -> list[ContextMessage]:
    """The matching message with up to `before` / `after` neighbours in its session."""
    base = Message.objects.filter(session_id=session_id).only("id", "role", "content", "tool_name", "created_at")
    rows = list(reversed(base.filter(id__lt=message_id).order_by("-id")[:before]))
    rows += list(base.filter(id__gte=message_id).order_by("id")[: after + 1])
    return [
        ContextMessage(m.id, m.role, m.content, m.created_at, m.tool_name, is_match=m.id == message_id) for m in rows
    ]


def recent_sessions(
    limit: int = 10, exclude_session_id: str | None = None, sources: Sequence[str] | None = None
) -> list[SessionSummary]:
    """Most recently active sessions that have at least one message."""
    messages = Message.objects.filter(session=OuterRef("pk"))
    qs = ChatSession.objects.filter(Exists(messages), private=False)  # a private chat is never listed for recall
    if exclude_session_id:
        qs = qs.exclude(id=exclude_session_id)
    if sources:
        qs = qs.filter(source__in=list(sources))
    # Correlated subqueries (not a JOIN + GROUP BY) so only the returned sessions are counted.
    qs = qs.annotate(
        n_messages=Subquery(messages.order_by().values("session").annotate(c=Count("id")).values("c")[:1]),
        first_user=Subquery(messages.filter(role="user").order_by("id").values("content")[:1]),
    ).order_by("-updated_at")[: max(1, limit)]
    return [
        SessionSummary(
            session_id=s.id,
            title=s.display_title,
            source=s.source,
            started_at=s.started_at,
            updated_at=s.updated_at,
            message_count=s.n_messages or 0,
            preview=" ".join((s.first_user or "").split())[:200],
        )
        for s in qs
    ]


def matching_ids_sql(query: str) -> tuple[str, list[Any]] | None:
    """SQL selecting the ids of the messages the full-text index matches for `query` (to filter
    a queryset, e.g. the admin's message search), or None when it has nothing to search for."""
    groups = search_groups(query or "")
    return backend().matching_ids_sql(parse_terms(query or ""), groups) if groups else None


def rebuild_index(cursor: Any, *, optimize: bool = False) -> RebuildCounts:
    """Recreate missing search objects, recompute every entry and remake the top lists."""
    return backend().rebuild(cursor, optimize=optimize)
