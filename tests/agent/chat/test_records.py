"""Stored turn messages (agent/chat/records.py): the row, the session's counters, the first title."""

from __future__ import annotations

import pytest

from agent.chat.records import store_message, usage_updates
from agent.llm.types import Usage
from agent.loop import ModelCalled
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db


def test_a_message_and_its_session_counters_are_stored_together() -> None:
    session = ChatSession.objects.create(source="web")
    call = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}]
    m = store_message(session, {"role": "assistant", "content": "", "tool_calls": call}, finish_reason="tool_calls")
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.message_count, stored.tool_call_count) == (1, 1)
    assert Message.objects.get(pk=m.pk).tool_calls == call


def test_the_first_user_message_titles_an_untitled_chat_in_plain_words() -> None:
    session = ChatSession.objects.create(source="web")
    store_message(session, {"role": "user", "content": "how big are **debian** images?"}, first_user=True)
    assert ChatSession.objects.filter(pk=session.pk).values_list("title", "title_source").get() == (
        "how big are debian images?",
        "message",
    )
    named = ChatSession.objects.create(source="web", title="Mine", title_source="person")
    store_message(named, {"role": "user", "content": "another"}, first_user=True)
    assert ChatSession.objects.get(pk=named.pk).title == "Mine"


def test_a_model_call_adds_its_tokens_to_the_session() -> None:
    session = ChatSession.objects.create(source="web")
    call = ModelCalled(iteration=1, usage=Usage(120, 7, reported=True), message={}, finish_reason="stop")
    ChatSession.objects.filter(pk=session.pk).update(**usage_updates(session, call))
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.prompt_tokens, stored.completion_tokens, stored.last_prompt_tokens) == (120, 7, 120)
