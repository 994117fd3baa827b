"""Tool calls a model wrote as text because the server's tool parser is off.

Hermes/Qwen `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, Qwen3-Coder's
`<function=NAME><parameter=KEY>VALUE</parameter></function>`, and the template tokens of other
model families (agent/llm/native_calls.py). They are parsed only when tools were offered, and
the markup is held back from the streamed answer so the person never sees it as the reply.
"""

from __future__ import annotations

import json
import re
import uuid

from agent.llm.native_calls import MARKERS as NATIVE_MARKERS
from agent.llm.native_calls import parse_native_calls
from agent.llm.types import ToolCallRequest

MARKERS = ("<tool_call>", "<function=", *NATIVE_MARKERS)
# gpt-oss (harmony) answering without a call: the final channel is the answer.
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>(.*?)(?:<\|return\|>|<\|end\|>|$)", re.S)
_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.S)
_QWEN_FN = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|$)", re.S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|$)", re.S)


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
    if not calls:
        final = _HARMONY_FINAL.search(text)
        return (final.group(1).strip(), []) if final else (text, [])
    cut = min(i for i in (text.find(m) for m in MARKERS) if i >= 0)
    return text[:cut].rstrip(), calls


class MarkupGuard:
    """Streams text through, holding back anything from the first tool-call marker on.

    A suffix that could still grow into a marker (`<tool_c`) is held until the next chunk
    decides it; at the end, held text is released unless it parsed as tool calls.
    """

    def __init__(self, active: bool) -> None:
        self.active = active
        self.pending = ""
        self.held = False  # a marker was seen: everything from here is held

    def feed(self, text: str) -> str:
        if not self.active:
            return text
        if self.held:
            self.pending += text
            return ""
        buf = self.pending + text
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
