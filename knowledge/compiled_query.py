"""A one-row read of a chat that runs on every turn, its SQL compiled by the ORM once per process.

Building and compiling a queryset costs far more CPU than SQLite spends answering it (0.25 ms for
the turn's row, 0.4 ms for the title and review check with its subquery); the turn path runs two
such reads every turn. The ORM still writes the SQL, once per database, with a placeholder where
the session id goes; each read runs that SQL with the id in its place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections, models, router

# Stands for the session id while the query is compiled (no session has it: ids are hex).
_SESSION = "session id"


class SessionRowQuery:
    """`build(session_id)` -> a queryset of `model` giving one row (values_list, sliced [:1]);
    `row(session_id)` runs it."""

    def __init__(self, model: type[models.Model], build: Callable[[str], models.QuerySet[Any]]) -> None:
        self._model = model
        self._build = build
        self._compiled: dict[str, tuple[str, tuple[Any, ...], int]] = {}

    def _sql(self, alias: str) -> tuple[str, tuple[Any, ...], int]:
        compiled = self._compiled.get(alias)
        if compiled is None:  # two threads may both compile it once: the same SQL either way
            sql, params = self._build(_SESSION).query.get_compiler(using=alias).as_sql()
            compiled = self._compiled[alias] = (sql, tuple(params), list(params).index(_SESSION))
        return compiled

    def row(self, session_id: str) -> tuple[Any, ...] | None:
        alias = router.db_for_read(self._model)
        sql, params, at = self._sql(alias)
        with connections[alias].cursor() as cursor:
            cursor.execute(sql, (*params[:at], session_id, *params[at + 1 :]))
            row: tuple[Any, ...] | None = cursor.fetchone()
            return row
