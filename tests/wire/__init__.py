"""Recorded wire shapes of real OpenAI-compatible servers, replayed by tests/fakellm.py.

Each case names the server and version it imitates and the public page (doc or issue) the
shape was taken from. The byte layout (which fields, where, how split) is the server's; the
tool called and its arguments are ours (`memory` add), so every tool-calling shape saves an
entry a test can look for. Cases are grouped per server in the modules of this package and
collected in `CASES`; `family` numbers the class of shape a case belongs to (1-10 the first
wave recorded, 11-20 the second, 21-23 the third: see the README's table of servers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakellm import Raw

DONE = "data: [DONE]\n\n"


@dataclass(frozen=True)
class WireCase:
    name: str
    server: str  # server and version imitated
    source: str  # public URL the shape comes from
    family: int  # the class of shape (see the module docstring)
    raw: Raw
    stream: bool  # server-sent events (else one JSON body)
    saves: tuple[str, ...] = ()  # memory entries its tool calls save
    answer: str = ""  # the visible answer it carries (tool-less cases)
    reasoning: str = ""  # the thinking it carries, never part of the answer
    error: str = ""  # the readable sentence its error must show
    refuses: str = ""  # the feature a refusal case refuses (capability name)
    prompt_tokens: int | None = None  # usage it reports, when it reports any
    tags: tuple[str, ...] = field(default_factory=tuple)
    # The server's answer to the request after the tool results (a plain "saved" when None);
    # a function of the request when the server checks what it was sent back.
    follow_up: Raw | Callable[[dict[str, Any]], Raw] | None = None

    def __str__(self) -> str:
        return self.name


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "chatcmpl-rec", "object": "chat.completion.chunk", "created": 1767225600, "model": "m"}
    out["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    out.update(extra)
    return out


def body(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "chatcmpl-rec", "object": "chat.completion", "created": 1767225600, "model": "m"}
    out["choices"] = [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]
    out.update(extra)
    return out


def memory_args(content: str) -> dict[str, str]:
    return {"target": "memory", "action": "add", "content": content}


def memory_json(content: str) -> str:
    return json.dumps(memory_args(content))


def sse(*events: dict[str, Any] | str | bytes, done: bool = True) -> Raw:
    return Raw(events=[*events, DONE] if done else list(events))


def error(status: int, payload: Any, **headers: str) -> Raw:
    return Raw(status=status, body=payload, headers=headers)


def _collect() -> list[WireCase]:
    from tests.wire import (
        gateways,
        gemini,
        llamacpp,
        lmstudio,
        mistral,
        ollama,
        openrouter,
        reasoning,
        templates,
        thinking_templates,
        transport,
        usage,
        vllm,
    )

    modules = (
        ollama,
        llamacpp,
        lmstudio,
        vllm,
        openrouter,
        reasoning,
        mistral,
        usage,
        transport,
        gemini,
        gateways,
        templates,
        thinking_templates,
    )
    return [c for m in modules for c in m.CASES]


CASES: list[WireCase] = _collect()
TOOL_CASES = [c for c in CASES if c.saves]
# A template that opens a think block in the prompt: the first reply's thinking has streamed as
# text before its close shows what it was (tested on their own: the replies after it do not).
TEMPLATE_THINK_CASES = [c for c in CASES if "template_think" in c.tags]
ANSWER_CASES = [c for c in CASES if c.answer and not c.saves and c not in TEMPLATE_THINK_CASES]
ERROR_CASES = [c for c in CASES if c.error]
REFUSAL_CASES = [c for c in CASES if c.refuses]
