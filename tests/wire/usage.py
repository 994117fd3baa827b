"""Where servers put token usage, and how they end a turn that called tools."""

from __future__ import annotations

from tests.wire import WireCase, chunk, memory_json, sse

_USAGE = {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45}

CASES = [
    WireCase(
        "groq_usage_in_x_groq",
        "Groq (llama-3.3-70b-versatile)",
        "https://github.com/Portkey-AI/gateway/issues/1072",
        6,
        sse(
            chunk({"role": "assistant", "content": ""}, x_groq={"id": "req_01jt0xby4ffanamrs6m40mv0fy"}),
            chunk({"content": "Hello from Groq."}),
            chunk({}, "stop", x_groq={"id": "req_01jt0xby4ffanamrs6m40mv0fy", "usage": {**_USAGE, "queue_time": 0.05}}),
        ),
        stream=True,
        answer="Hello from Groq.",
        prompt_tokens=42,
    ),
    WireCase(
        "grok_usage_in_last_content_chunk",
        "xAI grok-4-1-fast via an OpenAI-compatible proxy",
        "https://github.com/BerriAI/litellm/issues/17136",
        6,
        sse(
            chunk({"role": "assistant", "content": "Hello "}),
            chunk({"content": "from Grok."}, "stop", usage=_USAGE),
            chunk({"content": ""}),  # a trailing chunk after the usage, with no finish
        ),
        stream=True,
        answer="Hello from Grok.",
        prompt_tokens=42,
    ),
    WireCase(
        "together_finish_eos_after_tool_call_no_usage",
        "Together AI (Llama 3.1 70B Instruct Turbo)",
        "https://github.com/openai/openai-dotnet/pull/267",
        5,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "call_tg1", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("together-eos")}}]}),
            chunk({}, "eos"),
        ),
        stream=True,
        saves=("together-eos",),
    ),
    WireCase(
        "mlx_finish_stop_after_tool_call",
        "mlx-vlm server 0.6.2",
        "https://github.com/Blaizzy/mlx-vlm/pull/1014",
        5,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "call_mlx", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("mlx-stop")}}]}),
            chunk({}, "stop"),
        ),
        stream=True,
        saves=("mlx-stop",),
    ),
]  # fmt: skip
