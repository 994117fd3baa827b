"""The stored conversation shaped for the chat page: tool cards joined to their results, and the
counters until the next reviews."""

from __future__ import annotations

import pytest

from agent.chat import presenter
from knowledge.models import ChatSession, Message
from tests.conftest import write_config

pytestmark = pytest.mark.django_db


def test_conversation_joins_each_tool_card_to_its_result():
    s = ChatSession.objects.create()
    Message.objects.create(session=s, role="user", content="save this")
    call = {"id": "call-1", "type": "function", "function": {"name": "memory", "arguments": '{"target":"user"}'}}
    lost = {"id": "call-2", "type": "function", "function": {"name": "skills_list", "arguments": "not json"}}
    Message.objects.create(session=s, role="assistant", content="", tool_calls=[call, lost])
    Message.objects.create(session=s, role="tool", tool_call_id="call-1", content='{"success": false, "error": "no"}')
    Message.objects.create(session=s, role="tool", tool_call_id="unknown", content="orphan")
    Message.objects.create(session=s, role="assistant", content="Could not save.")
    items = presenter.conversation(s)
    assert [i.kind for i in items] == ["user", "tool", "tool", "assistant"]
    card = items[1].tool
    assert card is not None and card.name == "memory" and card.arguments == '{\n  "target": "user"\n}'
    assert card.pending is False and card.ok is False and '"error": "no"' in card.result
    assert card.duration is not None and card.duration >= 0
    other = items[2].tool
    assert other is not None and other.pending and other.arguments == "not json" and other.result == ""


def test_counters_count_down_to_the_next_reviews_and_are_none_when_off(home):
    s = ChatSession.objects.create(turns_since_memory=4, iters_since_skill=7)
    assert presenter.counters(s) == {"turns_until_memory_review": 6, "iters_until_skill_review": 3}
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    assert presenter.counters(s) == {"turns_until_memory_review": None, "iters_until_skill_review": None}


def test_the_checkpoint_of_an_answer_still_being_written_is_not_called_stopped():
    s = ChatSession.objects.create()
    Message.objects.create(session=s, role="user", content="explain exit 137")
    Message.objects.create(session=s, role="assistant", content="Exit 137 means", finish_reason="interrupted")
    assert presenter.conversation(s, writing=True)[-1].ending == presenter.STILL_WRITING
    # Its server died, or the person pressed Stop: the same row reads as stopped.
    assert presenter.conversation(s)[-1].ending == presenter.ENDINGS["interrupted"]
