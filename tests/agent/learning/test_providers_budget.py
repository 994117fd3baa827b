"""A memory provider that fails or hangs never harms a turn: the answer arrives and is stored,
nothing handed to the provider is lost, and the settings page says what happened. Also: the
providers hear of a conversation before compression, and mem0 configured where it cannot run
(the optional library missing, no embedding model) is a system check warning and a line on the
settings page, while chats go on without it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core import checks

from agent.chat.runner import AgentSession
from agent.learning import providers
from agent.learning.compression import compress
from agent.learning.providers import MemoryProvider, ProviderManager
from agent.loop import TurnDone
from hermes_site.memory_provider_checks import PROVIDER_UNAVAILABLE, check_memory_provider
from knowledge import mem0_store, memory_providers
from knowledge.models import Message
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _eventually(pred: Callable[[], bool], what: str) -> None:
    """Wait for something another thread does (not a timing assertion: a generous deadline)."""
    deadline = time.monotonic() + 60
    while not pred():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


@pytest.fixture
def states(home: Path) -> Iterator[Path]:
    memory_providers.forget(home)
    yield home
    memory_providers.forget(home)


class Hanging(MemoryProvider):
    """Registered in session_recall's place (config.yaml names only the shipped providers): every
    call waits until the test lets it go."""

    name = "session_recall"
    release = threading.Event()
    made: list[Hanging] = []

    def __init__(self, session_id: str) -> None:
        self.synced: list[tuple[str, str]] = []
        self.asked: list[str] = []
        Hanging.made.append(self)

    def prefetch(self, user_message: str) -> str:
        self.asked.append(user_message)
        self.release.wait()
        return "context that came too late"

    def sync_turn(self, user_message: str, final_response: str) -> None:
        self.release.wait()
        self.synced.append((user_message, final_response))


class Raising(MemoryProvider):
    name = "session_recall"

    def __init__(self, session_id: str) -> None:
        pass

    def prefetch(self, user_message: str) -> str:
        return ""

    def sync_turn(self, user_message: str, final_response: str) -> None:
        raise ConnectionError("the memory service refused the turn")


def _answers(agent: AgentSession, text: str) -> str:
    done = [e for e in agent.run_turn(text) if isinstance(e, TurnDone)]
    assert len(done) == 1
    return done[0].final_text


def test_a_hanging_provider_leaves_every_turn_whole_and_loses_nothing(states, llm, auth_client, monkeypatch):
    monkeypatch.setitem(providers.PROVIDERS, "session_recall", Hanging)
    Hanging.release.clear()
    Hanging.made.clear()
    write_config(states, "memory:\n  provider: session_recall\n  provider_timeout: 0.3\n")
    llm.push(Reply(text="First answer."), Reply(text="Second answer."))
    agent = AgentSession.open(source="cli")
    try:
        assert _answers(agent, "first question") == "First answer."
        assert _answers(agent, "second question") == "Second answer."
        # Both turns went to the model without recalled context, and both are stored.
        assert all("memory-context" not in str(b["messages"][-1]["content"]) for b in llm.chat_requests())
        stored = [m.content for m in Message.objects.filter(session=agent.session).order_by("id")]
        assert stored == ["first question", "First answer.", "second question", "Second answer."]

        page = auth_client.get("/settings/").content.decode()
        assert 'id="provider-session_recall-state">slow<' in page
        assert "prefetch gave no answer within 0.3 s; the chat went on without it" in page
        assert "Last turn given: none yet" in page
    finally:
        Hanging.release.set()
    # Let go, the provider gets every turn it was handed, in order.
    (provider,) = Hanging.made
    _eventually(lambda: len(provider.synced) == 2, "both turns synced")
    assert provider.synced == [("first question", "First answer."), ("second question", "Second answer.")]
    _eventually(lambda: memory_providers.states()[0].last_sync is not None, "the sync recorded")
    # It stays "slow" until it answers a turn in time again (a budget no machine misses, here).
    write_config(states, "memory:\n  provider: session_recall\n  provider_timeout: 300\n")
    llm.push(Reply(text="Third answer."))
    assert _answers(agent, "third question") == "Third answer."
    assert "context that came too late" in llm.chat_requests()[-1]["messages"][-1]["content"]
    # While it hung, the second turn did not queue another prefetch behind the first.
    assert provider.asked == ["first question", "third question"]
    agent.end("test")
    page = auth_client.get("/settings/").content.decode()
    assert 'id="provider-session_recall-state">ok<' in page and "Last turn given: <time" in page


def test_a_failing_provider_leaves_the_turn_whole_and_the_settings_page_says_why(states, llm, auth_client, monkeypatch):
    monkeypatch.setitem(providers.PROVIDERS, "session_recall", Raising)
    write_config(states, "memory:\n  provider: session_recall\n")
    llm.push(Reply(text="Here it is."))
    agent = AgentSession.open(source="cli")
    assert _answers(agent, "a question") == "Here it is."
    agent.end("test")  # waits for what the provider was handed
    assert [m.content for m in Message.objects.filter(session=agent.session).order_by("id")] == [
        "a question",
        "Here it is.",
    ]
    page = auth_client.get("/settings/").content.decode()
    assert 'id="provider-session_recall-state">failing<' in page
    assert "sync_turn: ConnectionError: the memory service refused the turn" in page


def test_providers_hear_the_whole_conversation_before_compression(home, llm):
    class Recorder(MemoryProvider):
        name = "recorder"

        def __init__(self) -> None:
            self.before_compression: list[list[dict[str, Any]]] = []

        def prefetch(self, user_message: str) -> str:
            return ""

        def on_pre_compress(self, messages: list[dict[str, Any]]) -> None:
            self.before_compression.append(messages)

    agent = AgentSession.open(source="cli")
    for i in range(8):
        list(agent.run_turn(f"question number {i}"))
    recorder = Recorder()
    agent.providers = ProviderManager([recorder], agent.session.pk)
    assert compress(agent)
    agent.providers.wait_idle()
    (seen,) = recorder.before_compression
    assert [m["content"] for m in seen if m["role"] == "user"] == [f"question number {i}" for i in range(8)]
    assert "question number 2" not in str(agent.messages)  # the middle is gone from the live list


def test_mem0_without_its_library_is_a_warning_and_chats_go_on(states, llm, auth_client, monkeypatch):
    monkeypatch.setattr(mem0_store, "installed", lambda: False)
    write_config(states, "memory:\n  provider: mem0\nembeddings:\n  model: all-minilm\n")
    (warning,) = check_memory_provider()
    assert warning.id == PROVIDER_UNAVAILABLE and warning.level == checks.WARNING
    assert "memory.provider is mem0, but the mem0ai library is not installed" in warning.msg
    assert "pip install -r requirements-mem0.txt" in str(warning.hint)

    llm.push(Reply(text="Still answering."))
    agent = AgentSession.open(source="cli")
    assert agent.providers.providers == []
    assert _answers(agent, "hello there") == "Still answering."
    agent.end("test")

    page = auth_client.get("/settings/").content.decode()
    assert 'id="provider-mem0-state">unavailable<' in page
    assert "Not running: the mem0ai library is not installed (pip install -r requirements-mem0.txt)" in page
    memory_page = auth_client.get("/memory/").content.decode()
    assert "Cannot list them: the mem0ai library is not installed" in memory_page


def test_mem0_without_an_embedding_model_is_a_warning_naming_the_setting(states, monkeypatch):
    monkeypatch.setattr(mem0_store, "installed", lambda: True)
    write_config(states, "memory:\n  provider: mem0\n")
    (warning,) = check_memory_provider()
    assert "mem0 needs an embedding model: set embeddings.model" in warning.msg
    write_config(states, "memory:\n  provider: session_recall\n")
    assert check_memory_provider() == []


def test_no_provider_says_so_on_the_settings_page(states, auth_client):
    page = auth_client.get("/settings/").content.decode()
    assert 'id="memory-providers-none"' in page
