"""The plain types the model boundary hands to the loop: no `openai` objects leak past it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class LLMError(Exception):
    """A model/API failure, with a human message. `partial_text` is what streamed before it."""

    def __init__(self, message: str, *, partial_text: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.partial_text = partial_text
        self.retryable = retryable


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text as the model sent it (may be malformed)
    # Fields the server put on the call beside id/type/function, sent back with it unchanged:
    # Gemini 3 refuses the next request unless `extra_content.google.thought_signature` returns.
    extra: dict[str, Any] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        call = {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}
        return {**self.extra, **call}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: bool = False


@dataclass
class TextChunk:
    text: str


@dataclass
class ReasoningChunk:
    """Thinking the model streams before (or between) its answer; never part of the answer."""

    text: str


@dataclass
class Notice:
    """Something the person should hear once about their server (a feature it lacks)."""

    text: str


# Fields a server puts on its reply message that must come back with it on later requests:
# OpenRouter's `reasoning_details` (Claude and Gemini through it refuse a tool-call follow-up
# whose signed reasoning is missing), a message-level `extra_content` (Gemini).
PROVIDER_FIELDS = ("reasoning_details", "extra_content")


def provider_fields(message: dict[str, Any]) -> dict[str, Any] | None:
    """The provider fields of an assistant message dict, None when it has none."""
    found = {k: message[k] for k in PROVIDER_FIELDS if message.get(k)}
    return found or None


@dataclass
class ModelReply:
    content: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = ""
    usage: Usage = field(default_factory=Usage)
    reasoning: str = ""
    # `PROVIDER_FIELDS` the server sent on this reply, sent back with it unchanged.
    provider_fields: dict[str, Any] = field(default_factory=dict)
    # True when the request carried the caller's `response_format` and the server accepted it;
    # False when it was left out (the server refuses it). A server may accept the field and
    # still ignore it, so the content is parsed strictly either way.
    structured: bool = False

    def to_api(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [tc.to_api() for tc in self.tool_calls]
        else:
            msg["content"] = self.content
        if self.reasoning:
            # Sent back on later requests: DeepSeek's thinking mode refuses a follow-up without it.
            msg["reasoning_content"] = self.reasoning
        msg.update(self.provider_fields)
        return msg


StreamEvent = TextChunk | ReasoningChunk | Notice | ModelReply
