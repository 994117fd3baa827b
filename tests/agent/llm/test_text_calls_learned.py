"""A model whose calls come as text is learned once per server + model and remembered; markup it only
repeats teaches nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent.llm import ChatClient, MemoryCapabilityStore, ModelReply
from tests.fakellm import Reply, ScriptedLLM

TOOLS = [{"type": "function", "function": {"name": "memory", "parameters": {"type": "object", "properties": {}}}}]
CALL = '<tool_call>{"name": "memory", "arguments": {"action": "add", "content": "Uses fish"}}</tool_call>'
ASK = [{"role": "user", "content": "Remember that I use fish."}]


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    s = ScriptedLLM()
    s.start()
    yield s
    s.stop()


def _reply(server: ScriptedLLM, store: MemoryCapabilityStore, text: str) -> ModelReply:
    server.push(Reply(text=text))
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)
    *_, reply = client.stream(ASK, tools=TOOLS)
    assert isinstance(reply, ModelReply)
    return reply


def test_a_reply_that_is_nothing_but_calls_teaches_it_and_a_new_client_remembers(server):
    store = MemoryCapabilityStore()
    reply = _reply(server, store, CALL)
    assert [c.name for c in reply.tool_calls] == ["memory"]
    assert (store.load(server.base_url, "m") or {}).get("text_calls") is True


def test_markup_the_model_only_repeats_after_prose_teaches_nothing_and_runs_nothing(server):
    store = MemoryCapabilityStore()
    reply = _reply(server, store, f"Here is the page, tidied up:\n\n{CALL}")
    assert reply.tool_calls == [] and CALL in reply.content
    assert (store.load(server.base_url, "m") or {}).get("text_calls") is None
