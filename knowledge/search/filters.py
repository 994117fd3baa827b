"""The filters of a search (dates, roles, sources, sessions, private chats), shared by both
backends: the same conditions on `m` (a message, or PostgreSQL's search row, which carries the
same columns) and `s` (its session)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from knowledge.search.schema import SESSIONS


@dataclass
class Filters:
    date_from: date | datetime | None = None
    date_to: date | datetime | None = None
    roles: Sequence[str] | None = None
    sources: Sequence[str] | None = None
    exclude_session_id: str | None = None
    session_id: str | None = None
    # Leave out the private chats' messages (knowledge/private_chats.py). Set only when there is
    # one, so a search of a home without any keeps its plans without filters.
    without_private: bool = False

    @property
    def needs_session(self) -> bool:
        """A condition reads the sessions table (`s`)."""
        return bool(self.sources)


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
    if f.without_private:  # the few private chats' ids, from their partial index
        where.append("m.session_id NOT IN (SELECT id FROM knowledge_chatsession WHERE private)")
    return where, params


def vector_conditions(
    f: Filters, roles: Sequence[str], leave_out: list[tuple[str, list[Any]]]
) -> tuple[str, list[str], list[Any]]:
    """(join, conditions, parameters) of a search by meaning over the vectors' rows `v` joined to
    their messages `m`: the embedded roles, the search's filters, and no message an exclusion's SQL
    selects."""
    where, params = filter_sql(f)
    where = [f"m.role IN ({', '.join(['%s'] * len(roles))})", *where]
    params = [*roles, *params]
    for sql, sql_params in leave_out:
        where.append(f"m.id NOT IN ({sql})")
        params.extend(sql_params)
    join = f" JOIN {SESSIONS} s ON s.id = m.session_id" if f.needs_session else ""
    return join, where, params
