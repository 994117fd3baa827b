"""Turn the chunks (or the one body) a real server sends into text, reasoning and tool calls.

Works on plain dicts (`chunk.to_dict()`), so fields the `openai` types do not know survive:
`reasoning_content` / `reasoning` / `reasoning_details`, `x_groq.usage`, arguments sent as
a JSON object, content sent as a list of parts. Where a server departs from OpenAI's dialect
the comment names it; the recorded shapes are in tests/wire/.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agent.llm.arguments import decode_arguments, is_object, merge_arguments
from agent.llm.textcalls import MarkupGuard, parse_text_calls
from agent.llm.thinking import ThinkSplitter
from agent.llm.types import ModelReply, Notice, ReasoningChunk, StreamEvent, TextChunk, ToolCallRequest, Usage

# Finish reasons that servers send although the turn ended in tool calls (Ollama "stop",
# Together "eos", TGI "eos_token", or nothing at all): the calls still run.
_PLAIN_FINISH = {"", "stop", "eos", "eos_token", "end_turn"}


def fix_surrogates(text: str) -> str:
    """Join UTF-16 surrogate halves that arrived in separate JSON strings (an emoji split in two)."""
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _split_tail(text: str) -> tuple[str, str]:
    """Hold back a trailing high surrogate: its other half comes in the next chunk."""
    if text and "\ud800" <= text[-1] <= "\udbff":
        return text[:-1], text[-1]
    return text, ""


def _thinking_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_thinking_text(v.get("text") if isinstance(v, dict) else v) for v in value)
    return ""


def content_parts(content: Any) -> tuple[str, str]:
    """(answer text, reasoning) from a string or a list of parts (LiteLLM/Mistral thinking parts)."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    parts = content if isinstance(content, list) else [content]
    text, reasoning = [], []
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in ("thinking", "reasoning", "redacted_thinking"):
                reasoning.append(_thinking_text(part.get("thinking") or part.get("text") or part.get("reasoning")))
            elif isinstance(part.get("text"), str):
                text.append(part["text"])
    return "".join(text), "".join(reasoning)


def delta_reasoning(delta: dict[str, Any]) -> str:
    # One server may send the same thought under two keys (OpenRouter: `reasoning` and
    # `reasoning_details`): take the first present, never the sum.
    for key in ("reasoning_content", "reasoning", "thinking"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    details = delta.get("reasoning_details")
    if isinstance(details, list):
        return "".join(str(d.get("text") or d.get("summary") or "") for d in details if isinstance(d, dict))
    return ""


def find_usage(obj: dict[str, Any]) -> Usage | None:
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        vendor = obj.get("x_groq")  # Groq puts usage in its own field
        usage = vendor.get("usage") if isinstance(vendor, dict) else None
    if not isinstance(usage, dict):
        choices = obj.get("choices")  # Moonshot (Kimi) puts it in the choice of the last chunk
        first = choices[0] if isinstance(choices, list) and choices else None
        usage = first.get("usage") if isinstance(first, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return Usage(int(prompt or 0), int(completion or 0), True)


_CALL_FIELDS = {"index", "id", "type", "function"}


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


# String fields of a `reasoning_details` item that arrive in pieces, to be joined.
_DETAIL_TEXT = ("text", "summary", "data")


class ProviderFields:
    """The fields of a reply message to send back with it (agent/llm/types.py, PROVIDER_FIELDS),
    from the deltas that carry them: OpenRouter streams `reasoning_details` as items with an
    `index`, whose text comes in pieces and whose signature comes last."""

    def __init__(self) -> None:
        self.details: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}

    def feed(self, delta: dict[str, Any]) -> None:
        details = delta.get("reasoning_details")
        for item in details if isinstance(details, list) else []:
            if isinstance(item, dict):
                self._detail(item)
        extra = delta.get("extra_content")
        if isinstance(extra, dict):
            self.extra = _merged(self.extra, extra)

    def _detail(self, item: dict[str, Any]) -> None:
        index = item.get("index")
        same = [d for d in self.details if index is not None and d.get("index") == index]
        if not same or same[-1].get("type") != item.get("type"):
            self.details.append({k: v for k, v in item.items() if v is not None})
            return
        slot = same[-1]
        for key, value in item.items():
            if key in _DETAIL_TEXT and isinstance(value, str) and isinstance(slot.get(key), str):
                slot[key] += value
            elif value is not None:
                slot[key] = value

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.details:
            out["reasoning_details"] = self.details
        if self.extra:
            out["extra_content"] = self.extra
        return out


class ToolCallAccumulator:
    """Tool-call deltas into whole calls, whatever the server does with `index` and `id`.

    A new `id` starts a new call even at an index already taken (Ollama 0.20 sends every
    parallel call at index 0); a delta without index or id continues the last call (Gemini
    sends no index, and its signature may come in a delta of its own); a name repeated on
    every chunk (LM Studio) is never concatenated. Fields beside id/type/function
    (`extra_content`) are kept, to be sent back with the call.
    """

    def __init__(self) -> None:
        self.slots: list[dict[str, Any]] = []

    def _slot_for(self, index: Any, call_id: str, name: str) -> dict[str, Any]:
        if call_id:
            for slot in self.slots:
                if slot["id"] == call_id:
                    return slot
        same_index = [s for s in self.slots if index is not None and s["index"] == index]
        if same_index:
            slot = same_index[-1]
            if not (call_id and slot["id"]) and not (name and slot["name"] and name != slot["name"]):
                return slot
        elif index is None and self.slots and not call_id:
            slot = self.slots[-1]
            if not (name and slot["name"] and name != slot["name"]):
                return slot
        slot = {"index": index, "id": "", "name": "", "args": [], "extra": {}}
        self.slots.append(slot)
        return slot

    def feed(self, delta: Any) -> None:
        if not isinstance(delta, dict):
            return
        raw_fn = delta.get("function")
        fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
        raw_name, raw_id = fn.get("name"), delta.get("id")
        name = raw_name if isinstance(raw_name, str) else ""
        call_id = raw_id if isinstance(raw_id, str) else ""
        args = fn.get("arguments")
        index = delta.get("index")
        if index is None and not call_id and name and isinstance(args, str) and self._another_whole_call(args):
            index = object()  # a new call (Gemini without ids: each whole call in a delta of its own)
        if self._name_piece(index, call_id, name, args):
            return
        slot = self._slot_for(index, call_id, name)
        if call_id:
            slot["id"] = call_id
        if name and not slot["name"]:
            slot["name"] = name
        extra = {k: v for k, v in delta.items() if k not in _CALL_FIELDS and v is not None}
        if extra:
            slot["extra"] = _merged(slot["extra"], extra)
        if isinstance(args, dict | list):  # llama.cpp builds that send the object itself
            slot["args"] = [json.dumps(args, ensure_ascii=False)]
        elif isinstance(args, str) and args:
            slot["args"].append(args)

    def _name_piece(self, index: Any, call_id: str, name: str, args: Any) -> bool:
        """A name streamed in pieces ("mem", "ory") before any arguments: joined, not a new call.
        (A name repeated whole, as LM Studio does, is not a piece.)"""
        if call_id or not name or args or not self.slots:
            return False
        slot = self.slots[-1]
        if slot["args"] or not slot["name"] or slot["name"] == name or index != slot["index"]:
            return False
        slot["name"] += name
        return True

    def _another_whole_call(self, args: str) -> bool:
        """A whole object after a whole object, and a different one: a new call, not a repeat."""
        if not self.slots or not is_object(args):
            return False
        before = merge_arguments(self.slots[-1]["args"])
        return is_object(before) and json.loads(before) != json.loads(args)

    def calls(self) -> list[ToolCallRequest]:
        out = []
        for i, slot in enumerate(self.slots):
            if not slot["name"] and not slot["args"]:
                continue
            arguments = decode_arguments(fix_surrogates(merge_arguments(slot["args"]))) or "{}"
            out.append(ToolCallRequest(slot["id"] or f"call_{i}", slot["name"], arguments, slot["extra"]))
        return out


TEMPLATE_THINK_NOTICE = (
    "The start of that reply was the model's thinking: its chat template opens a think block that "
    "the server does not parse. It is kept as thinking, and shown as thinking from the next reply on."
)


class Assembler:
    """One reply: `feed` each chunk (or the whole body), then `finish`."""

    def __init__(self, tools_offered: bool, think_opened: str = "", text_calls: bool | None = None) -> None:
        """`think_opened`: the closing tag when the model's template is known to open a think
        block in the prompt (see agent/llm/thinking.py). `text_calls`: what is known of this
        model's calls written as text (`Capabilities.text_calls`; False: its text is never read
        for calls, see agent/llm/textcalls.py)."""
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls = ToolCallAccumulator()
        self.provider = ProviderFields()
        self.finish_reason = ""
        self.usage: Usage | None = None
        self.guard = MarkupGuard(tools_offered and text_calls is not False)
        self._calls_as_text = False
        self.think = ThinkSplitter(think_opened)
        self._tails = {"text": "", "reasoning": ""}

    def _joined(self, kind: str, piece: str) -> str:
        out, self._tails[kind] = _split_tail(self._tails[kind] + piece)
        return fix_surrogates(out) if out else ""

    def _emit(self, answer: str, thought: str, events: list[StreamEvent]) -> None:
        if thought:
            self.reasoning.append(thought)
            events.append(ReasoningChunk(thought))
        if answer:
            self.text.append(answer)
            shown = self.guard.feed(answer)
            if shown:
                events.append(TextChunk(shown))

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        usage = find_usage(chunk)
        if usage is not None:
            self.usage = usage
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index") not in (0, None):
                continue
            delta = choice.get("delta") or self._whole_message(choice.get("message"))
            if not isinstance(delta, dict):
                continue
            legacy = delta.get("function_call")  # the functions API before tool_calls (FastChat, LocalAI)
            if isinstance(legacy, dict) and not delta.get("tool_calls"):
                delta = {**delta, "tool_calls": [{"index": 0, "function": legacy}]}
            text, thought = content_parts(delta.get("content"))
            if not text and isinstance(delta.get("refusal"), str):
                text = delta["refusal"]  # a model's refusal is its answer
            thought = self._joined("reasoning", delta_reasoning(delta) + thought)
            text = self._joined("text", text)
            orphan = self.think.orphan
            answer, inline = self.think.feed(text) if text else ("", "")
            if self.think.orphan and not orphan:
                self._template_opened(events)
            self._emit(answer, thought + inline, events)
            self.provider.feed(delta)
            for tc in delta.get("tool_calls") or []:
                self.calls.feed(tc)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return events

    @property
    def think_opened(self) -> str | None:
        """What this reply taught about the template: the closing tag when it closed a block it
        never opened, "" when a block the template was thought to open never closed (the
        finding is wrong), None when it tells nothing."""
        if self.think.orphan:
            return self.think.orphan
        return "" if self.think.unclosed.strip() else None

    def _template_opened(self, events: list[StreamEvent]) -> None:
        """The reply closed a block it never opened: the template opened it in the prompt.
        What came before the tag was thinking. It has streamed as text already (the next
        replies of this model will not: the client remembers it); the stored answer and the
        reasoning are put right."""
        thought = "".join(self.text) + self.think.orphan_thought
        self.reasoning.append(thought)
        events.append(ReasoningChunk(thought))
        self.text = []
        # The answer starts after the tag: it is watched from its own start for calls.
        self.guard = MarkupGuard(self.guard.active)
        events.append(Notice(TEMPLATE_THINK_NOTICE))

    def _whole_message(self, message: Any) -> Any:
        """A whole `message`; after streamed deltas (a last chunk repeating the reply) only what
        it adds to the text already streamed."""
        if not isinstance(message, dict) or not self.text or not isinstance(message.get("content"), str):
            return message or {}
        so_far = "".join(self.text)
        content = message["content"]
        rest = content[len(so_far) :] if content.startswith(so_far) else content
        return {**message, "content": rest}

    @property
    def text_calls(self) -> bool | None:
        """What this reply taught about the model's calls: True when they came as text (its
        native channel empty, its whole answer its calls), None when it tells nothing. Native
        calls teach nothing (see agent/llm/textcalls.py, rule 4)."""
        return True if self._calls_as_text else None

    def _text_calls(self, events: list[StreamEvent], native: bool) -> tuple[str, list[ToolCallRequest]]:
        """The answer to keep, and the calls it is when it is nothing but calls (the rule is in
        agent/llm/textcalls.py). The thinking is never read for calls."""
        text = "".join(self.text)
        held = self.guard.release()
        if not self.guard.active:
            return text, []
        visible, parsed = parse_text_calls(text)
        if parsed:
            # Without native calls they run; beside native calls they are the same calls the
            # server read, repeated as text: not an answer either way.
            self._calls_as_text = not native
            return visible, [] if native else parsed
        shown = text[: len(text) - len(held)]
        if held and visible != text and visible.startswith(shown):
            held = visible[len(shown) :]  # markup around an answer (gpt-oss final channel)
            text = visible
        if held:
            events.append(TextChunk(held))
        return text, []

    def finish(self) -> tuple[list[StreamEvent], ModelReply]:
        """Events still held back, and the reply. `finish_reason` stays "" if none came and no call."""
        events: list[StreamEvent] = []
        self._emit(*self.think.flush(), events)
        if self.think.unclosed:
            # A block the template opens that this reply never closed: it was the answer.
            self.reasoning = ["".join(self.reasoning).replace(self.think.unclosed, "", 1)]
        calls = self.calls.calls()
        text, parsed = self._text_calls(events, native=bool(calls))
        # Markup arguments get what streamed arguments get: fences, stray tokens, string literals.
        calls = calls or [replace(c, arguments=decode_arguments(c.arguments)) for c in parsed]
        for call in calls:
            if not is_object(call.arguments):
                # Said to the person, not only as a tool error the model may talk over.
                name = call.name or "a tool"
                events.append(Notice(f"The model's call to {name} could not be read — nothing was saved."))
        finish = self.finish_reason
        if calls and finish in _PLAIN_FINISH:
            finish = "tool_calls"
        usage = self.usage or Usage(0, max(1, len(text) // 4) if text else 0, False)
        reply = ModelReply(text, calls, finish, usage, "".join(self.reasoning), self.provider.fields())
        return events, reply
