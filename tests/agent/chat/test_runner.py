"""The session runner: frozen system prompt, slash invocation, stored history."""

from __future__ import annotations

import pytest

from agent.chat.runner import AgentSession, InputTooLarge, TurnShape
from agent.learning.providers import MemoryProvider, ProviderManager
from knowledge.models import Message
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

SKILL = "---\nname: deploy-check\ndescription: Pre-deploy checklist\n---\n# Checklist\n1. Run migrations on staging first.\n"


def test_system_prompt_is_byte_identical_for_every_turn_of_a_session(home, llm):
    llm.push(
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {"target": "memory", "action": "add", "content": "Deploys on Fridays are banned"},
                }
            ]
        ),
        Reply(text="noted"),
    )
    agent = AgentSession.open(source="cli")
    for text in ("Remember: deploys on Fridays are banned here", "two", "three"):
        list(agent.run_turn(text))
    prompts = {body["messages"][0]["content"] for body in llm.chat_requests()}
    assert len(prompts) == 1  # the write landed on disk but not in this session's prompt
    assert "Deploys on Fridays are banned" in (home / "memories" / "MEMORY.md").read_text()
    fresh = AgentSession.open(source="cli")
    assert "Deploys on Fridays are banned" in fresh.session.system_prompt


class RecordingProvider(MemoryProvider):
    name = "recording"

    def __init__(self) -> None:
        self.synced: list[tuple[str, str]] = []

    def prefetch(self, user_message: str) -> str:
        return ""

    def sync_turn(self, user_message: str, final_response: str) -> None:
        self.synced.append((user_message, final_response))


def test_slash_invocation_expands_for_the_model_only(home, llm):
    SkillStore().create("deploy-check", SKILL, prov=Provenance(actor="user"))
    llm.push(Reply(text="checked"))
    agent = AgentSession.open(source="cli")
    provider = RecordingProvider()
    agent.providers = ProviderManager([provider])
    list(agent.run_turn("/deploy-check the billing service"))
    sent = llm.chat_requests()[-1]["messages"][-1]["content"]
    assert "Run migrations on staging first." in sent and "the billing service" in sent
    stored = Message.objects.get(session=agent.session, role="user")
    assert stored.content == "/deploy-check the billing service"
    agent.providers.wait_idle()  # a turn's sync is handed to the provider's own thread
    assert provider.synced == [("/deploy-check the billing service", "checked")]


def test_oversized_and_empty_messages_are_refused_before_anything_is_stored(home, llm):
    write_config(home, "agent:\n  max_message_chars: 100\n")
    agent = AgentSession.open(source="cli")
    with pytest.raises(InputTooLarge, match="limit is 100"):
        list(agent.run_turn("x" * 101))
    with pytest.raises(InputTooLarge, match="empty"):
        list(agent.run_turn("   "))
    assert not Message.objects.filter(session=agent.session).exists()
    assert llm.chat_requests() == []


class Stepping:
    """A clock that moves on by `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


ANSWER = "Exit code 137 means the kernel's OOM killer stopped the process; raise the memory limit."


def _assistant_rows(agent: AgentSession) -> list[tuple[str, str]]:
    return list(Message.objects.filter(session=agent.session, role="assistant").values_list("content", "finish_reason"))


def test_a_checkpointed_answer_is_stored_once_and_the_session_counts_it_once(home, llm):
    llm.push(Reply(tool_calls=[{"name": "skills_list", "arguments": {}}]), Reply(text=ANSWER))
    agent = AgentSession.open(source="cli", clock=Stepping(0.4))  # a checkpoint every few chunks
    list(agent.run_turn("why exit 137?"))
    assert _assistant_rows(agent) == [("", "tool_calls"), (ANSWER, "stop")]
    agent.session.refresh_from_db()
    assert agent.session.message_count == Message.objects.filter(session=agent.session).count() == 4
    assert agent.is_current(
        TurnShape.read(agent.session.pk)
    )  # the cached agent knows every row it made, the checkpoint included


def test_an_answer_cut_off_mid_stream_keeps_one_row_marked_as_the_error(home, llm):
    write_config(home, "model:\n  max_retries: 0\n")
    llm.push(Reply(text=ANSWER, cut_off=True))
    agent = AgentSession.open(source="cli", clock=Stepping(0.4))
    list(agent.run_turn("why exit 137?"))
    ((content, reason),) = _assistant_rows(agent)
    assert reason == "error" and content and ANSWER.startswith(content)
