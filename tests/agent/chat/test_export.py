"""One chat exported as Markdown and JSON: every message, in order, nothing able to break the file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.chat import export as chat_export
from agent.chat import service as chat_service
from knowledge.models import Message

pytestmark = pytest.mark.django_db(transaction=True)


def test_markdown_and_json_hold_every_message_in_order(home):
    session = chat_service.create_session()
    call = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": '{"a": 1}'}}]
    rows: list[dict[str, Any]] = [
        {"role": "user", "content": "show ```fences``` please"},
        {"role": "assistant", "content": "", "tool_calls": call},
        {"role": "tool", "content": '{"success": true}', "tool_call_id": "c1", "tool_name": "memory"},
        {"role": "assistant", "content": "partial", "finish_reason": "interrupted"},
    ]
    for row in rows:
        Message.objects.create(session=session, **row)
    markdown = chat_export.as_markdown(session)
    assert markdown.index("show ```fences``` please") < markdown.index('{"a": 1}') < markdown.index("partial")
    assert '```\n{"success": true}\n```' in markdown and "*(stopped)*" in markdown
    data = json.loads(chat_export.as_json(session))
    assert [m["content"] for m in data["messages"]] == [r["content"] for r in rows]
    assert data["messages"][1]["tool_calls"] == call and data["messages"][3]["finish_reason"] == "interrupted"


def test_a_fence_is_longer_than_any_backticks_inside():
    text = "````\ninner\n````"
    fenced = chat_export._fence(text)
    assert fenced.startswith("`````\n") and fenced.endswith("\n`````")
