"""session_search never finds, lists or reads a private chat: a search, the recent sessions, a read
by its id or name and a scroll around one of its messages all answer as if it were not there."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.tools import session_search
from agent.tools.registry import ToolContext, ToolRegistry
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db


def _call(args: dict[str, Any]) -> dict[str, Any]:
    registry = ToolRegistry([session_search.make_tool(total_timeout=1.0)])
    result: dict[str, Any] = json.loads(registry.dispatch("session_search", json.dumps(args), ToolContext()).content())
    return result


@pytest.fixture
def chats() -> dict[str, Any]:
    shown = ChatSession.objects.create(title="Garden pond")
    Message.objects.create(session=shown, role="user", content="the garden pond has a heron visiting")
    hidden = ChatSession.objects.create(title="Heron worries", name="herons", private=True)
    secret = Message.objects.create(session=hidden, role="user", content="the heron ate my koi, tell nobody")
    return {"shown": shown, "hidden": hidden, "secret": secret}


def test_a_search_finds_only_the_open_chat(chats: dict[str, Any]) -> None:
    for query in ("heron", "koi", "worries"):
        found = {r["session_id"] for r in _call({"query": query})["results"]}
        assert chats["hidden"].id not in found
    assert _call({"query": "koi"})["count"] == 0


def test_the_recent_sessions_leave_it_out(chats: dict[str, Any]) -> None:
    assert [r["session_id"] for r in _call({})["results"]] == [chats["shown"].id]


def test_reading_it_by_id_or_name_finds_no_such_session(chats: dict[str, Any]) -> None:
    for key in (chats["hidden"].id, "herons"):
        out = _call({"session_id": key})
        assert out["success"] is False and out["error"].startswith(f"No session with id '{key}'")


def test_scrolling_around_its_message_finds_no_such_message(chats: dict[str, Any]) -> None:
    out = _call({"around_message_id": chats["secret"].pk})
    assert out["success"] is False and out["error"].startswith(f"No message with id {chats['secret'].pk}.")
    assert "koi" not in json.dumps(out)
