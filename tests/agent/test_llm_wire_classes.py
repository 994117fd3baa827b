"""Each class of server shape, varied beyond the recorded bytes (tests/wire/): the client must
handle the class (argument streams, framing, template markup, think blocks, HTML pages), not
only the bytes one server was seen to send. The variations are built here from the same parts
the recorded cases use; each names what it varies."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.llm import ChatClient, LLMError, MemoryCapabilityStore
from agent.loop import AgentLoop, ModelNotice, ReasoningDelta, TextDelta, TurnDone, TurnError
from agent.tools.registry import ToolContext, ToolRegistry
from tests.agent.test_llm_wire import MARKUP, _joined, _turn
from tests.fakellm import Raw, Reply, ScriptedLLM
from tests.wire import DONE, WireCase, body, chunk, memory_json, sse

A = memory_json("class-entry")
B = memory_json("class-second")
# Markup of any family, beyond the recorded MARKUP, that must never reach the person.
SHOWN_NEVER = (*MARKUP, "[THINK]", "think>", "think▷", "<|tool_call|>", "functools[", '{"name"')


def _call(args: str, *, cid: str | None = "call_c1", name: str | None = "memory", **extra: Any) -> dict[str, Any]:
    fn = {"arguments": args} if name is None else {"name": name, "arguments": args}
    call: dict[str, Any] = {"index": 0, "type": "function", "function": fn, **extra}
    if cid is not None:
        call["id"] = cid
    return chunk({"tool_calls": [call]})


def _more(args: str) -> dict[str, Any]:
    return _call(args, cid=None, name=None)


def _pieces(text: str, size: int) -> list[dict[str, Any]]:
    return [chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]


def _text(text: str, size: int = 5) -> Raw:
    return sse(*_pieces(text, size), chunk({}, "stop"))


_PRETTY = json.dumps(json.loads(A), indent=2)
_DOUBLE = json.dumps(A)
_EVENTS = [chunk({"role": "assistant", "content": ""}), _call(A), chunk({}, "tool_calls")]
_KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.memory:0<|tool_call_argument_begin|>"
    + A
    + "<|tool_call_end|><|tool_calls_section_end|>"
)
_KIMI_TWO = _KIMI.replace(
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>functions.memory:1<|tool_call_argument_begin|>" + B + "<|tool_call_end|>"
    "<|tool_calls_section_end|>",
)
_GLM = (
    "<tool_call>memory\n<arg_key>target</arg_key>\n<arg_value>memory</arg_value>\n<arg_key>action</arg_key>\n"
    "<arg_value>add</arg_value>\n<arg_key>content</arg_key>\n<arg_value>class-entry</arg_value>\n</tool_call>"
)
_CODER = (
    "<tool_call>\n<function=memory>\n<parameter=target>\nmemory\n</parameter>\n<parameter=action>\nadd\n"
    "</parameter>\n<parameter=content>\nclass-entry\n</parameter>\n</function>\n</tool_call>"
)

TOOL_VARIANTS: dict[str, Raw] = {
    # argument streams: cumulative, repeated whole, in any combination
    "cumulative_without_id_after_the_first": sse(
        _call(A[:10]), *[_more(A[:e]) for e in range(20, len(A), 10)], _more(A), chunk({}, "tool_calls")
    ),
    "cumulative_one_character_at_a_time": sse(*[_call(A[:e]) for e in range(1, len(A) + 1)], chunk({}, "tool_calls")),
    "cumulative_then_the_whole_spaced_differently": sse(
        *[_call(A[:e]) for e in range(8, len(A), 8)], _call(_PRETTY), chunk({}, "tool_calls")
    ),
    "pieces_then_the_whole_twice": sse(
        _call(""), *[_more(A[i : i + 7]) for i in range(0, len(A), 7)], _call(A), _call(A), chunk({}, "tool_calls")
    ),
    "pieces_then_the_whole_without_an_id": sse(
        _call(""), *[_more(A[i : i + 7]) for i in range(0, len(A), 7)], _more(A), chunk({}, "tool_calls")
    ),
    "the_whole_first_then_the_same_in_pieces": sse(
        _call(A), *[_more(A[i : i + 7]) for i in range(0, len(A), 7)], chunk({}, "tool_calls")
    ),
    # arguments encoded as a JSON string, however delivered
    "a_string_literal_whole": sse(_call(_DOUBLE), chunk({}, "tool_calls")),
    "a_string_literal_cumulative": sse(
        *[_call(_DOUBLE[:e]) for e in range(10, len(_DOUBLE), 10)], _call(_DOUBLE), chunk({}, "tool_calls")
    ),  # fmt: skip
    "a_string_literal_of_a_string_literal": sse(_call(json.dumps(_DOUBLE)), chunk({}, "tool_calls")),
    "a_string_literal_in_a_plain_body": Raw(
        body=body(
            {
                "content": None,
                "tool_calls": [{"id": "x", "type": "function", "function": {"name": "memory", "arguments": _DOUBLE}}],
            },
            "tool_calls",
        )
    ),
    # framing: SSE fields and line ends, a body for a stream, JSON lines
    "sse_with_crlf_line_ends": Raw(
        events=["".join("data: " + json.dumps(e) + "\r\n\r\n" for e in _EVENTS) + "data: [DONE]\r\n\r\n"]
    ),  # fmt: skip
    "sse_event_lines_before_data": Raw(
        events=[*("event: message\ndata: " + json.dumps(e) + "\n\n" for e in _EVENTS), DONE]
    ),  # fmt: skip
    "sse_retry_comment_and_named_done": Raw(
        events=["retry: 1000\n\n", ": keep-alive\n\n", *_EVENTS, "event: end\ndata: [DONE]\n\n"]
    ),  # fmt: skip
    "sse_data_without_a_space": Raw(events=[*("data:" + json.dumps(e) + "\n\n" for e in _EVENTS), "data:[DONE]\n\n"]),
    "sse_after_a_byte_order_mark": Raw(events=["\ufeffdata: " + json.dumps(_EVENTS[0]) + "\n\n", *_EVENTS[1:], DONE]),
    "sse_without_done": sse(*_EVENTS, done=False),
    "sse_without_a_content_type": Raw(events=[*_EVENTS, DONE], headers={"Content-Type": ""}),
    "one_body_as_text_plain": Raw(
        body=body(
            {
                "content": None,
                "tool_calls": [{"id": "x", "type": "function", "function": {"name": "memory", "arguments": A}}],
            },
            "tool_calls",
        ),
        headers={"Content-Type": "text/plain"},
    ),  # fmt: skip
    "one_body_pretty_printed": Raw(
        body=json.dumps(
            body(
                {
                    "content": None,
                    "tool_calls": [{"id": "x", "type": "function", "function": {"name": "memory", "arguments": A}}],
                },
                "tool_calls",
            ),
            indent=2,
        ),
        headers={"Content-Type": "application/json"},
    ),  # fmt: skip
    "json_lines": Raw(body="\n".join(json.dumps(e) for e in _EVENTS), headers={"Content-Type": "application/x-ndjson"}),
    # template tool-call markup as the whole answer, cut anywhere (markup after prose, in a fence
    # or in the thinking is never a call: tests/agent/llm/test_echoed_markup.py)
    **{f"kimi_markers_cut_every_{n}": _text(_KIMI, n) for n in (1, 2, 3, 13)},
    "kimi_markers_after_blank_lines": _text("\n\n" + _KIMI + "\n", 4),
    "kimi_markers_with_finish_tool_calls": sse(*_pieces(_KIMI, 5), chunk({}, "tool_calls")),
    "kimi_markers_in_a_plain_body": Raw(body=body({"content": _KIMI})),
    "kimi_markers_two_calls": _text(_KIMI_TWO, 7),
    "hermes_call_cut_every_4": _text('<tool_call>\n{"name": "memory", "arguments": ' + A + "}\n</tool_call>", 4),
    "hermes_call_after_a_think_block": _text(
        '<think>\nhmm\n</think>\n\n<tool_call>\n{"name": "memory", "arguments": ' + A + "}\n</tool_call>", 4
    ),  # fmt: skip
    "deepseek_v31_markers": _text(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>memory<｜tool▁sep｜>"
        + A
        + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),  # fmt: skip
    "mistral_named_call": _text("[TOOL_CALLS]memory[ARGS]" + A),
    "mistral_list_of_calls": _text('[TOOL_CALLS][{"name": "memory", "arguments": ' + A + "}]"),
    "llama_python_tag": _text('<|python_tag|>{"name": "memory", "parameters": ' + A + "}<|eom_id|>"),
    "granite_tool_call_token": _text('<|tool_call|>[{"name": "memory", "arguments": ' + A + "}]", 6),
    "phi4_functools_list": _text('functools[{"name": "memory", "arguments": ' + A + "}]", 6),
    "bare_call_object_cut_every_6": _text('{"name": "memory", "parameters": ' + A + "}", 6),
    "bare_call_objects_in_a_list_with_an_end_token": _text('[{"name": "memory", "arguments": ' + A + "}]<|eot_id|>"),
    "glm_arg_keys": _text(_GLM, 6),
    "gpt_oss_commentary_channel": _text(
        "<|channel|>analysis<|message|>Need to save.<|end|><|start|>assistant"
        "<|channel|>commentary to=functions.memory <|constrain|>json<|message|>" + A + "<|call|>",
        6,
    ),  # fmt: skip
    "qwen3_coder_parameters": _text(_CODER, 6),
    "qwen3_coder_function_without_a_tool_call_wrapper": _text(
        _CODER.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>"), 7
    ),
    "think_block_then_kimi_markers_cut_every_1": _text("<think>plan</think>" + _KIMI, 1),
    # think blocks of every family before a call
    "think_brackets_before_a_call": sse(
        *_pieces("[THINK]I should save it.[/THINK]", 3), _call(A), chunk({}, "tool_calls")
    ),  # fmt: skip
    "seed_think_before_a_call": sse(*_pieces("<seed:think>plan</seed:think>", 3), _call(A), chunk({}, "tool_calls")),
    "kimi_vl_think_before_a_call": sse(*_pieces("◁think▷plan◁/think▷", 2), _call(A), chunk({}, "tool_calls")),
    "think_block_after_blank_lines_cut_every_1": sse(
        *_pieces("\n\n<think>\nplan\n</think>\n\n", 1), _call(A), chunk({}, "tool_calls")
    ),  # fmt: skip
    # provider fields on the call
    "signature_on_the_call_with_its_id": sse(
        _call(A, extra_content={"google": {"thought_signature": "SIG"}}), chunk({}, "stop")
    ),  # fmt: skip
    "signature_in_a_plain_body": Raw(
        body=body(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "fc1",
                        "type": "function",
                        "function": {"name": "memory", "arguments": A},
                        "extra_content": {"google": {"thought_signature": "SIG"}},
                    }
                ],
            },
            "tool_calls",
        )
    ),  # fmt: skip
    "cumulative_two_parallel_calls": sse(
        *[
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c0",
                            "type": "function",
                            "function": {"name": "memory", "arguments": A[:e]},
                        },
                        {
                            "index": 1,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "memory", "arguments": B[:e]},
                        },
                    ]
                }
            )
            for e in [*range(10, max(len(A), len(B)), 10), 10**6]
        ],
        chunk({}, "tool_calls"),
    ),  # fmt: skip
}
TWO_CALLS = {"kimi_markers_two_calls", "cumulative_two_parallel_calls"}


def _is_stream(raw: Raw) -> bool:
    return raw.events is not None or raw.headers.get("Content-Type") in ("text/plain", "application/json",
                                                                         "application/x-ndjson")  # fmt: skip


@pytest.mark.parametrize("name", sorted(TOOL_VARIANTS))
def test_each_variation_saves_the_entry_and_shows_no_markup(name):
    raw = TOOL_VARIANTS[name]
    saves = ("class-entry", "class-second") if name in TWO_CALLS else ("class-entry",)
    saved: list[str] = []
    events, _, _ = _turn(WireCase(name, "variation", "-", 0, raw, stream=_is_stream(raw), saves=saves), saved)
    shown = _joined(events, TextDelta)
    assert sorted(saved) == sorted(saves), (events[-3:], shown)
    assert not [m for m in SHOWN_NEVER if m in shown], shown
    assert isinstance(events[-1], TurnDone)
    assert not [e for e in events if isinstance(e, ModelNotice)]


@pytest.mark.parametrize("name", sorted(TOOL_VARIANTS))
def test_the_summary_path_never_returns_markup(name):
    """A summary request offers no tools; whatever a server sends for it, no markup comes back."""
    server = ScriptedLLM()
    server.start()
    try:
        server.default = lambda body: Reply(raw=TOOL_VARIANTS[name])
        with ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0) as client:
            summary = client.complete([{"role": "user", "content": "sum up"}])
    finally:
        server.stop()
    assert not [m for m in SHOWN_NEVER if m in summary], summary


_PAGE = "<!DOCTYPE html><html><head><title>Access denied</title></head><body>no</body></html>"
_PAGE_NAMED = "an HTML page (“Access denied”), likely a proxy"
ERROR_VARIANTS: dict[str, tuple[Raw, str]] = {
    "html_after_blank_lines": (
        Raw(status=200, body="\n\n  " + _PAGE, headers={"Content-Type": "text/html"}),
        _PAGE_NAMED,
    ),
    "html_without_a_content_type": (Raw(status=200, body=_PAGE, headers={"Content-Type": ""}), _PAGE_NAMED),
    "html_labelled_json": (Raw(status=200, body=_PAGE, headers={"Content-Type": "application/json"}), _PAGE_NAMED),
    "html_after_a_comment": (
        Raw(status=200, body="<!-- proxy -->\n" + _PAGE, headers={"Content-Type": "text/html"}),
        _PAGE_NAMED,
    ),  # fmt: skip
    "html_without_a_title": (
        Raw(status=200, body="<html><body><h1>Login</h1></body></html>", headers={"Content-Type": "text/html"}),
        "an HTML page, likely a proxy",
    ),  # fmt: skip
    "html_after_a_byte_order_mark": (
        Raw(
            status=200, body="\ufeff<!doctype html>" + _PAGE[15:], headers={"Content-Type": "text/html; charset=utf-8"}
        ),
        _PAGE_NAMED,
    ),  # fmt: skip
    "html_with_403": (Raw(status=403, body=_PAGE, headers={"Content-Type": "text/html"}), _PAGE_NAMED),
    "html_with_502": (Raw(status=502, body=_PAGE, headers={"Content-Type": "text/html"}), _PAGE_NAMED),
    "plain_text_with_200": (
        Raw(status=200, body="Unauthorized", headers={"Content-Type": "text/plain"}),
        "not a valid chat completion (it began “Unauthorized”)",
    ),  # fmt: skip
    "error_event_in_a_stream": (
        Raw(events=['event: error\ndata: {"error": {"message": "upstream overloaded"}}\n\n']),
        "reported an error while answering: upstream overloaded",
    ),  # fmt: skip
    "error_object_with_200": (
        Raw(status=200, body={"error": {"message": "quota exhausted", "code": 429}}),
        "reported an error while answering: quota exhausted",
    ),  # fmt: skip
    "empty_json_body": (
        Raw(status=200, body="", headers={"Content-Type": "application/json"}),
        "empty or unreadable reply",
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(ERROR_VARIANTS))
def test_each_error_variation_is_one_readable_sentence_in_the_turn_and_the_summary(name):
    raw, words = ERROR_VARIANTS[name]
    server = ScriptedLLM()
    server.start()
    try:
        server.default = lambda body: Reply(raw=raw)
        with ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0) as client:
            events = list(AgentLoop(client, ToolRegistry([]), ToolContext()).run([{"role": "user", "content": "hi"}]))
            with pytest.raises(LLMError) as summary:
                client.complete([{"role": "user", "content": "sum up"}])
    finally:
        server.stop()
    err = events[-1]
    assert isinstance(err, TurnError) and err.message.count(words) == 1, err
    assert words in summary.value.message
    assert "Traceback" not in err.message and "{" not in err.message


def test_a_template_that_opens_the_think_block_streams_thinking_as_thinking_once_learned():
    thought, answer = "Plan the greeting.\n", "Hello there."
    raw = _text(thought + "</think>\n\n" + answer, 4)
    store = MemoryCapabilityStore()
    server = ScriptedLLM()
    server.start()
    url = server.base_url
    try:
        server.default = lambda body: Reply(raw=raw)
        runs = []
        for _ in range(2):
            with ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store) as c:
                runs.append(
                    list(AgentLoop(c, ToolRegistry([]), ToolContext()).run([{"role": "user", "content": "hi"}]))
                )
        server.default = lambda body: Reply(raw=_text("No thinking this time.", 4))
        with ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store) as c:
            plain = list(AgentLoop(c, ToolRegistry([]), ToolContext()).run([{"role": "user", "content": "hi"}]))
    finally:
        server.stop()
    first, second = runs
    assert isinstance(first[-1], TurnDone) and first[-1].final_text == answer
    assert "</think>" not in _joined(first, TextDelta)
    assert [e.text for e in first if isinstance(e, ModelNotice)][0].startswith("The start of that reply was")
    # learned: the next reply streams its thinking as thinking, and says nothing more
    assert _joined(second, TextDelta) == answer and _joined(second, ReasoningDelta) == thought
    assert not [e for e in second if isinstance(e, ModelNotice)]
    # a reply that never closes the block was the answer after all, and the finding is dropped
    assert isinstance(plain[-1], TurnDone) and plain[-1].final_text == "No thinking this time."
    assert (store.load(url, "m") or {})["think_opened"] == ""


def test_prose_that_holds_an_object_with_a_name_is_an_answer():
    raw = _text('{"name": "Alice", "age": 30} is the record you asked for.', 6)
    events, _, _ = _turn(WireCase("prose", "variation", "-", 0, raw, stream=True))
    assert isinstance(events[-1], TurnDone)
    assert events[-1].final_text == '{"name": "Alice", "age": 30} is the record you asked for.'
    assert _joined(events, TextDelta) == events[-1].final_text


def test_a_name_streamed_in_pieces_is_one_call_and_chunks_back_to_back_in_one_event_are_read():
    named = sse(_call("", name="mem"), _call("", cid=None, name="ory"), _more(A), chunk({}, "tool_calls"))
    glued = Raw(events=["data: " + "".join(json.dumps(e) for e in _EVENTS) + "\n\n", DONE])
    for raw in (named, glued):
        saved: list[str] = []
        events, _, _ = _turn(WireCase("pieces", "variation", "-", 0, raw, stream=True, saves=("class-entry",)), saved)
        assert saved == ["class-entry"] and isinstance(events[-1], TurnDone), events[-3:]


def test_a_wrong_path_is_told_apart_from_an_unknown_model():
    server = ScriptedLLM()
    server.start()
    try:
        server.default = lambda body: Reply(raw=Raw(status=404, body="404 page not found",
                                                    headers={"Content-Type": "text/plain"}))  # fmt: skip
        client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
        with client, pytest.raises(LLMError) as wrong_path:
            client.complete([{"role": "user", "content": "hi"}])
        server.default = lambda body: Reply(raw=Raw(status=404, body={"error": {"message": "model 'm' not found"}}))
        client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0)
        with client, pytest.raises(LLMError) as unknown:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        server.stop()
    assert "Check model.base_url" in wrong_path.value.message and "404 page not found" in wrong_path.value.message
    assert "does not know model 'm'" in unknown.value.message


def test_sse_labelled_html_is_read_and_markup_arguments_are_decoded_like_streamed_ones():
    mislabelled = Raw(events=[*_EVENTS, DONE], headers={"Content-Type": "text/html; charset=utf-8"})
    fenced_kimi = _text(_KIMI.replace(A, "```json\n" + A + "\n```<|im_end|>"), 6)
    for raw in (mislabelled, fenced_kimi):
        saved: list[str] = []
        events, _, _ = _turn(WireCase("decided", "variation", "-", 0, raw, stream=True, saves=("class-entry",)), saved)
        assert saved == ["class-entry"] and isinstance(events[-1], TurnDone), events[-3:]
