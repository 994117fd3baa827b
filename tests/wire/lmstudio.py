"""LM Studio's OpenAI-compatible server."""

from __future__ import annotations

from tests.wire import WireCase, chunk, memory_json, sse

_ARGS = memory_json("lmstudio-empty-name")
_XML = (
    "I will remember that.\n<function=memory>\n<parameter=target>\nmemory\n</parameter>\n"
    "<parameter=action>\nadd\n</parameter>\n<parameter=content>\nlmstudio-qwen3-coder-xml\n</parameter>\n</function>"
)

CASES = [
    WireCase(
        "lmstudio_name_empty_on_argument_chunks",
        "LM Studio 0.3.16 (qwen3-30b-a3b)",
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/649",
        1,
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "617264934", "type": "function",
                                   "function": {"name": "memory", "arguments": ""}}]}),
            # later chunks: name "" (rig#442 records `Some("")`), no id, no type
            *[chunk({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": _ARGS[i:i + 9]}}]})
              for i in range(0, len(_ARGS), 9)],
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("lmstudio-empty-name",),
    ),
    WireCase(
        "lmstudio_arguments_whole_in_one_chunk",
        "LM Studio 0.4.12 (qwen/qwen3.6-35b-a3b)",
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1868",
        1,
        sse(
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": "412563", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("lmstudio-whole-args")}}]}),
            chunk({}, "tool_calls"),
        ),
        stream=True,
        saves=("lmstudio-whole-args",),
    ),
    WireCase(
        "lmstudio_qwen3_coder_xml_in_content",
        "LM Studio 0.3.29 (qwen/qwen3-coder-30b, streaming)",
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1071",
        9,
        sse(
            chunk({"role": "assistant", "content": ""}),
            *[chunk({"content": _XML[i:i + 7]}) for i in range(0, len(_XML), 7)],
            chunk({}, "stop"),
        ),
        stream=True,
        # Prose, then markup: shown as the model wrote it, never run. A model quoting a page the
        # person pasted looks exactly like this (agent/llm/textcalls.py); a model that only calls
        # writes nothing but the markup, and that runs (tests/agent/test_llm_wire_classes.py).
        answer=_XML,
    ),
]  # fmt: skip
