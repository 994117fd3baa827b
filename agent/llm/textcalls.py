"""Tool calls a model wrote as text because the server's tool parser is off (or missed them).

Hermes/Qwen `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, Qwen3-Coder's
`<function=NAME><parameter=KEY>VALUE</parameter></function>`, the template tokens of other
model families (agent/llm/native_calls.py), and a reply that is nothing but a call object
`{"name": ..., "parameters": {...}}` (Llama 3.x JSON tool calling without a parser).

Text that looks like a call is not a call for looking like one: a page the person pasted and
asked to tidy, translate or summarise may hold such markup, and a model quoting it back must
not run it. Which text is a call is decided by where it stands, never by what it says:

1. Native calls win. A reply whose server sent calls in its `tool_calls` field runs those and
   no others. Its text never runs; text that is nothing but calls is those calls repeated by the
   server, and is not shown either.
2. Only the answer is read, never the thinking: a `reasoning` field, a think block
   (agent/llm/thinking.py) and gpt-oss's analysis channel hold no calls, whatever they quote.
3. The answer must be nothing but calls. From its first character to its last, apart from
   whitespace between calls and the template's own wrapping and end tokens (`</tool_call>`,
   `<|eot_id|>`, `<｜tool▁calls▁end｜>` …), it is call markup of one format, every call read
   whole. So markup after prose ("Here is the page: <tool_call>…"), inside a ``` or ~~~ fence
   (a bare call object in a fence too), in a quoted "> " line, or followed by more text is not a
   call: it is part of the answer and shown as ordinary text.
4. Learned per server + model (`Capabilities.text_calls`, given to `Assembler(text_calls=…)`).
   None (not known yet): a reply that is wholly calls, with the native channel empty, runs them
   and teaches True (`Assembler.text_calls`, for the client to store). True: the same rule; it
   records that this model calls through text. False: text is never read for calls. Native
   calls do not teach False: parsers that work most of the time still miss a reply now and then
   and pass its markup through as content (SGLang and vLLM with Kimi K2), and those calls are
   the model's own. A reply that is nothing but calls is therefore run whatever is known short of
   False, so a pasted page that is itself nothing but calls, repeated with not a word around it,
   would run: the one case position cannot tell apart.

Held back while it may be calls: the start of a reply (`MarkupGuard`), never the rest, since
markup after anything else is not a call. Whatever is held and turns out not to be calls is
shown after all.
"""

from __future__ import annotations

import json
import re
import uuid

from agent.llm.arguments import back_to_back
from agent.llm.native_calls import HARMONY_ANALYSIS, READERS, Found, object_call
from agent.llm.native_calls import MARKERS as NATIVE_MARKERS
from agent.llm.types import ToolCallRequest

MARKERS = ("<tool_call>", "<function=", *NATIVE_MARKERS)
# gpt-oss (harmony) answering without a call: the final channel is the answer.
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>(.*?)(?:<\|return\|>|<\|end\|>|$)", re.S)
_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.S)
_QWEN_FN = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|$)", re.S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|$)", re.S)
# The start of a reply that is a bare call object (or a list of them).
_BARE_CALL = re.compile(r'\s*\[?\s*\{\s*"(?:name|function|type)"\s*:')
# A reply that starts like one is held this long (without its leading whitespace) to decide.
_BARE_DECIDE = 48
# What may stand between and around calls: whitespace, and a template's wrapping and end tokens
# (`<tool_call>` around Qwen3-Coder's `<function=…>`, `<|tool_calls_section_begin|>`, `<|eot_id|>`,
# `<｜tool▁calls▁end｜>`, gpt-oss's `<|start|>assistant`). Never a word of prose. One whitespace
# character at a time: `(\s+)*` backtracks exponentially on a long run of spaces before prose.
_FILLER = re.compile(r"(?:\s|</?tool_call>|<\|[a-z_]+\|>|<｜[^｜<>\s]+｜>|<\|start\|>\s*assistant)*")
_END_TOKEN = re.compile(r"(?:<\|[a-z_]+\|>\s*)+$")


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _param_value(raw: str) -> object:
    # Qwen3-Coder writes every value as text; numbers, booleans and JSON values are typed.
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _hermes(text: str) -> list[Found]:
    found = []
    for match in _HERMES.finditer(text):
        try:
            obj = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue  # not read, so the answer is not wholly calls
        call = object_call(obj)
        if call is not None:
            found.append(Found(ToolCallRequest(_new_id(), call.name, call.arguments), *match.span()))
    return found


def _qwen_fn(text: str) -> list[Found]:
    found = []
    for fn in _QWEN_FN.finditer(text):
        params = {k: _param_value(v.strip()) for k, v in _QWEN_PARAM.findall(fn.group(2))}
        call = ToolCallRequest(_new_id(), fn.group(1), json.dumps(params, ensure_ascii=False))
        found.append(Found(call, *fn.span()))
    return found


def _nothing_else(text: str, found: list[Found]) -> bool:
    """Whether the calls' markup, with filler around it, is all of `text`."""
    pos = 0
    for f in sorted(found, key=lambda f: f.start):
        if f.start < pos or _FILLER.fullmatch(text, pos, f.start) is None:
            return False
        pos = f.end
    return _FILLER.fullmatch(text, pos) is not None


def _bare_calls(text: str) -> list[ToolCallRequest]:
    """The calls of an answer that is nothing but call objects (in a list, back to back, perhaps
    an end token after them); [] unless every value is a call. A call needs a name and
    `parameters` or `arguments`, as the Llama templates ask, so that prose holding an object
    with a "name" is never taken for one."""
    bare = _END_TOKEN.sub("", text.strip()).strip()
    values = back_to_back(bare, between=";,") or []
    objs = [obj for value in values for obj in (value if isinstance(value, list) else [value])]
    calls = []
    for obj in objs:
        if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
            obj = obj["function"]  # {"type": "function", "function": {...}} (vLLM, Llama 3.2)
        if not isinstance(obj, dict) or ("parameters" not in obj and "arguments" not in obj):
            return []
        call = object_call({k: v for k, v in obj.items() if k != "id"})
        if call is None:
            return []
        calls.append(call)
    return calls


def read_calls(text: str) -> list[ToolCallRequest]:
    """The calls of an answer that is nothing but calls (rule 3 above); [] for any other text."""
    head = text.lstrip()
    if _BARE_CALL.match(head):
        return _bare_calls(head)
    if not head.startswith(MARKERS):
        return []
    # gpt-oss's analysis channel is its thinking: blanked (positions kept), never read.
    answer = HARMONY_ANALYSIS.sub(lambda m: " " * len(m.group(0)), text)
    for read in (_hermes, _qwen_fn, *READERS):
        found = read(answer)
        if found:
            return [f.call for f in found] if _nothing_else(answer, found) else []
    return []


def parse_text_calls(text: str) -> tuple[str, list[ToolCallRequest]]:
    """The answer to show and the calls it is: ("", calls) when the text is nothing but calls;
    gpt-oss's final channel when the text is its channels; else the text unchanged."""
    calls = read_calls(text)
    if calls:
        return "", calls
    head = text.lstrip()
    if head.startswith(("<|channel|>", "<|start|>")):
        final = _HARMONY_FINAL.search(text)
        if final:
            return final.group(1).strip(), []
    return text, []


def _starts_calls(buf: str) -> bool | None:
    """Whether a reply starting with `buf` may be calls; None while it cannot tell."""
    head = buf.lstrip()
    if not head:
        return None
    if head.startswith(MARKERS):
        return True
    if any(marker.startswith(head) for marker in MARKERS):
        return None  # "<tool_c": the next piece decides
    if head[0] not in "{[":
        return False
    if _BARE_CALL.match(head):
        return True
    return None if len(head) < _BARE_DECIDE else False


class MarkupGuard:
    """Streams an answer through, holding back its start while it may be a reply of calls.

    Once the start is seen to be anything else, everything streams as it comes (markup after
    it is not a call). A start that is held stays held to the end, where it is released unless
    it was calls.
    """

    def __init__(self, active: bool) -> None:
        self.active = active
        self.pending = ""
        self.decided: bool | None = None  # True: held to the end; False: streaming

    def feed(self, text: str) -> str:
        if not self.active or self.decided is False:
            return text
        self.pending += text
        if self.decided is None:
            self.decided = _starts_calls(self.pending)
            if self.decided is False:
                out, self.pending = self.pending, ""
                return out
        return ""

    def release(self) -> str:
        """Held text to show after all (it was not calls)."""
        out, self.pending = self.pending, ""
        return out
