"""The learning loop leaves a private chat alone, in-process (the whole path through daphne is
tests/agent/learning/test_private_chat_live.py): its turns start no review and move no counter, its
flush never runs, its memory providers hear nothing, its skill uses are not recorded; switched back
mid-way, it is learned from again."""

from __future__ import annotations

from typing import Any

import pytest

from agent.chat.runner import AgentSession, TurnSaved
from agent.learning.compression import flush_memory
from agent.learning.providers import MemoryProvider, ProviderManager
from agent.learning.review import spawn_review
from agent.toolset import build_registry
from foundation import config as hermes_config
from knowledge import private_chats
from knowledge.models import ChatSession, ReviewRun, SkillOutcome
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM
from tests.learning import is_flush, review_kind

pytestmark = pytest.mark.django_db(transaction=True)


class Recorder(MemoryProvider):
    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def prefetch(self, user_message: str) -> str:
        self.calls.append("prefetch")
        return "recalled"

    def queue_prefetch(self, user_message: str) -> None:
        self.calls.append("queue_prefetch")

    def sync_turn(self, user_message: str, final_response: str) -> None:
        self.calls.append("sync_turn")

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.calls.append("on_session_end")


def _saved(agent: AgentSession, text: str) -> TurnSaved:
    """Run a turn; what it reports once stored (its last event)."""
    last = list(agent.run_turn(text))[-1]
    assert isinstance(last, TurnSaved)
    return last


def _private_agent(recorder: Recorder) -> AgentSession:
    agent = AgentSession.open(source="cli")
    private_chats.set_private(agent.session.pk, True)
    agent.providers = ProviderManager([recorder], agent.session.pk)
    return agent


def test_ten_turns_of_a_private_chat_start_no_review_and_tell_no_provider(home, llm: ScriptedLLM) -> None:
    write_config(home, "memory:\n  flush_min_turns: 1\n")
    recorder = Recorder()
    agent = _private_agent(recorder)
    for i in range(10):
        saved = _saved(agent, f"private turn {i}")
        assert saved.review_spawned is False and saved.turns_until_memory_review is None
    agent.providers.wait_idle()
    agent.end("test")
    assert not ReviewRun.objects.exists()
    assert recorder.calls == []
    assert not [b for b in llm.chat_requests() if review_kind(b) or is_flush(b)]
    assert "<memory-context>" not in str(llm.chat_requests())
    row = ChatSession.objects.get(pk=agent.session.pk)
    assert (row.turns_since_memory, row.iters_since_skill) == (0, 0)


def test_switched_back_the_chat_is_learned_from_again(home, llm: ScriptedLLM) -> None:
    recorder = Recorder()
    agent = _private_agent(recorder)
    list(agent.run_turn("still private"))
    private_chats.set_private(agent.session.pk, False)
    saved = _saved(agent, "not private any more")
    agent.providers.wait_idle()
    assert saved.turns_until_memory_review == 9  # the first counted turn
    assert recorder.calls == ["prefetch", "sync_turn", "queue_prefetch"]


def test_a_private_chat_is_never_flushed(home, llm: ScriptedLLM) -> None:
    write_config(home, "memory:\n  flush_min_turns: 1\n")
    agent = AgentSession.open(source="cli")
    list(agent.run_turn("something to remember"))
    private_chats.set_private(agent.session.pk, True)  # on another page, after this agent's last turn
    before = len(llm.chat_requests())
    assert flush_memory(agent) is False
    assert len(llm.chat_requests()) == before


def test_no_review_of_a_private_chat_is_started_whatever_asks(home, llm: ScriptedLLM) -> None:
    session = ChatSession.objects.create(title="Private", private=True)
    config = hermes_config.get()
    future = spawn_review(
        session_id=session.pk,
        snapshot=[{"role": "user", "content": "hello"}],
        review_memory=True,
        review_skills=True,
        config=config,
        registry=build_registry(config),
        client_factory=None,
        trigger="request",
    )
    assert future.result(timeout=1) is None
    assert not ReviewRun.objects.exists() and llm.chat_requests() == []


def test_a_private_chats_skill_uses_are_not_recorded(home, llm: ScriptedLLM) -> None:
    (home / "skills" / "tank-care").mkdir(parents=True)
    (home / "skills" / "tank-care" / "SKILL.md").write_text(
        "---\nname: tank-care\ndescription: Looks after the tank\n---\nStep one.\n", encoding="utf-8"
    )
    llm.push(Reply(tool_calls=[{"name": "skill_view", "arguments": {"name": "tank-care"}}]), Reply(text="done"))
    agent = _private_agent(Recorder())
    list(agent.run_turn("how do I clean the tank?"))
    assert not SkillOutcome.objects.exists()
