"""vLLM's OpenAI-compatible server (and frontends built on its protocol)."""

from __future__ import annotations

import json

from tests.fakellm import Raw
from tests.wire import WireCase, body, chunk, error, memory_args, memory_json, sse

_HERMES = (
    "Saving it now.\n<tool_call>\n"
    + json.dumps({"name": "memory", "arguments": memory_args("vllm-hermes-text")})
    + "\n</tool_call>"
)

CASES = [
    WireCase(
        "vllm_auto_tool_choice_not_enabled",
        "vLLM 0.6.3 without --enable-auto-tool-choice",
        "https://github.com/vllm-project/vllm/issues/9986",
        8,
        error(400, {"object": "error", "message": "\"auto\" tool choice requires --enable-auto-tool-choice and "
                    "--tool-call-parser to be set", "type": "BadRequestError", "param": None, "code": 400}),
        stream=False,
        refuses="tools",
    ),
    WireCase(
        "vllm_gemma_system_role_not_supported",
        "vLLM 0.3.3 serving gemma-2b-it",
        "https://github.com/vllm-project/vllm/pull/2964",
        8,
        error(400, {"object": "error", "message": "System role not supported", "type": "BadRequestError",
                    "param": None, "code": 400}),
        stream=False,
        refuses="system_role",
    ),
    WireCase(
        "vllm_hermes_tool_call_as_text",
        "vLLM 0.9 serving Qwen2.5 without --tool-call-parser",
        "https://github.com/NousResearch/hermes-agent/pull/3518",
        9,
        sse(
            chunk({"role": "assistant", "content": ""}),
            *[chunk({"content": _HERMES[i:i + 6]}) for i in range(0, len(_HERMES), 6)],
            chunk({}, "stop"),
        ),
        stream=True,
        # Prose, then markup: shown as the model wrote it, never run. A model quoting a page the
        # person pasted looks exactly like this (agent/llm/textcalls.py); a model that only calls
        # writes nothing but the markup, and that runs (tests/agent/test_llm_wire_classes.py).
        answer=_HERMES,
    ),
    WireCase(
        "vllm_reasoning_content_with_tool_call",
        "vLLM 0.10 --reasoning-parser deepseek_r1 --tool-call-parser hermes",
        "https://github.com/strands-agents/sdk-python/pull/2354",
        3,
        Raw(body=body(
            {"content": None, "reasoning_content": "The user stated a fact worth keeping.",
             "tool_calls": [{"id": "chatcmpl-tool-9f1", "type": "function",
                             "function": {"name": "memory", "arguments": memory_json("vllm-reasoning-tool")}}]},
            "tool_calls", usage={"prompt_tokens": 640, "completion_tokens": 44, "total_tokens": 684})),
        stream=False,
        saves=("vllm-reasoning-tool",),
        reasoning="The user stated a fact worth keeping.",
    ),
    WireCase(
        "dynamo_two_calls_in_one_delta",
        "NVIDIA Dynamo frontend (vLLM protocol) before PR 4723, Qwen3-0.6B",
        "https://github.com/ai-dynamo/dynamo/pull/4723",
        1,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [
                {"index": 0, "id": "call-1a", "type": "function",
                 "function": {"name": "memory", "arguments": memory_json("dynamo-first")}},
                {"index": 0, "id": "call-2b", "type": "function",
                 "function": {"name": "memory", "arguments": memory_json("dynamo-second")}},
            ]}),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("dynamo-first", "dynamo-second"),
    ),
]  # fmt: skip
