"""Tool calls in a model's own chat-template tokens, arriving as content when the server's
tool parser misses them (a parser not enabled, not matching the model, or failing mid-reply).

Each format is the model family's public chat template:
- Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:N
  <|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>`
- DeepSeek V3 / R1 / V3.1: `<｜tool▁call▁begin｜>[function<｜tool▁sep｜>]NAME[<｜tool▁sep｜>]`
  then the arguments (bare or in a ```json fence) and `<｜tool▁call▁end｜>`
- Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}]` or `[TOOL_CALLS]NAME[ARGS]{…}`
- Llama 3.x: `<|python_tag|>{"name": …, "parameters": {…}}`; Granite 3: `<|tool_call|>[{…}]`;
  Phi-4-mini: `functools[{…}]` — a marker, then JSON objects (or a list of them)
- GLM-4.5/4.6: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`
- gpt-oss (harmony): `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`,
  after the thinking of its analysis channel

Each reader returns every call it finds with the span of text the call took; whether those
calls are the model's own (the whole answer) or markup quoted in prose is decided by the caller
(agent/llm/textcalls.py), never here.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.llm.types import ToolCallRequest

MARKERS = (
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|tool_call|>",
    "functools[",
    "<|channel|>",
    "<|start|>",
)


@dataclass(frozen=True)
class Found:
    """One call read from text, and where its markup lies (`text[start:end]`)."""

    call: ToolCallRequest
    start: int
    end: int


_KIMI = re.compile(
    r"<\|tool_call_begin\|>\s*([^\s<]+?)\s*<\|tool_call_argument_begin\|>(.*?)"
    r"(?=<\|tool_call_end\|>|<\|tool_call_begin\|>|<\|tool_calls_section_end\|>|$)",
    re.S,
)
_DEEPSEEK = re.compile(
    r"<｜tool▁call▁begin｜>\s*(?:function\s*<｜tool▁sep｜>\s*([^\s<]+)|([^\s<]+?)\s*<｜tool▁sep｜>)(.*?)"
    r"(?=<｜tool▁call▁end｜>|<｜tool▁call▁begin｜>|<｜tool▁calls▁end｜>|$)",
    re.S,
)
_MISTRAL_NAMED = re.compile(r"\s*([\w.\-]+)\s*(?:\[CALL_ID\]\s*([\w\-]+)\s*)?\[ARGS\]")
_GLM = re.compile(r"<tool_call>\s*([^\s<{]+)\s*((?:<arg_key>.*?</arg_value>\s*)*)(?:</tool_call>|$)", re.S)
_GLM_ARG = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.S)
# The recipient may stand in the role header (`<|start|>assistant to=functions.NAME<|channel|>
# commentary json<|message|>`) or in the channel header (`<|channel|>commentary to=…`).
_HARMONY = re.compile(
    r"(?:<\|start\|>\s*assistant\s*)?(?:<\|channel\|>\s*commentary\s*)?"
    r"to=(?:functions\.)?([\w.\-]+)\s*(?:<\|channel\|>\s*commentary\b)?[^<]*"
    r"(?:<\|constrain\|>\s*[\w/]*\s*)?<\|message\|>(.*?)(?:<\|call\|>|<\|end\|>|$)",
    re.S,
)
# gpt-oss's thinking: never read for calls.
HARMONY_ANALYSIS = re.compile(
    r"(?:<\|start\|>\s*assistant\s*)?<\|channel\|>\s*analysis\s*<\|message\|>.*?(?:<\|end\|>|$)", re.S
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)
_DECODER = json.JSONDecoder()


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _arguments(raw: str) -> str:
    text = raw.strip()
    fenced = _FENCE.match(text)
    return (fenced.group(1) if fenced else text) or "{}"


def _json_value(raw: str) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _kimi(text: str) -> list[Found]:
    found = []
    for m in _KIMI.finditer(text):
        raw_id, args = m.group(1), m.group(2)
        # The id is `functions.NAME:N`; the template expects it back as is.
        name = raw_id.removeprefix("functions.").rsplit(":", 1)[0]
        call = ToolCallRequest(raw_id if ":" in raw_id else _new_id(), name, _arguments(args))
        found.append(Found(call, m.start(), m.end()))
    return found


def _deepseek(text: str) -> list[Found]:
    return [
        Found(ToolCallRequest(_new_id(), m.group(1) or m.group(2), _arguments(m.group(3))), m.start(), m.end())
        for m in _DEEPSEEK.finditer(text)
    ]


def object_call(obj: Any) -> ToolCallRequest | None:
    """A call object `{"name": …, "arguments" or "parameters": …}` as a call; None if it is not one."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    call_id = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("id") else _new_id()
    return ToolCallRequest(str(call_id), obj["name"], arguments)


def _decode_at(text: str, pos: int) -> tuple[Any, int]:
    while pos < len(text) and text[pos] in " \t\r\n;,":
        pos += 1
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError:
        return None, pos


def _mistral(text: str) -> list[Found]:
    found: list[Found] = []
    tag = "[TOOL_CALLS]"
    start = text.find(tag)
    while start >= 0:
        body = start + len(tag)
        named = _MISTRAL_NAMED.match(text, body)
        if named:
            args, end = _decode_at(text, named.end())
            if isinstance(args, dict):
                call = ToolCallRequest(named.group(2) or _new_id(), named.group(1), json.dumps(args))
                found.append(Found(call, start, end))
        else:
            value, end = _decode_at(text, body)
            calls = [object_call(obj) for obj in (value if isinstance(value, list) else [value])]
            found.extend(Found(c, start, end) for c in calls if c is not None)
        start = text.find(tag, body)
    return found


# Markers after which a model writes its calls as JSON objects or lists of them.
_JSON_MARKERS = re.compile(r"<\|python_tag\|>|<\|tool_call\|>|functools(?=\[)")


def json_calls(text: str, pos: int = 0) -> tuple[list[ToolCallRequest], int]:
    """The calls written as JSON objects (or lists of them) back to back from `pos`, and where
    they end; it stops at the first value that is not a call."""
    calls: list[ToolCallRequest] = []
    while True:
        value, end = _decode_at(text, pos)
        objs = value if isinstance(value, list) else [value]
        found = [object_call(obj) for obj in objs]
        if not objs or None in found:
            return calls, pos
        calls.extend(c for c in found if c is not None)
        pos = end


def _llama(text: str) -> list[Found]:
    found: list[Found] = []
    for marker in _JSON_MARKERS.finditer(text):
        calls, end = json_calls(text, marker.end())
        found.extend(Found(call, marker.start(), end) for call in calls)
    return found


def _glm(text: str) -> list[Found]:
    found = []
    for m in _GLM.finditer(text):
        args = {k.strip(): _json_value(v.strip()) for k, v in _GLM_ARG.findall(m.group(2))}
        found.append(Found(ToolCallRequest(_new_id(), m.group(1), json.dumps(args, ensure_ascii=False)), *m.span()))
    return found


def _harmony(text: str) -> list[Found]:
    if "<|message|>" not in text:
        return []
    return [
        Found(ToolCallRequest(_new_id(), m.group(1), _arguments(m.group(2))), m.start(), m.end())
        for m in _HARMONY.finditer(text)
    ]


READERS: tuple[Callable[[str], list[Found]], ...] = (_kimi, _deepseek, _mistral, _llama, _glm, _harmony)
