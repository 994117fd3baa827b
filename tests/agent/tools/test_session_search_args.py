"""session_search's arguments: Hermes' names, the kind of call they choose, and a clear error for
every value the tool cannot use."""

from __future__ import annotations

from typing import Any

import pytest

from agent.tools.session_search_args import MAX_LIMIT, MAX_WINDOW, parse


@pytest.mark.parametrize(
    ("raw", "shape"),
    [
        ({}, "recent"),
        ({"query": "kafka"}, "search"),
        ({"query": "  ", "session_id": "abc"}, "read"),
        ({"session_id": "abc", "around_message_id": 7}, "scroll"),
        ({"query": "kafka", "around_message_id": "7"}, "scroll"),  # an anchor beats a query, as in Hermes
        ({"query": None, "session_id": None, "sort": None}, "recent"),  # nulls are not given
    ],
)
def test_the_arguments_choose_the_kind_of_call(raw: dict[str, Any], shape: str) -> None:
    assert parse(raw).shape == shape


def test_values_are_read_and_clamped_as_hermes_does() -> None:
    args = parse({"query": " kafka ", "limit": 99, "sort": "Newest", "role_filter": "user, TOOL,", "window": 0})
    assert (args.query, args.limit, args.sort, args.roles, args.window) == (
        "kafka",
        MAX_LIMIT,
        "newest",
        ["user", "tool"],
        1,
    )
    assert parse({"around_message_id": 3, "window": 500}).window == MAX_WINDOW
    assert parse({"query": "kafka", "sort": ""}).sort == "relevance"


def test_arguments_another_kind_of_call_reads_are_listed_unused() -> None:
    assert parse({"around_message_id": 3, "query": "kafka", "sort": "oldest"}).unused == ["query", "sort"]
    assert parse({"query": "kafka", "session_id": "s"}).unused == []


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"sort": "latest"}, "`sort` must be one of relevance, newest, oldest"),
        ({"role_filter": "user,robot"}, "unknown roles (robot)"),
        ({"role_filter": 3}, "`role_filter` must be a string"),
        ({"limit": 2.5}, "`limit` must be an integer"),
        ({"around_message_id": 0}, "a positive integer"),
        ({"query": ["a"]}, "`query` must be a string"),
        ({"profile": "work"}, "session_search has no argument 'profile'; it takes query, limit, sort"),
    ],
)
def test_bad_values_are_errors(raw: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse(raw)
    assert error in str(caught.value)
