"""Model clients shared per server (agent/clients.py): every session of a process talks to one
server through one `openai` client, and one session closing its client cuts no other off."""

from __future__ import annotations

import pytest

from agent.clients import ClientPool
from agent.llm import LLMError, TextChunk
from foundation import config as hermes_config
from tests.fakellm import Reply


def _answer(client) -> str:
    return "".join(e.text for e in client.stream([{"role": "user", "content": "hi"}]) if isinstance(e, TextChunk))


def test_sessions_on_one_server_share_one_connection_pool(home, llm):
    llm.default = lambda body: Reply(text=f"answer from {body['model']}")
    pool = ClientPool()
    config = hermes_config.get()
    first, second = pool.chat_client(config), pool.chat_client(config, "review-model")
    assert first.openai_client is second.openai_client
    assert _answer(first) == "answer from scripted-model"
    assert _answer(second) == "answer from review-model"  # each keeps its own model


def test_closing_one_sessions_client_leaves_the_others_working(home, llm):
    pool = ClientPool()
    config = hermes_config.get()
    first, second = pool.chat_client(config), pool.chat_client(config)
    first.close()
    assert _answer(second) == "ok"
    assert _answer(pool.chat_client(config)) == "ok"


def test_another_server_or_timeout_gets_its_own_client(home, llm, server, monkeypatch):
    pool = ClientPool()
    config = hermes_config.get()
    here = pool.chat_client(config)
    assert pool.chat_client(config, timeout=5).openai_client is not here.openai_client
    server.default = lambda body: Reply(text="from the other server")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    other = pool.chat_client(hermes_config.get())
    assert other.openai_client is not here.openai_client
    assert _answer(other) == "from the other server"
    assert _answer(here) == "ok"


def test_no_model_configured_is_a_clear_error_and_nothing_is_kept(home, llm, monkeypatch):
    monkeypatch.setenv("HERMES_MODEL", "")
    pool = ClientPool()
    with pytest.raises(LLMError, match="No model is configured"):
        pool.chat_client(hermes_config.get())
