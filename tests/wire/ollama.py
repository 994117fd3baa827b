"""Ollama's OpenAI-compatible endpoint (/v1/chat/completions)."""

from __future__ import annotations

from tests.wire import WireCase, chunk, error, memory_json, sse

CASES = [
    WireCase(
        "ollama_parallel_calls_share_index_0",
        "Ollama 0.20.2 (qwen2.5-coder:7b)",
        "https://github.com/ollama/ollama/issues/15457",
        1,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"id": "call_5ixq0z1u", "index": 0, "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("ollama-parallel-alpha")}}]}),
            chunk({"tool_calls": [{"id": "call_q2m7w1ad", "index": 0, "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("ollama-parallel-beta")}}]}),
            chunk({}, "stop"),  # "stop", not "tool_calls" (litellm#37792 records the same)
        ),
        stream=True,
        saves=("ollama-parallel-alpha", "ollama-parallel-beta"),
    ),
    WireCase(
        "ollama_tool_call_without_index",
        "Ollama 0.4.6",
        "https://github.com/ollama/ollama/issues/7881",
        1,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"id": "call_l5y1hy6v", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("ollama-no-index")}}]}),
            chunk({"content": ""}, "stop"),
        ),
        stream=True,
        saves=("ollama-no-index",),
    ),
    WireCase(
        "ollama_model_without_tool_template",
        "Ollama 0.17.7 (gemma3:4b)",
        "https://github.com/ollama/ollama/issues/14795",
        8,
        error(400, {"error": {"message": "registry.ollama.ai/library/gemma3:4b does not support tools",
                              "type": "api_error", "param": None, "code": None}}),
        stream=False,
        refuses="tools",
    ),
    WireCase(
        "ollama_reasoning_field",
        "Ollama 0.12 (qwen3, think on)",
        "https://github.com/braintrustdata/braintrust-sdk-javascript/issues/1883",
        3,
        sse(
            chunk({"role": "assistant", "content": "", "reasoning": "The user greets me. "}),
            chunk({"content": "", "reasoning": "Answer briefly."}),
            chunk({"content": "Hello from Ollama."}),
            chunk({}, "stop"),
        ),
        stream=True,
        answer="Hello from Ollama.",
        reasoning="The user greets me. Answer briefly.",
    ),
]  # fmt: skip
