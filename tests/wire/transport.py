"""Transport quirks: characters split across chunks by gateways and proxies."""

from __future__ import annotations

import json

from tests.wire import WireCase, chunk, memory_args, sse

# "🙂" inside the argument: the emoji's two UTF-16 halves travel in two JSON strings.
_ARGS = json.dumps(memory_args("gateway-emoji-\U0001f642"), ensure_ascii=False)
_ESCAPED = json.dumps(_ARGS)  # ASCII JSON string: the emoji is written as \ud83d\ude42


def _args_event(text_json: str) -> str:
    return (
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{"tool_calls":[{"index":0,"function":{"arguments":' + text_json + '}}]},"finish_reason":null}]}\n\n'
    )


_line = "data: " + json.dumps(chunk({"content": "Grüße aus dem Proxy."}), ensure_ascii=False) + "\n\n"
_raw = _line.encode()
_cut = _raw.index("ü".encode()) + 1  # inside the two bytes of "ü"

CASES = [
    WireCase(
        "gateway_emoji_surrogates_split_across_chunks",
        "OpenClaw gateway before PR 110642 (OpenAI-compatible SSE)",
        "https://github.com/openclaw/openclaw/pull/110642",
        1,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "call_gw", "type": "function",
                                   "function": {"name": "memory", "arguments": ""}}]}),
            _args_event(_ESCAPED[: _ESCAPED.index("\\ude42")] + '"'),
            _args_event('"' + _ESCAPED[_ESCAPED.index("\\ude42"):]),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("gateway-emoji-\U0001f642",),
    ),
    WireCase(
        "proxy_flushes_inside_a_utf8_character",
        "Cloudflare workerd proxy flushing a partial chunk",
        "https://github.com/braintrustdata/braintrust-sdk-javascript/pull/2091",
        1,
        sse(chunk({"role": "assistant", "content": ""}), _raw[:_cut], _raw[_cut:], chunk({}, "stop")),
        stream=True,
        answer="Grüße aus dem Proxy.",
    ),
]  # fmt: skip
