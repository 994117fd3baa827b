"""The search filters: the same SQL conditions for both backends."""

from __future__ import annotations

from datetime import date

import pytest

from knowledge.search.filters import Filters, filter_sql


def test_no_filter_no_condition() -> None:
    assert filter_sql(Filters()) == ([], [])
    assert not Filters().needs_session


@pytest.mark.django_db
def test_each_filter_is_a_parameterised_condition() -> None:
    where, params = filter_sql(
        Filters(date(2026, 1, 1), date(2026, 1, 31), ["user"], ["cli"], exclude_session_id="x", session_id="y")
    )
    assert where == [
        "m.created_at >= %s",
        "m.created_at < %s",  # a date bound covers the whole day: before the next one
        "m.role IN (%s)",
        "s.source IN (%s)",
        "m.session_id <> %s",
        "m.session_id = %s",
    ]
    assert params[2:] == ["user", "cli", "x", "y"]
    assert Filters(sources=["cli"]).needs_session
