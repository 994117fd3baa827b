"""Memory flush and context compression: where the conversation is cut, when it is
compressed, and that neither the flush nor the summary loses a stored message."""

from __future__ import annotations

from typing import Any

import pytest

from agent.chat.runner import AgentSession
from agent.learning.compression import (
    FLUSH_MESSAGE,
    MIN_TAIL,
    SUMMARY_PREFIX,
    TokenCount,
    _split_points,
    compress,
    estimate_tokens,
    flush_memory,
    needs_compression,
)
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, Message
from knowledge.provenance import Provenance
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _msgs(roles: str) -> list[dict[str, Any]]:
    """'s' system, 'u' user, 'a' assistant, 'c' assistant with a tool call, 't' tool result."""
    names = {"s": "system", "u": "user", "a": "assistant", "c": "assistant", "t": "tool"}
    return [{"role": names[r], "content": f"{r}{i}"} for i, r in enumerate(roles)]


def _roles(msgs: list[dict[str, Any]]) -> str:
    return "".join({"system": "s", "user": "u", "assistant": "a", "tool": "t"}[m["role"]] for m in msgs)


# The split is made on the context after the system prompt (the stored rows the model reads).
def test_split_keeps_the_first_n_and_a_tail_of_at_least_eight():
    msgs = _msgs("ua" * 10)
    assert _split_points(msgs, 3) == (3, len(msgs) - MIN_TAIL)


def test_split_never_separates_a_tool_call_from_its_results():
    # The head would end on the results of the call at index 2; the tail would start on a result.
    msgs = _msgs("uac" + "tt" + "uauau" + "c" + "ttt" + "uauau")
    head_end, tail_start = _split_points(msgs, 3)  # type: ignore[misc]
    assert msgs[head_end]["role"] != "tool" and msgs[tail_start]["role"] != "tool"
    assert head_end == 5  # both results stay with their call in the head
    assert msgs[tail_start]["content"] == "c10" and len(msgs) - tail_start >= MIN_TAIL


def test_split_is_none_when_there_is_too_little_in_the_middle():
    assert _split_points(_msgs("ua" * 6), 3) is None
    assert _split_points([], 3) is None


def _stored_session(pairs: int, **fields: Any) -> ChatSession:
    session = ChatSession.objects.create(source="cli", system_prompt="frozen prompt", **fields)
    for i in range(pairs):
        Message.objects.create(session=session, role="user", content=f"question {i}")
        Message.objects.create(session=session, role="assistant", content=f"answer {i}")
    ChatSession.objects.filter(pk=session.pk).update(message_count=2 * pairs, user_turn_count=pairs)
    session.refresh_from_db()
    return session


def test_reported_usage_past_the_threshold_needs_compression(home):
    write_config(home, "model:\n  context_window: 10000\n")
    agent = AgentSession.open(session_id=_stored_session(2).pk)
    agent.session.last_prompt_tokens = 4999
    assert not needs_compression(agent)
    agent.session.last_prompt_tokens = 5001
    assert needs_compression(agent)
    write_config(home, "model:\n  context_window: 10000\ncompression:\n  enabled: false\n")
    agent = AgentSession.open(session_id=agent.session.pk)
    agent.session.last_prompt_tokens = 9999
    assert not needs_compression(agent)


def test_without_reported_usage_the_character_estimate_decides(home):
    write_config(home, "model:\n  context_window: 1000\ncompression:\n  threshold: 0.5\n")
    agent = AgentSession.open(session_id=_stored_session(1).pk)
    assert agent.session.last_prompt_tokens == 0
    assert not needs_compression(agent)
    agent.messages.append({"role": "user", "content": "x" * 2400})  # ~600 tokens at 4 chars each
    assert needs_compression(agent)


def _flush_reply(body: dict[str, Any]) -> Reply:
    if body["messages"][-1]["content"].startswith(FLUSH_MESSAGE):
        call = {"name": "memory", "arguments": {"target": "user", "action": "add", "content": "Prefers short answers"}}
        return Reply(tool_calls=[call])
    return Reply(text="ok")


def test_flush_saves_memory_and_leaves_nothing_in_the_conversation(home, llm):
    # The flush's mechanics, over turns that state nothing: its evidence rule is tested in
    # tests/agent/admission/test_provenance.py.
    write_config(home, "learning:\n  evidence: off\nmemory:\n  flush_min_turns: 3\n")
    agent = AgentSession.open(session_id=_stored_session(3).pk)
    before = [dict(m) for m in agent.messages]
    llm.default = _flush_reply
    assert flush_memory(agent)
    assert agent.messages == before
    assert Message.objects.filter(session=agent.session).count() == 6
    assert MemoryStore().entries("user") == ["Prefers short answers"]
    assert KnowledgeChange.objects.get(target="user").actor == "flush"
    sent = llm.chat_requests()
    assert len(sent) == 1 and [t["function"]["name"] for t in sent[0]["tools"]] == ["memory"]


def test_no_flush_below_the_minimum_turns_or_when_disabled(home, llm):
    write_config(home, "memory:\n  flush_min_turns: 4\n")
    agent = AgentSession.open(session_id=_stored_session(3).pk)
    assert not flush_memory(agent)
    write_config(home, "memory:\n  flush_min_turns: 0\n")
    assert not flush_memory(AgentSession.open(session_id=agent.session.pk))
    assert llm.chat_requests() == []


def test_compress_summarises_the_middle_and_keeps_the_stored_history(home, llm):
    write_config(home, "memory:\n  flush_min_turns: 0\n")
    session = _stored_session(10)
    MemoryStore().add("memory", "Saved during the session", Provenance(actor="agent"))
    agent = AgentSession.open(session_id=session.pk)
    llm.push(Reply(text="They talked about questions 3 to 5."))
    assert compress(agent)
    msgs = agent.messages
    assert _roles(msgs) == "s" + "uau" + "u" + "ua" * 4
    assert [m["content"] for m in msgs[1:4]] == ["question 0", "answer 0", "question 1"]
    assert msgs[4]["content"] == SUMMARY_PREFIX + "They talked about questions 3 to 5."
    assert msgs[-1]["content"] == "answer 9" and msgs[5]["content"] == "question 6"
    # The system prompt is rebuilt once, so memory saved mid-session shows up.
    assert "Saved during the session" in msgs[0]["content"]
    assert "tools" not in llm.chat_requests()[-1]  # a summary is a plain completion
    stored = ChatSession.objects.get(pk=session.pk)
    assert Message.objects.filter(session=session).count() == 20
    assert stored.compression_count == 1 and stored.system_prompt == msgs[0]["content"]
    assert AgentSession.open(session_id=session.pk).messages == msgs  # a restart resumes the same context


def test_a_failed_summary_call_falls_back_to_the_users_questions(home, llm):
    write_config(home, "memory:\n  flush_min_turns: 0\nmodel:\n  max_retries: 0\n")
    agent = AgentSession.open(session_id=_stored_session(10).pk)
    llm.push(Reply(status=400, error_message="bad request"))
    assert compress(agent)
    summary = agent.messages[4]["content"]
    assert summary.startswith(SUMMARY_PREFIX + "Earlier, the user asked about:")
    assert "- question 2" in summary and "- question 5" in summary


def test_the_kept_token_count_follows_a_growing_and_a_rewritten_conversation():
    count = TokenCount()
    messages = [{"role": "system", "content": "s" * 400}, {"role": "user", "content": "hello"}]
    assert count(messages) == estimate_tokens(messages)
    messages.append({"role": "assistant", "content": "x" * 2400})
    assert count(messages) == estimate_tokens(messages)
    messages[1:] = [{"role": "user", "content": "a summary"}]  # what compression does
    assert count(messages) == estimate_tokens(messages) < 200
    del messages[1:]
    assert count(messages) == estimate_tokens(messages)


def test_a_summary_answered_as_server_sent_events_is_used(home, llm):
    # Servers such as KAITO answer a plain (stream=false) request with an SSE stream.
    from tests.wire.gateways import CASES

    case = next(c for c in CASES if c.name == "kaito_plain_request_answered_with_sse")
    write_config(home, "memory:\n  flush_min_turns: 0\n")
    agent = AgentSession.open(session_id=_stored_session(10).pk)
    llm.push(Reply(raw=case.raw))
    assert compress(agent)
    assert agent.messages[4]["content"] == SUMMARY_PREFIX + case.answer
