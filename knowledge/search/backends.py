"""The one seam between search and a database: what a backend does, and which one runs.

Each database has a backend with the same results (tests/knowledge/search/ run on both):
knowledge/search/sqlite.py (FTS5 word and trigram indexes, bm25) and knowledge/search/postgres.py
(tsvector table and pg_trgm, ts_rank). The public functions (knowledge/search/__init__.py) parse
the query once and hand the literal terms to the backend of the connection's database, chosen
once per database vendor.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from knowledge.search.filters import Filters
from knowledge.search.postgres import PostgresSearch
from knowledge.search.results import RebuildCounts, SearchPage
from knowledge.search.sanitize import Term
from knowledge.search.sqlite import SqliteSearch
from knowledge.search.top import TopLists


class SearchBackend(Protocol):
    @property
    def top(self) -> TopLists:
        """The SQL of the common words' top lists (their policy: knowledge/search/top.py)."""
        ...

    def search_messages(
        self,
        query: str,
        terms: list[Term],
        filters: Filters,
        limit: int,
        offset: int,
        groups: list[list[Term]] | None = None,
    ) -> SearchPage:
        """One page of matching messages, best first, with a count capped at COUNT_CAP + 1."""
        ...

    def best_per_session(
        self, terms: list[Term], filters: Filters, limit: int, groups: list[list[Term]] | None = None
    ) -> tuple[list[tuple[str, int]], dict[int, str]]:
        """(session id, best message id) of the `limit` best sessions, and those messages' snippets."""
        ...

    def matching_ids_sql(
        self, terms: list[Term], groups: list[list[Term]] | None = None, among: list[int] | None = None
    ) -> tuple[str, list[Any]]:
        """SQL selecting the ids of every matching message (of those `among` only, if given: each
        checked by the index, without building the whole match set), and its parameters."""
        ...

    def rebuild(self, cur: Any, *, optimize: bool = False) -> RebuildCounts:
        """Recreate missing search objects, recompute every entry and remake the top lists."""
        ...


@cache
def for_vendor(vendor: str) -> SearchBackend:
    if vendor == "sqlite":
        return SqliteSearch()
    if vendor == "postgresql":
        return PostgresSearch()
    raise ImproperlyConfigured(f"full-text search runs on SQLite or PostgreSQL, not {vendor}")


def backend() -> SearchBackend:
    """The backend of the default connection's database."""
    return for_vendor(connection.vendor)
