"""DeepSeek's API (thinking mode)."""

from __future__ import annotations

from tests.wire import WireCase, chunk, error, memory_json, sse

_ARGS = memory_json("deepseek-thinking-tool")

CASES = [
    WireCase(
        "deepseek_thinking_then_tool_call",
        "DeepSeek API, deepseek-v4-flash thinking mode",
        "https://api-docs.deepseek.com/guides/thinking_mode",
        3,
        sse(
            chunk({"role": "assistant", "content": None, "reasoning_content": "The user shared a preference; "}),
            chunk({"content": None, "reasoning_content": "store it."}),
            chunk({"tool_calls": [{"index": 0, "id": "call_00_dS3kq", "type": "function",
                                   "function": {"name": "memory", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": _ARGS[:20]}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": _ARGS[20:]}}]}),
            chunk({"content": ""}, "tool_calls",
                  usage={"prompt_tokens": 1200, "completion_tokens": 60, "total_tokens": 1260,
                         "prompt_cache_hit_tokens": 1152, "completion_tokens_details": {"reasoning_tokens": 12}}),
        ),
        stream=True,
        saves=("deepseek-thinking-tool",),
        reasoning="The user shared a preference; store it.",
        prompt_tokens=1200,
    ),
    WireCase(
        "deepseek_reasoning_not_passed_back",
        "DeepSeek API, deepseek-v4-pro thinking mode",
        "https://github.com/JohnnyZ93/oai-compatible-copilot/issues/215",
        10,
        error(400, {"error": {"message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
                              "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}),
        stream=False,
        error="must be passed back to the API",
    ),
]  # fmt: skip
