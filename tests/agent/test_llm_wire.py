"""The recorded shapes of real servers (tests/wire/), through the real `openai` client and the loop."""

from __future__ import annotations

import json

import pytest

from agent.llm import ChatClient, LLMError, MemoryCapabilityStore
from agent.loop import AgentLoop, ModelCalled, ModelNotice, ReasoningDelta, TextDelta, ToolFinished, TurnDone, TurnError
from agent.tools.registry import Tool, ToolContext, ToolRegistry
from agent.tools.results import ToolResult
from tests.fakellm import Reply, ScriptedLLM
from tests.wire import ANSWER_CASES, CASES, ERROR_CASES, TOOL_CASES, WireCase
from tests.wire.replay import FOLLOW_UP, replay

# Wire markup of any model family: none of it may reach the person as the answer.
MARKUP = ("<tool_call>", "<function=", "<parameter", "<|", "<｜", "[TOOL_CALLS]", "<think>", "</think>")


def _memory_tool(saved: list[str]) -> Tool:
    def handler(args, ctx):
        saved.append(args["content"])
        return ToolResult.success(changed=True, message="Memory updated")

    schema = {"type": "object", "properties": {"target": {"type": "string"}, "content": {"type": "string"}}}
    return Tool("memory", "save a note", schema, handler, parallel_safe=True)


def _turn(case: WireCase, saved: list[str] | None = None):
    server = ScriptedLLM()
    server.start()
    try:
        replay(server, case)
        client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
        loop = AgentLoop(client, ToolRegistry([_memory_tool(saved if saved is not None else [])]), ToolContext())
        messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "remember this"}]
        events = list(loop.run(messages))
        client.close()
        return events, server.chat_requests(), messages
    finally:
        server.stop()


def _joined(events, kind) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


@pytest.mark.parametrize("case", TOOL_CASES, ids=str)
def test_tool_calling_shape_runs_every_call_it_asked_for(case):
    saved: list[str] = []
    events, requests, _ = _turn(case, saved)
    assert sorted(saved) == sorted(case.saves), events
    assert isinstance(events[-1], TurnDone) and events[-1].final_text == FOLLOW_UP
    assert all(e.ok for e in events if isinstance(e, ToolFinished))
    shown = _joined(events, TextDelta)
    assert not [m for m in MARKUP if m in shown], shown
    assert not [e for e in events if isinstance(e, ModelNotice)]  # every call was readable
    # the results went back with the calls they answer, one per call
    follow = requests[-1]["messages"]
    asked = [tc["id"] for m in follow if m.get("tool_calls") for tc in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in follow if m["role"] == "tool"]
    assert len(asked) == len(case.saves) and sorted(asked) == sorted(answered) and len(set(asked)) == len(asked)


@pytest.mark.parametrize("case", [c for c in TOOL_CASES if c.reasoning], ids=str)
def test_reasoning_is_sent_back_on_the_next_request(case):
    events, requests, _ = _turn(case)
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ModelCalled))
    assert _joined(events[:first_call], ReasoningDelta) == case.reasoning
    assistant = next(m for m in requests[-1]["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == case.reasoning
    assert case.reasoning not in (assistant.get("content") or "")


@pytest.mark.parametrize("case", ANSWER_CASES, ids=str)
def test_answer_shape_shows_the_answer_and_keeps_thinking_apart(case):
    events, _, messages = _turn(case)
    done = events[-1]
    assert isinstance(done, TurnDone) and done.final_text == case.answer
    assert _joined(events, TextDelta) == case.answer
    assert _joined(events, ReasoningDelta) == case.reasoning
    assert messages[-1]["content"] == case.answer
    usage = next(e.usage for e in events if isinstance(e, ModelCalled))
    if case.prompt_tokens is not None:
        assert usage.reported and usage.prompt_tokens == case.prompt_tokens
    else:
        assert not usage.reported  # compression falls back to its character estimate


@pytest.mark.parametrize("case", ERROR_CASES, ids=str)
def test_error_shape_ends_the_turn_with_its_readable_message_once(case):
    events, _, _ = _turn(case)
    err = events[-1]
    assert isinstance(err, TurnError), events
    assert err.message.count(case.error) == 1, err.message
    assert ".." not in err.message and "{" not in err.message and "Traceback" not in err.message


def test_parallel_calls_sharing_index_0_both_run_in_order():
    case = next(c for c in TOOL_CASES if c.name == "ollama_parallel_calls_share_index_0")
    events, _, _ = _turn(case)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [json.loads(e.arguments)["content"] for e in finished] == list(case.saves)
    assert len({e.call_id for e in finished}) == 2


def test_missing_finish_reason_after_tool_calls_still_runs_them():
    from tests.wire import chunk, memory_json, sse

    raw = sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "memory",
              "arguments": memory_json("no-finish")}}]}))  # fmt: skip
    case = WireCase("no_finish", "synthetic", "-", 5, raw, stream=True, saves=("no-finish",))
    saved: list[str] = []
    _turn(case, saved)
    assert saved == ["no-finish"]


def test_capabilities_learned_by_one_client_are_used_by_the_next():
    store = MemoryCapabilityStore()
    store.save("http://x/v1", "m", {"stream_options": False, "tools": False})
    client = ChatClient(base_url="http://x/v1", api_key="k", model="m", capabilities=store)
    body = client.build_request([{"role": "user", "content": "hi"}], [{"type": "function"}], stream=True)
    assert "stream_options" not in body and "tools" not in body and body["stream"] is True
    client.close()


def test_tools_refused_is_said_once():
    from tests.wire.ollama import CASES

    case = next(c for c in CASES if c.refuses == "tools")
    events, requests, _ = _turn(case)
    notices = [e for e in events if isinstance(e, ModelNotice)]
    assert len(notices) == 1 and "cannot call tools" in notices[0].text
    assert isinstance(events[-1], TurnDone) and "tools" not in requests[-1]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_summary_path_reads_the_shape_or_fails_with_a_readable_error(case):
    """`complete()` (compression, titles) gets whatever the server sends for a plain request."""
    server = ScriptedLLM()
    server.start()
    try:
        server.default = lambda body: Reply(raw=case.raw)
        with ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0) as client:
            try:
                summary = client.complete([{"role": "user", "content": "sum up"}])
            except LLMError as err:
                assert case.error or case.refuses or not case.answer, err.message
                assert not case.error or case.error in err.message
                assert "Traceback" not in err.message and "{" not in err.message
                return
    finally:
        server.stop()
    assert not case.error, summary
    if case.answer:
        assert summary == case.answer
    if case.reasoning:
        assert case.reasoning.strip() not in summary


def test_gemini_signature_goes_back_with_its_call_and_the_turn_completes():
    from tests.wire.gemini import CASES as GEMINI
    from tests.wire.gemini import SIGNATURE

    saved: list[str] = []
    events, requests, messages = _turn(GEMINI[0], saved)
    assert isinstance(events[-1], TurnDone) and events[-1].final_text == FOLLOW_UP
    calls = next(m["tool_calls"] for m in requests[-1]["messages"] if m.get("tool_calls"))
    assert calls[0]["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert "extra_content" not in calls[1]  # only what the server sent comes back
    stored = next(m["tool_calls"] for m in messages if m.get("tool_calls"))
    assert stored[0]["extra_content"]["google"]["thought_signature"] == SIGNATURE  # kept for a resumed session


def test_a_call_whose_arguments_cannot_be_read_is_told_to_the_person():
    from tests.wire import chunk, sse

    raw = sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
              "function": {"name": "memory", "arguments": '{"target": "memory", "content": "unfinished'}}]}),
              chunk({}, "tool_calls"))  # fmt: skip
    case = WireCase("broken_args", "synthetic", "-", 12, raw, stream=True)
    saved: list[str] = []
    events, _, _ = _turn(case, saved)
    notices = [e.text for e in events if isinstance(e, ModelNotice)]
    assert notices == ["The model's call to memory could not be read — nothing was saved."]
    assert saved == [] and isinstance(events[-1], TurnDone)


def test_an_html_page_names_the_url_it_came_from():
    case = next(c for c in ERROR_CASES if c.name == "sign_in_page_with_http_200")
    events, _, _ = _turn(case)
    err = events[-1]
    assert isinstance(err, TurnError) and "/v1/chat/completions" in err.message and "HTTP 200" in err.message
