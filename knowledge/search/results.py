"""What a search returns, whichever database runs it (SQLite FTS5 or PostgreSQL full-text)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

COUNT_CAP = 1000  # counting every hit of a common word over 1M rows costs more than it tells
SESSION_BATCH = 64  # ranked hits read at a time while collecting distinct sessions
RankedHit = tuple[int, tuple[float, int]]  # a message id and its sort key (lower ranks first)


def to_datetime(value: Any) -> datetime | None:
    """A timestamp as a raw query returns it (a string on SQLite), aware."""
    if value is None:
        return None
    dt = value if isinstance(value, datetime) else parse_datetime(str(value))
    if dt is not None and timezone.is_naive(dt):
        dt = timezone.make_aware(dt, UTC)
    return dt


def iso_time(value: datetime | None) -> str:
    """`value` in the current time zone, ISO 8601 (a <time datetime>): what Django's date filter
    writes for "c", at a fraction of its cost (a page of hits writes two times per row)."""
    return timezone.localtime(value).isoformat() if value is not None else ""


def shown_time(value: datetime | None) -> str:
    """`value` in the current time zone as the search page shows it: Django's date filter's
    "Y-m-d H:i", without the filter's format machinery."""
    if value is None:
        return ""
    t = timezone.localtime(value)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}"


@dataclass
class MessageHit:
    message_id: int
    session_id: str
    session_title: str
    source: str
    role: str
    created_at: datetime | None
    snippet: str
    by_meaning: bool = False  # found by meaning only: its words do not match the query

    @property
    def created_iso(self) -> str:
        return iso_time(self.created_at)

    @property
    def created_shown(self) -> str:
        return shown_time(self.created_at)


@dataclass
class TitleHit:
    """A session whose title matches the query (knowledge/search/titles.py)."""

    session_id: str
    title: str
    source: str
    updated_at: datetime | None
    started_at: datetime | None = None

    @property
    def updated_iso(self) -> str:
        return iso_time(self.updated_at)

    @property
    def updated_shown(self) -> str:
        return shown_time(self.updated_at)


@dataclass
class SearchPage:
    query: str
    results: list[MessageHit]
    total: int  # capped at COUNT_CAP
    total_capped: bool  # True: "COUNT_CAP+" matches
    searchable: bool = True  # False when the query had nothing to search for
    titles: list[TitleHit] = field(default_factory=list)  # sessions titled so, on the first page
    meaning: bool = False  # hits by meaning took part (False: search was by words only)

    @classmethod
    def capped(cls, query: str, results: list[MessageHit], total: int) -> SearchPage:
        """A page whose count stops at COUNT_CAP ("1000+")."""
        return cls(query=query, results=results, total=min(total, COUNT_CAP), total_capped=total > COUNT_CAP)

    @property
    def total_display(self) -> str:
        return f"{self.total}+" if self.total_capped else str(self.total)


@dataclass
class ContextMessage:
    message_id: int
    role: str
    content: str
    created_at: datetime | None
    tool_name: str = ""
    is_match: bool = False


@dataclass
class SessionHit:
    session_id: str
    title: str
    source: str
    started_at: datetime | None
    updated_at: datetime | None
    message_id: int  # its best-matching message, or 0 when only the title matches
    snippet: str
    context: list[ContextMessage] = field(default_factory=list)
    matched: str = "message"  # "title": the session's title matches the query; "meaning": only by meaning


@dataclass
class SessionSummary:
    session_id: str
    title: str
    source: str
    started_at: datetime | None
    updated_at: datetime | None
    message_count: int
    preview: str


def first_per_session(hits: Iterable[tuple[int, str]], limit: int) -> list[tuple[str, int]]:
    """(session id, message id) of the first (best) hit of each session, for the first `limit`
    sessions, from (message id, session id) pairs best first; stops reading there."""
    best: list[tuple[str, int]] = []
    seen: set[str] = set()
    for mid, sid in hits:
        if sid not in seen:
            seen.add(sid)
            best.append((sid, mid))
            if len(best) == limit:
                break
    return best


@dataclass
class RebuildCounts:
    """What `rebuild_search_index` did: messages indexed, top lists made, and (SQLite) how many
    messages the trigram index holds."""

    messages: int
    lists: int
    trigram: int | None = None
