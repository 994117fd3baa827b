"""Requests a server refuses: repeated once without the refused part, remembered per server + model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.llm import ChatClient, MemoryCapabilityStore
from agent.loop import AgentLoop, TurnDone, TurnError
from agent.tools.registry import Tool, ToolContext, ToolRegistry
from agent.tools.results import ToolResult
from tests.fakellm import Reply, ScriptedLLM
from tests.wire import REFUSAL_CASES, error
from tests.wire.replay import replay, uses

LOOP_FEATURES = ("tools", "stream_tools", "system_role", "stream_options")


@pytest.fixture
def server():
    s = ScriptedLLM()
    s.start()
    yield s
    s.stop()


def _tool() -> Tool:
    return Tool("note", "", {"type": "object", "properties": {}}, lambda args, ctx: ToolResult.listing())


def _turn(server: ScriptedLLM, store: MemoryCapabilityStore, text: str) -> list:
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": text}]
    events = list(AgentLoop(client, ToolRegistry([_tool()]), ToolContext()).run(messages))
    client.close()
    return events


@pytest.mark.parametrize("case", [c for c in REFUSAL_CASES if c.refuses in LOOP_FEATURES], ids=str)
def test_refused_feature_is_dropped_once_and_never_sent_again(server, case):
    replay(server, case)
    store = MemoryCapabilityStore()
    first = _turn(server, store, "one")
    assert isinstance(first[-1], TurnDone) and first[-1].final_text == "saved"
    used = uses(case.refuses)
    assert [used(b) for b in server.chat_requests()] == [True, False]
    second = _turn(server, store, "two")  # a new client, as in a new session or process
    assert isinstance(second[-1], TurnDone)
    assert len(server.chat_requests()) == 3 and not used(server.chat_requests()[-1])  # no retry


def test_system_prompt_is_folded_into_the_first_user_message(server):
    case = next(c for c in REFUSAL_CASES if c.refuses == "system_role")
    replay(server, case)
    _turn(server, MemoryCapabilityStore(), "hello")
    sent = server.chat_requests()[-1]["messages"]
    assert [m["role"] for m in sent] == ["user"] and sent[0]["content"] == "You are terse.\n\nhello"


def test_reasoning_refused_by_the_server_is_no_longer_sent_back(server):
    case = next(c for c in REFUSAL_CASES if c.refuses == "reasoning_echo")
    replay(server, case)
    store = MemoryCapabilityStore()
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)
    history = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "thinking"},
        {"role": "user", "content": "c"},
    ]
    assert client.complete(history) == "saved"
    assert [uses("reasoning_echo")(b) for b in server.chat_requests()] == [True, False]
    assert history[1]["reasoning_content"] == "thinking"  # the stored conversation keeps it
    client.close()


def test_signatures_from_another_server_are_dropped_for_a_server_that_refuses_them(server):
    """A chat moved from Gemini or OpenRouter to Mistral: its history carries their signatures,
    which Mistral refuses (422 extra_forbidden, as for reasoning_content)."""
    from tests.wire.mistral import _extra_forbidden

    refusal = error(422, _extra_forbidden("messages", 1, "assistant", "tool_calls", 0, "extra_content", value={}))

    def carries(body: dict) -> bool:
        return any("extra_content" in json.dumps(m) or "reasoning_details" in m for m in body["messages"])

    server.when(carries, Reply(raw=refusal))
    server.default = lambda body: Reply(text="saved")
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
    call = {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"},
            "extra_content": {"google": {"thought_signature": "SIG"}}}  # fmt: skip
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_details": [{"type": "reasoning.text"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "user", "content": "c"},
    ]
    assert client.complete(history) == "saved"
    assert [carries(b) for b in server.chat_requests()] == [True, False]
    assert client.complete(history) == "saved" and not carries(server.chat_requests()[-1])  # remembered
    assert history[1]["tool_calls"][0]["extra_content"]  # the stored conversation keeps them
    client.close()


@pytest.mark.parametrize(
    ("seeded", "refused", "then"), [("max_completion_tokens", "max_completion_tokens", "max_tokens")]
)
def test_max_tokens_field_follows_the_server(server, seeded, refused, then):
    case = next(c for c in REFUSAL_CASES if c.refuses == refused)
    replay(server, case)
    store = MemoryCapabilityStore()
    store.save(server.base_url, "m", {"max_tokens_field": seeded})
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)
    assert client.complete([{"role": "user", "content": "sum up"}], max_tokens=50) == "saved"
    assert server.chat_requests()[-1][then] == 50 and seeded not in server.chat_requests()[-1]
    assert (store.load(server.base_url, "m") or {})["max_tokens_field"] == then
    client.close()


def test_openai_asking_for_max_completion_tokens_is_followed(server):
    msg = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
    server.when(lambda b: "max_tokens" in b, Reply(status=400, error_message=msg))
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
    assert client.complete([{"role": "user", "content": "x"}], max_tokens=20) == "ok"
    assert server.chat_requests()[-1]["max_completion_tokens"] == 20
    client.close()


def test_complete_returns_text_for_content_parts(server):
    from tests.wire.mistral import CASES

    case = next(c for c in CASES if c.name == "litellm_thinking_and_text_parts")
    server.push(Reply(raw=case.raw))
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
    assert client.complete([{"role": "user", "content": "x"}]) == "Hello from LiteLLM."
    client.close()


def test_unrelated_400_is_not_taken_for_a_refusal(server):
    server.default = lambda body: Reply(status=400, error_message="context length exceeded.")
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
    events = list(AgentLoop(client, ToolRegistry([_tool()]), ToolContext()).run([{"role": "user", "content": "x"}]))
    err = events[-1]
    assert isinstance(err, TurnError) and err.message.endswith("context length exceeded.")  # one full stop
    assert len(server.chat_requests()) == 1
    client.close()
