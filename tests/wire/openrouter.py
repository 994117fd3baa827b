"""OpenRouter."""

from __future__ import annotations

from tests.wire import WireCase, chunk, error, sse

_THOUGHT = "Short greeting requested."

CASES = [
    WireCase(
        "openrouter_reasoning_and_reasoning_details",
        "OpenRouter (deepseek/deepseek-r1 via OpenRouter)",
        "https://github.com/braintrustdata/braintrust-sdk-javascript/issues/1883",
        3,
        sse(
            ": OPENROUTER PROCESSING\n\n",  # keep-alive comment (openrouter.ai/docs/api-reference/streaming)
            chunk({"role": "assistant", "content": "", "reasoning": _THOUGHT,
                   "reasoning_details": [{"type": "reasoning.text", "text": _THOUGHT, "format": "unknown", "index": 0}]}),
            chunk({"role": "assistant", "content": "Hello via OpenRouter."}),
            chunk({"role": "assistant", "content": ""}, "stop", native_finish_reason="stop"),
            chunk(None, usage={"prompt_tokens": 14, "completion_tokens": 20, "total_tokens": 34, "cost": 0.0001}),
        ),
        stream=True,
        answer="Hello via OpenRouter.",
        reasoning=_THOUGHT,
        prompt_tokens=14,
    ),
    WireCase(
        "openrouter_error_inside_200_stream",
        "OpenRouter",
        "https://openrouter.ai/docs/api-reference/streaming",
        10,
        sse(
            chunk({"role": "assistant", "content": "Partial "}),
            {"id": "cmpl-abc123", "object": "chat.completion.chunk", "created": 1767225600, "model": "m",
             "provider": "openai", "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
             "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]},
        ),
        stream=True,
        error="Provider disconnected unexpectedly",
    ),
    WireCase(
        "openrouter_rate_limited_with_retry_after",
        "OpenRouter",
        "https://openrouter.ai/docs/api/errors",
        10,
        error(429, {"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min."}},
              **{"Retry-After": "90"}),
        stream=False,
        error="wait 90 s",
    ),
]  # fmt: skip
