"""llama.cpp's llama-server."""

from __future__ import annotations

from tests.fakellm import Raw
from tests.wire import WireCase, body, chunk, error, memory_args, sse

CASES = [
    WireCase(
        "llamacpp_arguments_as_object_streamed",
        "llama.cpp build 8233 (autoparser)",
        "https://github.com/ggml-org/llama.cpp/issues/20198",
        2,
        sse(
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": "Xb8nF2kq", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_args("llamacpp-object-stream")}}]}),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("llamacpp-object-stream",),
    ),
    WireCase(
        "llamacpp_arguments_as_object",
        "llama.cpp build 8233 (autoparser)",
        "https://github.com/ggml-org/llama.cpp/issues/20198",
        2,
        Raw(body=body(
            {"content": None, "tool_calls": [{"id": "Kq0mZ3xv", "type": "function",
                                              "function": {"name": "memory", "arguments": memory_args("llamacpp-object")}}]},
            "tool_calls", usage={"prompt_tokens": 880, "completion_tokens": 31, "total_tokens": 911})),
        stream=False,
        saves=("llamacpp-object",),
        prompt_tokens=880,
    ),
    WireCase(
        "llamacpp_name_repeated_on_every_chunk",
        "llama.cpp server, tool-call streaming branch (Phi-4-mini)",
        "https://github.com/ggml-org/llama.cpp/pull/12379",
        1,
        sse(
            chunk({"role": "assistant", "content": None}),
            *[chunk({"tool_calls": [{"index": 0, "id": "call_rep", "type": "function",
                                     "function": {"name": "memory", "arguments": piece}}]})
              for piece in ('{"target": "memory", ', '"action": "add", ', '"content": "llamacpp-repeated-name"}')],
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("llamacpp-repeated-name",),
    ),
    WireCase(
        "llamacpp_cannot_stream_with_tools",
        "llama.cpp (before streamed tool calls)",
        "https://github.com/simonw/llm-llama-server/issues/3",
        8,
        error(500, {"error": {"code": 500, "message": "Cannot use tools with stream", "type": "server_error"}}),
        stream=False,
        refuses="stream_tools",
    ),
    WireCase(
        "llamacpp_reasoning_content_stream",
        "llama.cpp server --jinja --reasoning-format deepseek",
        "https://github.com/ggml-org/llama.cpp/pull/12379",
        3,
        sse(
            chunk({"role": "assistant", "content": None, "reasoning_content": "Plan: "}),
            chunk({"reasoning_content": "say hi."}),
            chunk({"content": "Hi from llama.cpp."}),
            chunk({}, "stop", usage={"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
                  timings={"prompt_n": 120, "predicted_n": 9}),
        ),
        stream=True,
        answer="Hi from llama.cpp.",
        reasoning="Plan: say hi.",
        prompt_tokens=120,
    ),
]  # fmt: skip


# llama-server started without a vision projector answers a request holding an image part with
# this 500 (llama.cpp build 6139; the text as reported in
# https://github.com/ggml-org/llama.cpp/issues/15377). Not in CASES: the client does not repeat
# the request without the image, it ends the turn with a sentence (agent/llm/capabilities.py).
IMAGE_REFUSAL = error(
    500,
    {
        "error": {
            "code": 500,
            "message": "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            "type": "server_error",
        }
    },
)
