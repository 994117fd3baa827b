"""One backend per database, chosen once, each doing everything the seam asks of it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from knowledge.search import backends as search_backend
from knowledge.search.postgres import PostgresSearch
from knowledge.search.sqlite import SqliteSearch


def test_the_backend_follows_the_database_and_is_made_once() -> None:
    first = search_backend.backend()
    assert isinstance(first, PostgresSearch if connection.vendor == "postgresql" else SqliteSearch)
    assert search_backend.backend() is first
    assert search_backend.for_vendor("sqlite") is search_backend.for_vendor("sqlite")


def test_another_database_is_refused_by_name() -> None:
    with pytest.raises(ImproperlyConfigured, match="not mysql"):
        search_backend.for_vendor("mysql")


@pytest.mark.parametrize("implementation", [SqliteSearch, PostgresSearch])
def test_both_backends_have_every_method_of_the_seam(implementation: type[SqliteSearch | PostgresSearch]) -> None:
    wanted = {"search_messages", "best_per_session", "matching_ids_sql", "rebuild", "top"}
    assert wanted <= set(dir(implementation))
    assert {"token", "exact", "candidates", "save", "common"} <= set(dir(implementation.top))
