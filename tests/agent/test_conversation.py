"""The model's view of a chat is derived from its stored rows: what a running agent reads is what
the chat reopened from the database reads, through compressions, /skill questions and continues."""

from __future__ import annotations

from typing import Any

import pytest

from agent.chat.runner import AgentSession
from agent.conversation import CONTINUE_PROMPT, Conversation
from agent.learning.compression import SUMMARY_PREFIX, compress
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _chat(pairs: int) -> ChatSession:
    session = ChatSession.objects.create(source="cli", system_prompt="frozen prompt")
    parent = None
    for i in range(pairs):
        q = Message.objects.create(session=session, parent=parent, role="user", content=f"question {i}")
        parent = Message.objects.create(session=session, parent=q, role="assistant", content=f"answer {i}")
    ChatSession.objects.filter(pk=session.pk).update(message_count=2 * pairs, user_turn_count=pairs)
    session.refresh_from_db()
    return session


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content")) for m in messages]


def test_every_message_the_model_reads_names_the_row_it_comes_from():
    session = _chat(3)
    entries = Conversation(session).entries()
    rows = list(Message.objects.filter(session=session).order_by("id"))
    assert [pk for pk, _ in entries] == [m.pk for m in rows]
    assert [m["content"] for _, m in entries] == [m.content for m in rows]


def test_a_second_compression_summarises_the_first_summary_and_a_reopened_chat_reads_the_same(home, llm):
    write_config(home, "memory:\n  flush_min_turns: 0\ncompression:\n  protect_first_n: 2\n")
    session = _chat(10)
    agent = AgentSession.open(session_id=session.pk)
    llm.push(Reply(text="First summary: questions 1 to 5."))
    assert compress(agent)
    for i in range(10, 16):  # the chat goes on after the first compression
        q = Message.objects.create(session=session, parent_id=agent.leaf_id, role="user", content=f"question {i}")
        a = Message.objects.create(session=session, parent=q, role="assistant", content=f"answer {i}")
        agent.conversation.stored(a.pk)
    agent.conversation.rederive()
    llm.push(Reply(text="Second summary: everything up to question 11."))
    assert compress(agent)
    transcript = llm.chat_requests()[-1]["messages"][-1]["content"]
    assert "First summary: questions 1 to 5." in transcript  # the earlier summary is summarised again
    texts = _texts(agent.messages)
    assert texts[1:3] == ["question 0", "answer 0"]
    assert texts[3] == SUMMARY_PREFIX + "Second summary: everything up to question 11."
    assert texts[-1] == "answer 15" and "First summary" not in " ".join(texts)
    assert AgentSession.open(session_id=session.pk).messages == agent.messages


def test_a_skill_question_is_read_expanded_after_a_compression(home, llm):
    write_config(home, "memory:\n  flush_min_turns: 0\ncompression:\n  protect_first_n: 2\n")
    session = _chat(10)
    agent = AgentSession.open(session_id=session.pk)
    q = Message.objects.create(session=session, parent_id=agent.leaf_id, role="user", content="/deploy staging")
    agent.conversation.stored(q.pk)
    agent.conversation.ask(q, "Follow the deploy skill: build, push, migrate. Target: staging")
    llm.push(Reply(text="A summary."))
    assert compress(agent)
    assert agent.messages[-1]["content"] == "Follow the deploy skill: build, push, migrate. Target: staging"
    assert Message.objects.get(pk=q.pk).content == "/deploy staging"  # the chat keeps what was typed


def test_the_continue_instruction_is_the_running_turns_only():
    session = _chat(2)
    conversation = Conversation(session)
    conversation.continue_answer()
    assert conversation.messages[-1] == {"role": "user", "content": CONTINUE_PROMPT}
    answer = Message.objects.filter(session=session, role="assistant").last()
    assert answer is not None
    Message.objects.filter(pk=answer.pk).update(content="answer 1, continued")
    conversation.turn_ended()
    assert _texts(conversation.messages)[-1] == "answer 1, continued"
    assert conversation.messages == Conversation(session).messages


def test_going_on_from_another_version_reads_only_that_version():
    session = _chat(3)
    first_answer = Message.objects.filter(session=session, role="assistant").first()
    assert first_answer is not None
    conversation = Conversation(session)
    conversation.go_to(first_answer.pk)
    assert _texts(conversation.messages) == ["frozen prompt", "question 0", "answer 0"]
    conversation.go_to(0)  # the first question edited: nothing before it
    assert _texts(conversation.messages) == ["frozen prompt"]
