"""A model's own template text arriving as content: servers whose parsers missed it."""

from __future__ import annotations

import json

from tests.fakellm import Raw
from tests.wire import WireCase, body, chunk, memory_args, memory_json, sse
from tests.wire.replay import FOLLOW_UP

_KIMI = (
    "I'll remember that. <|tool_calls_section_begin|><|tool_call_begin|>functions.memory:0"
    "<|tool_call_argument_begin|>" + memory_json("kimi-native-markers") + "<|tool_call_end|>"
    "<|tool_calls_section_end|>"
)
_KIMI_ALONE = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.memory:1<|tool_call_argument_begin|>"
    + json.dumps(memory_json("kimi-markers-alone"))
    + "<|tool_call_end|><|tool_calls_section_end|>"
)
_THINK = "\nThe user stated a preference; store it with the memory tool.\n"
_AFTER = "\nStored; confirm briefly.\n"
_DOUBLE = json.dumps(memory_json("vllm-double-encoded"))  # a JSON string literal holding the object


def _pieces(text: str, size: int) -> list[dict[str, object]]:
    return [chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]


CASES = [
    WireCase(
        "kimi_k25_native_markers_as_content",
        "SGLang serving Kimi K2.5 when its kimi_k2 tool parser misses",
        "https://github.com/sgl-project/sglang/issues/21377",
        19,
        sse(chunk({"role": "assistant", "content": ""}), *_pieces(_KIMI, 9), chunk({}, "stop")),
        stream=True,
        # Prose, then markup: shown as the model wrote it, never run. A model quoting a page the
        # person pasted looks exactly like this (agent/llm/textcalls.py); a model that only calls
        # writes nothing but the markup, and that runs (tests/agent/test_llm_wire_classes.py).
        answer=_KIMI,
    ),
    WireCase(
        "kimi_k2_markers_alone_with_empty_tool_calls",
        "SGLang --tool-call-parser kimi_k2 (Kimi K2 Instruct) when the parser misses: the whole content is "
        "the call, tool_calls empty, finish_reason tool_calls, arguments a JSON string",
        "https://github.com/MoonshotAI/Kimi-K2/issues/26",
        19,
        Raw(body=body({"content": _KIMI_ALONE, "tool_calls": [], "reasoning_content": None}, "tool_calls")),
        stream=False,
        saves=("kimi-markers-alone",),
    ),
    WireCase(
        "kimi_ids_through_sglang",
        "SGLang --tool-call-parser kimi_k2 (Kimi K2 Instruct)",
        "https://github.com/sgl-project/sglang/issues/21377",
        19,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "functions.memory:0", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("kimi-sglang-id")}}]}),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("kimi-sglang-id",),
    ),
    WireCase(
        "qwen3_think_block_in_content",
        "vLLM 0.11 serving Qwen3-32B with --tool-call-parser hermes and no --reasoning-parser",
        "https://github.com/vllm-project/vllm/issues/26239 (and ggml-org/llama.cpp#23320)",
        20,
        sse(
            chunk({"role": "assistant", "content": ""}),
            *_pieces("<think>" + _THINK + "</think>\n\n", 5),
            chunk({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-q3", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("qwen3-think")}}]}),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("qwen3-think",),
        reasoning=_THINK,
        follow_up=sse(
            chunk({"role": "assistant", "content": ""}),
            *_pieces("<think>" + _AFTER + "</think>\n\n" + FOLLOW_UP, 4),
            chunk({}, "stop"),
        ),
    ),
    WireCase(
        "vllm_hermes_arguments_as_json_string",
        "vLLM hermes tool parser (arguments double-encoded)",
        "https://github.com/vllm-project/vllm/issues/54964",
        20,
        sse(
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-de1", "type": "function",
                                   "function": {"name": "memory", "arguments": ""}}]}),
            *[chunk({"tool_calls": [{"index": 0, "function": {"arguments": _DOUBLE[i:i + 16]}}]})
              for i in range(0, len(_DOUBLE), 16)],
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("vllm-double-encoded",),
    ),
]  # fmt: skip

assert json.loads(json.loads(_DOUBLE)) == memory_args("vllm-double-encoded")
