"""A chat's own instructions and temperature, as the model server receives them (the scripted
server records each request body): set, changed between turns from elsewhere, and blank again."""

from __future__ import annotations

import pytest

from agent.chat.chat_settings import HEADING, with_instructions
from agent.chat.runner import AgentSession
from knowledge.models import ChatSession
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_chats_instructions_end_the_system_message_and_its_temperature_is_sent(home, llm):
    agent = AgentSession.open(source="cli")
    ChatSession.objects.filter(pk=agent.session.pk).update(instructions="Answer in French.", temperature=0.25)
    llm.push(Reply(text="Bonjour"))
    list(agent.run_turn("hello"))
    body = llm.chat_requests()[-1]
    assert body["temperature"] == 0.25
    system = body["messages"][0]["content"]
    assert system.startswith(agent.session.system_prompt)  # the built prompt, unchanged, first
    assert system.endswith(f"{HEADING}\nAnswer in French.")
    # The stored prompt is not changed: the prompt page and compression read it as built.
    assert "Answer in French." not in ChatSession.objects.get(pk=agent.session.pk).system_prompt


def test_settings_saved_between_turns_govern_the_next_one_and_blank_means_the_defaults(home, llm):
    agent = AgentSession.open(source="cli")
    llm.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    list(agent.run_turn("first"))
    first = llm.chat_requests()[-1]
    assert "temperature" not in first and HEADING not in first["messages"][0]["content"]
    # Saved by the settings panel (another process) while this agent is cached.
    ChatSession.objects.filter(pk=agent.session.pk).update(instructions="Be brief.", temperature=1.5)
    list(agent.run_turn("second"))
    second = llm.chat_requests()[-1]
    assert second["temperature"] == 1.5 and second["messages"][0]["content"].endswith("Be brief.")
    ChatSession.objects.filter(pk=agent.session.pk).update(instructions="", temperature=None)
    list(agent.run_turn("third"))
    third = llm.chat_requests()[-1]
    assert "temperature" not in third and HEADING not in third["messages"][0]["content"]


def test_temperature_zero_is_sent_not_taken_for_blank(home, llm):
    agent = AgentSession.open(source="cli")
    ChatSession.objects.filter(pk=agent.session.pk).update(temperature=0.0)
    llm.push(Reply(text="ok"))
    list(agent.run_turn("hi"))
    assert llm.chat_requests()[-1]["temperature"] == 0.0


def test_with_instructions_leaves_the_list_alone_when_blank():
    messages = [{"role": "system", "content": "Base."}, {"role": "user", "content": "hi"}]
    assert with_instructions(messages, "  ") is messages
    changed = with_instructions(messages, "Use metric units.")
    assert changed[0]["content"] == f"Base.\n\n{HEADING}\nUse metric units." and changed[1] is messages[1]
    assert messages[0]["content"] == "Base."  # a copy: the live list is not changed
