"""Ending a chat in the background ("New chat"): the memory flush runs off the request path and
exactly once per session, however often it is asked for."""

from __future__ import annotations

import logging

import pytest

from agent.chat import session_end
from agent.chat.runner import AgentSession
from knowledge.history import session_ends
from knowledge.history.waiting import poll_until
from knowledge.models import ChatSession, KnowledgeChange
from tests.conftest import write_config
from tests.fakellm import Reply
from tests.learning import SAVE_USER_PREF, is_flush

pytestmark = pytest.mark.django_db(transaction=True)

FLUSH_AFTER_ONE_TURN = "memory:\n  nudge_interval: 0\n  flush_min_turns: 1\nskills:\n  creation_nudge_interval: 0\n"


def _chat(home, llm) -> str:
    write_config(home, FLUSH_AFTER_ONE_TURN)
    llm.when(is_flush, Reply(tool_calls=[SAVE_USER_PREF]))
    agent = AgentSession.open(source="web")
    list(agent.run_turn("I use Debian base images"))
    agent.close()
    return agent.session.pk


def _flushes(llm) -> int:
    return sum(1 for body in llm.chat_requests() if is_flush(body))


def _user_md(home) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_new_chat_pressed_twice_flushes_the_previous_chat_once(home, llm):
    session_id = _chat(home, llm)
    assert session_end.end_in_background(session_id, "new session")
    assert not session_end.end_in_background(session_id, "new session")  # the other tab's press
    assert poll_until(lambda: ChatSession.objects.get(pk=session_id).ended_at is not None, 30)
    session = ChatSession.objects.get(pk=session_id)
    assert session.end_reason == "new session"
    assert _flushes(llm) == 1
    assert _user_md(home).count("Prefers Debian base images") == 1
    assert KnowledgeChange.objects.filter(actor="flush").count() == 1
    assert not session_end.end_in_background(session_id, "new session")  # ended: nothing more


def test_a_job_delivered_again_or_to_another_worker_does_nothing(home, llm):
    session_id = _chat(home, llm)
    assert session_ends.request(session_id, "new session", session_ends.IN_QUEUE)
    assert session_end.end_session(session_id, "host-a:1")
    assert not session_end.end_session(session_id, "host-a:1")
    assert not session_end.end_session(session_id, "host-b:2")
    assert _flushes(llm) == 1


def test_a_session_deleted_before_its_end_is_logged_and_skipped(home, llm, caplog):
    session_id = _chat(home, llm)
    assert session_ends.request(session_id, "new session", session_ends.IN_QUEUE)
    ChatSession.objects.filter(pk=session_id).delete()
    with caplog.at_level(logging.INFO, logger="agent.chat.session_end"):
        assert not session_end.end_session(session_id, "host-a:1")
    assert _flushes(llm) == 0
