"""Third wave: a model's own template conventions that servers pass through as content, and
signed reasoning a gateway needs back. Families 21-23 (see the README's table of servers)."""

from __future__ import annotations

import json
from typing import Any

from tests.fakellm import Raw
from tests.wire import WireCase, body, chunk, error, memory_args, memory_json, sse
from tests.wire.replay import FOLLOW_UP

_R1_THOUGHT = (
    'Alright, the user just said "hello." That\'s a friendly greeting. I should respond in a warm and '
    "welcoming manner.\n"
)
_R1_ANSWER = "Hello! How can I assist you today?"
_MAGISTRAL_THOUGHT = "The user states a preference; I should store it."
CLAUDE_THOUGHT = "The user wants this kept. Save it with the memory tool."
CLAUDE_SIGNATURE = "EqQBCkgIARABGAIiQL0vYRFsSIGNED"
_CLAUDE_MODEL = "anthropic/claude-sonnet-4.5"

# Anthropic's refusal (through OpenRouter) of a tool-call follow-up whose thinking block is missing.
MISSING_THINKING = error(400, {"error": {"code": 400, "message": (
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns.")}})  # fmt: skip


def _pieces(text: str, size: int) -> list[dict[str, Any]]:
    return [chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]


def _details(text: str, **extra: Any) -> dict[str, Any]:
    item = {"type": "reasoning.text", "text": text, "format": "anthropic-claude-v1", "index": 0, **extra}
    return chunk({"role": "assistant", "content": "", "reasoning": text, "reasoning_details": [item]},
                 model=_CLAUDE_MODEL)  # fmt: skip


def _signed_thinking_back(request: dict[str, Any]) -> Raw:
    """Like OpenRouter in front of Claude: refused unless the signed thinking came back whole."""
    for m in request.get("messages", []):
        if m.get("role") == "assistant" and m.get("tool_calls"):
            details = m.get("reasoning_details") or []
            if details and details[0].get("text") == CLAUDE_THOUGHT and details[0].get("signature") == CLAUDE_SIGNATURE:
                return sse(chunk({"role": "assistant", "content": FOLLOW_UP}, "stop", model=_CLAUDE_MODEL))
    return MISSING_THINKING


CASES = [
    WireCase(
        "openrouter_claude_signed_reasoning_details",
        "OpenRouter in front of Claude with reasoning on (anthropic/claude-sonnet-4.5)",
        "https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks "
        "(and RooCodeInc/Roo-Code#9506)",
        21,
        sse(
            ": OPENROUTER PROCESSING\n\n",
            _details(CLAUDE_THOUGHT[:20]),
            _details(CLAUDE_THOUGHT[20:]),
            _details("", signature=CLAUDE_SIGNATURE),  # the signature last, in an item of its own
            chunk({"tool_calls": [{"index": 0, "id": "toolu_01A", "type": "function",
                                   "function": {"name": "memory", "arguments": memory_json("openrouter-signed")}}]},
                  model=_CLAUDE_MODEL),
            chunk({}, "tool_calls", model=_CLAUDE_MODEL),
        ),
        stream=True,
        saves=("openrouter-signed",),
        reasoning=CLAUDE_THOUGHT,
        follow_up=_signed_thinking_back,
    ),
    WireCase(
        "deepseek_r1_distill_template_opens_think",
        "vLLM 0.7.2 serving DeepSeek-R1-Distill-Qwen-32B (template ends with <think>), no reasoning parser",
        "https://github.com/vllm-project/vllm/issues/12999 (and vllm-project/vllm#13125)",
        22,
        sse(chunk({"role": "assistant", "content": ""}), *_pieces(_R1_THOUGHT + "</think>\n\n" + _R1_ANSWER, 6),
            chunk({}, "stop")),  # fmt: skip
        stream=True,
        answer=_R1_ANSWER,
        reasoning=_R1_THOUGHT,
        tags=("template_think",),
    ),
    WireCase(
        "magistral_think_brackets_through_ollama",
        "Ollama serving Magistral Small 1.2 (2509): [THINK]…[/THINK] as content",
        "https://github.com/RooCodeInc/Roo-Code/issues/8522",
        20,
        sse(
            chunk({"role": "assistant", "content": ""}),
            *_pieces("[THINK]" + _MAGISTRAL_THOUGHT + "[/THINK]", 5),
            chunk({"tool_calls": [{"id": "call_mg1", "function": {"name": "memory",
                                   "arguments": memory_args("magistral-think")}}]}),
            chunk({}, "stop"),
        ),
        stream=True,
        saves=("magistral-think",),
        reasoning=_MAGISTRAL_THOUGHT,
    ),
    WireCase(
        "ollama_llama32_call_as_fenced_json_content",
        "Ollama serving llama3.2:3b: the call as a JSON object in a ```json fence, in content",
        "https://github.com/ollama/ollama/issues/13519",
        23,
        sse(
            chunk({"role": "assistant", "content": ""}),
            *_pieces('```json\n{"name": "memory", "parameters": ' + memory_json("llama-fenced-json") + "}\n```", 7),
            chunk({}, "stop"),
        ),
        stream=True,
        # A fenced block is shown, never run: it is how a model writes out code it was shown or
        # asked for, a call among it (agent/llm/textcalls.py). The bare object, unfenced, runs
        # (the next case).
        answer='```json\n{"name": "memory", "parameters": ' + memory_json("llama-fenced-json") + "}\n```",
    ),
    WireCase(
        "vllm_llama32_call_object_as_content",
        "vLLM serving Llama-3.2-11B-Vision-Instruct: a whole {type, function} object as content",
        "https://github.com/vllm-project/vllm/issues/11786",
        23,
        Raw(body=body({"content": json.dumps({"type": "function", "function": {
            "name": "memory", "parameters": memory_args("llama-object-content")}}), "tool_calls": []})),
        stream=False,
        saves=("llama-object-content",),
    ),
]  # fmt: skip
