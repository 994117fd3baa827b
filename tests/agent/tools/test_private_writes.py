"""A private chat is read from memory and skills but never written from: the memory and skill_manage
tools answer the model a clear error there — the chat's own agent, and a review of it alike — and
save nothing, hold nothing for the inbox, change no file. The person's own edits (no chat) and a
chat switched back are written as always."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.tools.memory_tool import memory_tool
from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.skill_tools import make_tools
from knowledge import private_chats
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, PendingWrite, ReviewRun

pytestmark = pytest.mark.django_db

REFUSAL = "This chat is private: nothing from it is saved."
SKILL = "---\nname: tidy-tank\ndescription: Cleans the tank\n---\n\nStep one.\n"


def _memory(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(memory_tool().handler(args, ctx).content())
    return result


def _skill(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(ToolRegistry(make_tools()).dispatch("skill_manage", args, ctx).content())
    return result


@pytest.fixture
def private_chat(home: Path) -> ChatSession:
    return ChatSession.objects.create(title="Private", private=True)


def _contexts(session: ChatSession) -> list[ToolContext]:
    said = [{"role": "user", "content": "I keep axolotls at home."}]
    run = ReviewRun.objects.create(session=session, prompt_kind="combined")
    return [
        ToolContext(actor="agent", session_id=session.id, user_text=said[0]["content"], seen=said),
        ToolContext(actor="review", session_id=session.id, review_id=run.pk, seen=said),
        ToolContext(actor="review", session_id=session.id, review_id=run.pk, seen=said, stage_writes={"memory": True}),
        ToolContext(actor="flush", session_id=session.id, seen=said),
    ]


def test_memory_refuses_every_writer_of_a_private_chat(private_chat: ChatSession, home: Path) -> None:
    args = {"target": "user", "action": "add", "content": "Keeps axolotls.", "evidence": ["I keep axolotls at home."]}
    for ctx in _contexts(private_chat):
        assert _memory(args, ctx) == {"success": False, "error": REFUSAL}
    assert MemoryStore().entries("user") == []
    assert not KnowledgeChange.objects.exists() and not PendingWrite.objects.exists()


def test_skill_manage_refuses_every_writer_of_a_private_chat(private_chat: ChatSession, home: Path) -> None:
    for ctx in _contexts(private_chat):
        assert _skill({"action": "create", "name": "tidy-tank", "content": SKILL}, ctx) == {
            "success": False,
            "error": REFUSAL,
        }
    assert not (home / "skills").exists() or not any((home / "skills").rglob("SKILL.md"))
    assert not KnowledgeChange.objects.exists() and not PendingWrite.objects.exists()


def test_reading_skills_in_a_private_chat_still_works(private_chat: ChatSession) -> None:
    ctx = ToolContext(actor="agent", session_id=private_chat.id)
    listed = json.loads(ToolRegistry(make_tools()).dispatch("skills_list", {}, ctx).content())
    assert "error" not in listed and listed["count"] == 0


def test_switched_back_the_chat_is_written_from(private_chat: ChatSession) -> None:
    private_chats.set_private(private_chat.id, False)
    ctx = ToolContext(actor="agent", session_id=private_chat.id)
    assert _memory({"target": "memory", "action": "add", "content": "Tank is 80 litres."}, ctx)["success"] is True
    assert MemoryStore().entries("memory") == ["Tank is 80 litres."]


def test_the_persons_own_edits_have_no_chat_and_are_saved(private_chat: ChatSession) -> None:
    result = _memory({"target": "memory", "action": "add", "content": "Water change on Sundays."}, ToolContext("user"))
    assert result["success"] is True
