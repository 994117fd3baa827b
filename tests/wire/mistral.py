"""Mistral's API, and LiteLLM in front of Mistral's Magistral."""

from __future__ import annotations

from tests.fakellm import Raw
from tests.wire import WireCase, body, chunk, error, sse


def _extra_forbidden(*loc: object, value: object) -> dict[str, object]:
    return {"object": "error", "message": {"detail": [{"type": "extra_forbidden", "loc": ["body", *loc],
            "msg": "Extra inputs are not permitted", "input": value}]},
            "type": "invalid_request_error", "param": None, "code": None}  # fmt: skip


CASES = [
    WireCase(
        "mistral_refuses_stream_options",
        "Mistral API (mistral-large-latest)",
        "https://github.com/avante-corp/avante.nvim/issues/2347",
        7,
        error(422, _extra_forbidden("stream_options", "include_usage", value=True)),
        stream=False,
        refuses="stream_options",
    ),
    WireCase(
        "mistral_refuses_reasoning_content",
        "Mistral API (devstral-2512)",
        "https://github.com/charmbracelet/crush/issues/1590",
        7,
        error(422, _extra_forbidden("messages", 2, "assistant", "reasoning_content", value="\n")),
        stream=False,
        refuses="reasoning_echo",
    ),
    WireCase(
        "mistral_refuses_max_completion_tokens",
        "Mistral API (labs-devstral-small-2512)",
        "https://github.com/editor-code-assistant/eca/issues/231",
        7,
        error(422, _extra_forbidden("max_completion_tokens", value=32000)),
        stream=False,
        refuses="max_completion_tokens",
    ),
    WireCase(
        "mistral_error_message_as_json_string",
        "Mistral API (2024, behind its proxy)",
        "https://github.com/mistralai/platform-docs-public/issues/7",
        10,
        error(
            422,
            {
                "object": "error",
                "message": '{"detail":[{"type":"extra_forbidden","loc":["body",'
                '"frequency_penalty"],"msg":"Extra inputs are not permitted","input":0.0}]}',
                "type": "internal_error_proxy",
                "param": None,
                "code": "1000",
            },
        ),
        stream=False,
        error="Extra inputs are not permitted (frequency_penalty)",
    ),
    WireCase(
        "magistral_thinking_parts_streamed",
        "Mistral API (magistral-medium-2507)",
        "https://github.com/vercel/ai/pull/8072",
        4,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Greet back "}]}]}),
            chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "politely."}]}]}),
            chunk({"content": [{"type": "text", "text": "Bonjour from Magistral."}]}),
            chunk({"content": ""}, "stop", usage={"prompt_tokens": 9, "completion_tokens": 30, "total_tokens": 39}),
        ),
        stream=True,
        answer="Bonjour from Magistral.",
        reasoning="Greet back politely.",
        prompt_tokens=9,
    ),
    WireCase(
        "litellm_thinking_and_text_parts",
        "LiteLLM proxy 1.72 in front of mistral/magistral-small-2506",
        "https://github.com/BerriAI/litellm/pull/11642",
        4,
        Raw(
            body=body(
                {
                    "content": [
                        {"type": "thinking", "thinking": "Plain greeting."},
                        {"type": "text", "text": "Hello from LiteLLM."},
                    ]
                },
                "stop",
            )
        ),
        stream=False,
        answer="Hello from LiteLLM.",
        reasoning="Plain greeting.",
    ),
]
