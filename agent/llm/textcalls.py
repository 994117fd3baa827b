"""Tool calls a model wrote as text because the server's tool parser is off.

Hermes/Qwen `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, Qwen3-Coder's
`<function=NAME><parameter=KEY>VALUE</parameter></function>`, the template tokens of other
model families (agent/llm/native_calls.py), and a reply that is nothing but a call object
`{"name": ..., "parameters": {...}}` (Llama 3.x JSON tool calling without a parser). They are
parsed only when tools were offered, and the markup is held back from the streamed answer so
the person never sees it as the reply.
"""

from __future__ import annotations

import json
import re
import uuid

from agent.llm.arguments import back_to_back
from agent.llm.native_calls import MARKERS as NATIVE_MARKERS
from agent.llm.native_calls import parse_native_calls
from agent.llm.types import ToolCallRequest

MARKERS = ("<tool_call>", "<function=", *NATIVE_MARKERS)
# gpt-oss (harmony) answering without a call: the final channel is the answer.
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>(.*?)(?:<\|return\|>|<\|end\|>|$)", re.S)
_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.S)
_QWEN_FN = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|$)", re.S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|$)", re.S)
# The start of a reply that is a bare call object (or a list of them, or one in a fence).
_BARE_CALL = re.compile(r'\s*(?:```(?:json)?\s*)?\[?\s*\{\s*"(?:name|function|type)"\s*:')
_BARE_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
# A reply that starts like one is held this long (without its leading whitespace) to decide.
_BARE_DECIDE = 48


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _param_value(raw: str) -> object:
    # Qwen3-Coder writes every value as text; numbers, booleans and JSON values are typed.
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_text_calls(text: str) -> tuple[str, list[ToolCallRequest]]:
    """The text with tool-call markup removed, and the calls it held."""
    calls: list[ToolCallRequest] = []
    for match in _HERMES.finditer(text):
        try:
            obj = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", obj.get("parameters", {}))
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            calls.append(ToolCallRequest(_new_id(), obj["name"], arguments))
    for fn in _QWEN_FN.finditer(text):
        params = {k: _param_value(v.strip()) for k, v in _QWEN_PARAM.findall(fn.group(2))}
        calls.append(ToolCallRequest(_new_id(), fn.group(1), json.dumps(params, ensure_ascii=False)))
    calls = calls or parse_native_calls(text)
    if not calls and _BARE_CALL.match(text):
        found = _bare_calls(text)
        if found:
            return "", found
    if not calls:
        final = _HARMONY_FINAL.search(text)
        return (final.group(1).strip(), []) if final else (text, [])
    cut = min(i for i in (text.find(m) for m in MARKERS) if i >= 0)
    return text[:cut].rstrip(), calls


def _bare_calls(text: str) -> list[ToolCallRequest]:
    """The calls of a reply that is nothing but call objects (in a fence, in a list, back to back,
    perhaps an end token after them); [] unless every value is a call. A call needs a name and
    `parameters` or `arguments`, as the Llama templates ask, so that prose holding an object
    with a "name" is never taken for one."""
    fenced = _BARE_FENCE.match(text)
    bare = (fenced.group(1) if fenced else text).strip()
    bare = _END_TOKEN.sub("", bare).strip()
    values = back_to_back(bare, between=";,") or []
    objs = [obj for value in values for obj in (value if isinstance(value, list) else [value])]
    calls = []
    for obj in objs:
        if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
            obj = obj["function"]  # {"type": "function", "function": {...}} (vLLM, Llama 3.2)
        if not (isinstance(obj, dict) and isinstance(obj.get("name"), str) and obj["name"]):
            return []
        if "parameters" not in obj and "arguments" not in obj:
            return []
        args = obj.get("arguments", obj.get("parameters"))
        arguments = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
        calls.append(ToolCallRequest(_new_id(), obj["name"], arguments))
    return calls


_END_TOKEN = re.compile(r"(?:<\|[a-z_]+\|>\s*)+$")


def _bare_start(buf: str) -> bool | None:
    """Whether a reply starting with `buf` is a bare call object; None while it cannot tell."""
    head = buf.lstrip()
    if not head:
        return None
    if head[0] not in "{[`":
        return False
    if _BARE_CALL.match(head):
        return True
    return None if len(head) < _BARE_DECIDE else False


class MarkupGuard:
    """Streams text through, holding back anything from the first tool-call marker on.

    A suffix that could still grow into a marker (`<tool_c`) is held until the next chunk
    decides it; at the end, held text is released unless it parsed as tool calls.
    """

    def __init__(self, active: bool) -> None:
        self.active = active
        self.pending = ""
        self.held = False  # a marker was seen: everything from here is held
        self.leading = True  # the reply's start is still held to see if it is a bare call

    def feed(self, text: str) -> str:
        if not self.active:
            return text
        if self.held:
            self.pending += text
            return ""
        buf = self.pending + text
        if self.leading:
            bare = _bare_start(buf)
            if bare is None or bare:
                self.held = bool(bare)
                self.pending = buf
                return ""
            self.leading = False
        for marker in MARKERS:
            idx = buf.find(marker)
            if idx >= 0:
                self.held = True
                self.pending = buf[idx:]
                return buf[:idx]
        keep = 0
        for marker in MARKERS:
            for n in range(min(len(marker) - 1, len(buf)), 0, -1):
                if buf.endswith(marker[:n]):
                    keep = max(keep, n)
                    break
        self.pending = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep] if keep else buf

    def release(self) -> str:
        """Held text to show after all (it was not a tool call)."""
        out, self.pending = self.pending, ""
        return out
