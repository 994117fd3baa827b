"""session_search's arguments: Hermes' names, the kind of call they choose, Hermes' defaults for a
count or an order it cannot read (said in the result), and a clear error for any other value the
tool cannot use."""

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
    ("raw", "limit", "sort", "window"),
    [
        ({"query": "kafka", "limit": "bogus"}, 3, "relevance", 5),
        ({"query": "kafka", "sort": "bogus"}, 3, "relevance", 5),
        ({"query": "kafka", "sort": "latest", "limit": "7"}, 7, "relevance", 5),
        ({"query": "kafka", "limit": 2.5, "sort": 4}, 2, "relevance", 5),  # Hermes cuts a fraction to its whole part
        ({"query": "kafka", "limit": [4], "sort": ["newest"]}, 3, "relevance", 5),
        ({"query": "kafka", "limit": True}, 3, "relevance", 5),
        ({"around_message_id": 9, "window": "wide"}, 3, "relevance", 5),
        ({"around_message_id": 9, "window": float("nan")}, 3, "relevance", 5),
    ],
)
def test_a_count_or_order_it_cannot_read_falls_back_to_hermes_defaults(
    raw: dict[str, Any], limit: int, sort: str, window: int
) -> None:
    args = parse(raw)
    assert (args.limit, args.sort, args.window) == (limit, sort, window)


def test_the_fallback_is_said_for_the_arguments_the_call_reads() -> None:
    args = parse({"query": "kafka", "limit": "bogus", "sort": "bogus"})
    assert args.defaults == {
        "limit": "`limit` 'bogus' is not a whole number: the default 3 was used.",
        "sort": "`sort` 'bogus' is not one of relevance, newest, oldest: relevance was used.",
    }
    assert parse({"query": "kafka", "limit": 4, "sort": "oldest"}).defaults == {}
    # Not read by a scroll: reported unused, not defaulted.
    scroll = parse({"around_message_id": 3, "sort": "bogus"})
    assert (scroll.unused, scroll.defaults) == (["sort"], {})


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"role_filter": "user,robot"}, "unknown roles (robot)"),
        ({"role_filter": 3}, "`role_filter` must be a string"),
        ({"around_message_id": "twelve"}, "`around_message_id` must be an integer"),
        ({"around_message_id": 0}, "a positive integer"),
        ({"query": ["a"]}, "`query` must be a string"),
        ({"profile": "work"}, "session_search has no argument 'profile'; it takes query, limit, sort"),
    ],
)
def test_bad_values_are_errors(raw: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse(raw)
    assert error in str(caught.value)
