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
- gpt-oss (harmony): `to=functions.NAME<|constrain|>json<|message|>{…}<|call|>`
"""

from __future__ import annotations

import json
import re
import uuid
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
)

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
_HARMONY = re.compile(
    r"to=(?:functions\.)?([\w.\-]+)[^<]*(?:<\|constrain\|>\s*[\w/]*\s*)?<\|message\|>(.*?)(?:<\|call\|>|<\|end\|>|$)",
    re.S,
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


def _kimi(text: str) -> list[ToolCallRequest]:
    calls = []
    for raw_id, args in _KIMI.findall(text):
        # The id is `functions.NAME:N`; the template expects it back as is.
        name = raw_id.removeprefix("functions.").rsplit(":", 1)[0]
        calls.append(ToolCallRequest(raw_id if ":" in raw_id else _new_id(), name, _arguments(args)))
    return calls


def _deepseek(text: str) -> list[ToolCallRequest]:
    return [ToolCallRequest(_new_id(), a or b, _arguments(args)) for a, b, args in _DEEPSEEK.findall(text)]


def _object_call(obj: Any) -> ToolCallRequest | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
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


def _mistral(text: str) -> list[ToolCallRequest]:
    calls: list[ToolCallRequest] = []
    for part in text.split("[TOOL_CALLS]")[1:]:
        named = _MISTRAL_NAMED.match(part)
        if named:
            args, _ = _decode_at(part, named.end())
            if isinstance(args, dict):
                calls.append(ToolCallRequest(named.group(2) or _new_id(), named.group(1), json.dumps(args)))
            continue
        value, _ = _decode_at(part, 0)
        for obj in value if isinstance(value, list) else [value]:
            call = _object_call(obj)
            if call is not None:
                calls.append(call)
    return calls


# Markers after which a model writes its calls as JSON objects or lists of them.
_JSON_MARKERS = re.compile(r"<\|python_tag\|>|<\|tool_call\|>|functools(?=\[)")


def json_calls(text: str) -> list[ToolCallRequest]:
    """The calls in `text` written as JSON objects (or lists of them) back to back; [] as soon
    as a value is not a call."""
    calls: list[ToolCallRequest] = []
    pos = 0
    while True:
        value, pos = _decode_at(text, pos)
        objs = value if isinstance(value, list) else [value]
        found = [_object_call(obj) for obj in objs]
        if not objs or None in found:
            return calls
        calls.extend(c for c in found if c is not None)


def _llama(text: str) -> list[ToolCallRequest]:
    return [call for part in _JSON_MARKERS.split(text)[1:] for call in json_calls(part)]


def _glm(text: str) -> list[ToolCallRequest]:
    calls = []
    for name, body in _GLM.findall(text):
        args = {k.strip(): _json_value(v.strip()) for k, v in _GLM_ARG.findall(body)}
        calls.append(ToolCallRequest(_new_id(), name, json.dumps(args, ensure_ascii=False)))
    return calls


def _harmony(text: str) -> list[ToolCallRequest]:
    if "<|message|>" not in text:
        return []
    return [ToolCallRequest(_new_id(), name, _arguments(args)) for name, args in _HARMONY.findall(text)]


def parse_native_calls(text: str) -> list[ToolCallRequest]:
    """The calls written in any of the template formats above, in the first format found."""
    for parse in (_kimi, _deepseek, _mistral, _llama, _glm, _harmony):
        calls = parse(text)
        if calls:
            return calls
    return []
