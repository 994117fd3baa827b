"""The connection check: ask the configured server once for each feature the agent relies on.

Plain chat, system role, stream_options, a tool call, streaming while tools are offered. Each
answer is recorded (yes / no / unknown, with the server's words) and stored with the client's
capabilities, so the chat adapts from its first request and the settings page can show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent.llm.client import ChatClient, Refused
from agent.llm.types import LLMError, ModelReply

PING_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Answers pong. Call it when asked to.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
_ASK_TOOL = [{"role": "user", "content": "Call the ping tool with text 'hi'. Do not answer in words."}]
_SAY_OK = [{"role": "user", "content": "Reply with the single word: ok"}]


@dataclass
class ProbeStep:
    key: str  # "chat" or a capability name
    label: str
    ok: bool | None  # None: could not tell
    detail: str = ""


def _reply(client: ChatClient, body: dict[str, Any]) -> ModelReply:
    response = client.send(body)
    events = list(client.read(body, response))
    last = events[-1]
    assert isinstance(last, ModelReply)  # read() always ends with the reply or raises
    return last


def _try(client: ChatClient, key: str, label: str, body: dict[str, Any]) -> tuple[ProbeStep, ModelReply | None]:
    try:
        reply = _reply(client, body)
    except Refused as refused:
        return ProbeStep(key, label, False, f"refused ({refused.feature})"), None
    except LLMError as exc:
        return ProbeStep(key, label, None, exc.message), None
    return ProbeStep(key, label, True), reply


def probe(client: ChatClient) -> list[ProbeStep]:
    """Run the checks in order; stop after the first if the server cannot chat at all."""
    model = client.model
    base = {"model": model}
    chat, _ = _try(client, "chat", "Plain chat", {**base, "messages": _SAY_OK})
    if chat.ok is not True:
        return [chat]
    steps = [chat]
    system = [{"role": "system", "content": "You are terse."}, *_SAY_OK]
    steps.append(_try(client, "system_role", "System role", {**base, "messages": system})[0])
    opts = {**base, "messages": _SAY_OK, "stream": True, "stream_options": {"include_usage": True}}
    steps.append(_try(client, "stream_options", "stream_options", opts)[0])
    tools, reply = _try(client, "tools", "Tool call", {**base, "messages": _ASK_TOOL, "tools": [PING_TOOL]})
    if reply is not None and not reply.tool_calls:
        tools.detail = "accepted, but the model answered without calling the tool"
    steps.append(tools)
    if tools.ok is not False:
        streamed = {**base, "messages": _ASK_TOOL, "tools": [PING_TOOL], "stream": True}
        steps.append(_try(client, "stream_tools", "Streaming with tools", streamed)[0])
    _store(client, steps)
    return steps


def _store(client: ChatClient, steps: list[ProbeStep]) -> None:
    caps = client.caps
    for step in steps:
        if step.key != "chat" and step.ok is not None:
            setattr(caps, step.key, step.ok)
    caps.probed_at = datetime.now(UTC).isoformat(timespec="seconds")
    client.save_capabilities()
