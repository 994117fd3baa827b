"""Reading sessions for session_search: messages shortened to fit a budget, never cut JSON."""

from __future__ import annotations

import json

import pytest

from agent.tools.results import ToolResult
from agent.tools.session_search_read import fitted, message_dicts, read_window
from knowledge.models import ChatSession, Message
from knowledge.search import ContextMessage

pytestmark = pytest.mark.django_db


def test_a_shortened_message_says_its_whole_length() -> None:
    (short, long) = message_dicts(
        [ContextMessage(1, "user", "hi", None), ContextMessage(2, "tool", "y" * 50, None, "terminal")], 10
    )
    assert short == {"id": 1, "role": "user", "content": "hi", "match": False}
    assert long["content"] == "y" * 9 + "…" and long["chars"] == 50 and long["tool_name"] == "terminal"


def test_fitted_takes_the_longest_messages_within_the_budget() -> None:
    messages = [ContextMessage(i, "user", "z" * 5000, None) for i in range(10)]

    def make(chars: int) -> ToolResult:
        return ToolResult.success(messages=message_dicts(messages, chars))

    result = fitted(make, 5000)
    assert len(result.to_json()) <= 5000
    assert len(json.loads(result.to_json())["messages"][0]["content"]) == 400  # 600 would not fit
    assert len(fitted(make, 100).to_json()) > 100  # nothing fits: the shortest, for the registry to cut


def test_read_window_is_the_whole_session_up_to_thirty_messages() -> None:
    s = ChatSession.objects.create()
    rows = [Message.objects.create(session=s, role="user", content=str(i)) for i in range(31)]
    window, count = read_window(s)
    assert count == 31 and [m.message_id for m in window] == [r.id for r in rows[:20] + rows[-10:]]
    Message.objects.filter(id=rows[20].id).delete()
    assert [m.message_id for m in read_window(s)[0]] == [r.id for r in rows if r.id != rows[20].id]
