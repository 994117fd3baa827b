"""Gateways, adapters and proxies between the agent and the model: how they frame a reply."""

from __future__ import annotations

import json

from tests.fakellm import Raw
from tests.wire import DONE, WireCase, body, chunk, memory_json, sse

_CUMULATIVE = memory_json("qianfan-cumulative-args")
_REPEATED = memory_json("gateway-repeated-final-args")
_HTML = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    "<title>Sign in · Contoso Single Sign-On</title>\n</head>\n<body>\n"
    '<form method="post" action="/adfs/ls/"><input name="UserName"></form>\n</body>\n</html>\n'
)


def _tool_delta(call_id: str, args: str) -> dict[str, object]:
    return chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                  "function": {"name": "memory", "arguments": args}}]})  # fmt: skip


CASES = [
    WireCase(
        "qianfan_cumulative_arguments",
        "Baidu Qianfan serving DeepSeek-V3.2 (OpenAI-compatible v2 API)",
        "https://github.com/NousResearch/hermes-agent/issues/35718 (and anomalyco/opencode#17339)",
        12,
        sse(
            chunk({"role": "assistant", "content": ""}),
            # every chunk repeats the arguments so far, id and name included
            *[_tool_delta("call_qf01", _CUMULATIVE[:end]) for end in range(12, len(_CUMULATIVE), 12)],
            _tool_delta("call_qf01", _CUMULATIVE),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("qianfan-cumulative-args",),
    ),
    WireCase(
        "gateway_repeats_whole_arguments_at_the_end",
        "elizaOS OpenAI-compatible gateway adapter",
        "https://github.com/elizaOS/eliza/issues/16973 (and lidge-jun/opencodex#361)",
        13,
        sse(
            chunk({"role": "assistant", "content": ""}),
            _tool_delta("call_gw7", ""),
            *[chunk({"tool_calls": [{"index": 0, "function": {"arguments": _REPEATED[i:i + 10]}}]})
              for i in range(0, len(_REPEATED), 10)],
            _tool_delta("call_gw7", _REPEATED),  # the whole arguments once more
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("gateway-repeated-final-args",),
    ),
    WireCase(
        "gateway_sse_retry_block_without_data",
        "OpenAI-compatible gateway sending an SSE reconnection time",
        "https://github.com/openai/openai-python/issues/3833",
        14,
        sse(
            "retry: 3000\n\n",  # a valid SSE event with no data
            chunk({"role": "assistant", "content": ""}),
            _tool_delta("call_rt1", memory_json("sse-retry-block")),
            "event: ping\nid: 7\n\n",
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("sse-retry-block",),
    ),
    WireCase(
        "proxima_stream_answered_with_one_json_completion",
        "Proxima gateway (stream=true answered as application/json)",
        "https://github.com/Zen4-bit/Proxima/issues/45",
        15,
        Raw(body=body(
            {"content": None, "tool_calls": [{"id": "call_px1", "type": "function",
                                              "function": {"name": "memory", "arguments": memory_json("proxima-json")}}]},
            "tool_calls", usage={"prompt_tokens": 512, "completion_tokens": 22, "total_tokens": 534})),
        stream=True,
        saves=("proxima-json",),
        prompt_tokens=512,
    ),
    WireCase(
        "kaito_plain_request_answered_with_sse",
        "KAITO workspace inference (vLLM behind kaito's OpenAI route), stream=false",
        "https://github.com/kaito-project/kaito/issues/1880 (and sgl-project/mini-sglang#51)",
        16,
        Raw(
            events=[
                "data: " + json.dumps(chunk({"role": "assistant", "content": "Summary: "})) + "\n\n",
                "data: " + json.dumps(chunk({"content": "the user likes tea."})) + "\n\n",
                "data: " + json.dumps(chunk({}, "stop", usage={"prompt_tokens": 77, "completion_tokens": 6,
                                                              "total_tokens": 83})) + "\n\n",
                DONE,
            ],
            headers={"Content-Type": "text/event-stream; charset=utf-8"},
        ),
        stream=False,
        answer="Summary: the user likes tea.",
        prompt_tokens=77,
    ),
    WireCase(
        "sign_in_page_with_http_200",
        "SSO proxy / captive portal answering every request with its sign-in page",
        "https://github.com/2FastLabs/agent-squad/issues/213",
        17,
        Raw(status=200, body=_HTML, headers={"Content-Type": "text/html; charset=utf-8"}),
        stream=False,
        error="answered with an HTML page (“Sign in · Contoso Single Sign-On”), likely a proxy",
    ),
    WireCase(
        "azure_empty_choices_first_chunk",
        "Azure OpenAI (content filter annotations, stream obfuscation)",
        "https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter",
        18,
        sse(
            chunk(None, prompt_filter_results=[{"prompt_index": 0, "content_filter_results": {}}]),
            chunk({"role": "assistant", "content": ""}, obfuscation="xY2"),
            chunk({"content": "Hello from Azure."}, obfuscation="a1b2c3"),
            chunk({}, "stop", obfuscation="Qz"),
        ),
        stream=True,
        answer="Hello from Azure.",
    ),
    WireCase(
        "empty_stream_with_http_200",
        "any server closing a 200 stream before the first chunk",
        "https://github.com/openai/openai-python/issues/3833",
        18,
        sse(),
        stream=True,
        error="empty or unreadable reply",
    ),
]  # fmt: skip
