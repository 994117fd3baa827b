"""The tool-calling loop (docs/DECISIONS.md, record 4): one loop, three drivers (browser, terminal, review).

`AgentLoop.run()` takes a message list (OpenAI chat format, system prompt first), calls the
model, runs the tool calls it asks for, appends every assistant and tool message to the list,
and repeats until the model gives a final answer, the iteration limit is reached, the user
interrupts, or the model fails. It yields typed events as it goes and knows nothing of Django,
Channels or the terminal: drivers persist and render the events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.llm import (
    LLMError,
    ModelReply,
    Notice,
    ReasoningChunk,
    StopSignal,
    StreamEvent,
    TextChunk,
    ToolCallRequest,
    Usage,
)
from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.results import MAX_RESULT_CHARS, ToolResult

INTERRUPTED_RESULT = ToolResult.failure("Interrupted by the user before this tool ran.")


class ModelClient(Protocol):
    model: str

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        interrupt: threading.Event | None = None,
    ) -> Iterator[StreamEvent]: ...

    def complete(
        self, messages: list[dict[str, Any]], *, timeout: float | None = None, max_tokens: int | None = None
    ) -> str: ...

    def close(self) -> None: ...


@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    """The model's thinking as it streams (shown collapsed, never as the answer)."""

    text: str


@dataclass
class ModelNotice:
    """The server lacks a feature the person should know about (said once, when learned)."""

    text: str


@dataclass
class ModelCalled:
    """One model call finished (counted by the skill-nudge counter)."""

    iteration: int
    usage: Usage
    message: dict[str, Any]  # the assistant message appended to the list
    finish_reason: str


@dataclass
class ToolStarted:
    call_id: str
    name: str
    arguments: str


@dataclass
class ToolFinished:
    call_id: str
    name: str
    arguments: str
    result: str  # what the model reads: the result's JSON, capped (ToolResult.content)
    ok: bool
    duration: float
    message: dict[str, Any]  # the tool message appended to the list


@dataclass
class TurnDone:
    final_text: str
    iterations: int
    interrupted: bool = False
    hit_limit: bool = False


@dataclass
class TurnError:
    message: str
    partial_text: str = ""
    iterations: int = 0


Event = TextDelta | ReasoningDelta | ModelNotice | ModelCalled | ToolStarted | ToolFinished | TurnDone | TurnError


@dataclass
class AgentLoop:
    client: ModelClient
    registry: ToolRegistry
    ctx: ToolContext
    max_iterations: int = 60
    max_parallel_tools: int = 4
    # Called with the message list right before each model call; returns the API copy to send
    # (used to inject recalled context into the API copy only) or None to send the list as is.
    api_view: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | None] | None = None
    # Called before each model call; may shorten the list in place (context compression).
    before_call: Callable[[list[dict[str, Any]]], None] | None = None
    # Called with one reply's tool calls before any runs (the review reads its writes in one batch).
    before_tools: Callable[[list[ToolCallRequest]], None] | None = None
    # A run no one can stop (a review, a flush) still gets a flag that calls back: a plain Event
    # would be polled by the model client while its requests wait and its replies stream.
    _interrupt: threading.Event = field(default_factory=StopSignal)

    def run(self, messages: list[dict[str, Any]], interrupt: threading.Event | None = None) -> Iterator[Event]:
        interrupt = interrupt or self._interrupt
        tools = self.registry.schemas() or None
        iteration = 0
        while True:
            if interrupt.is_set():
                yield TurnDone(final_text="", iterations=iteration, interrupted=True)
                return
            if iteration >= self.max_iterations:
                yield TurnDone(final_text="", iterations=iteration, hit_limit=True)
                return
            iteration += 1
            if self.before_call is not None:
                self.before_call(messages)
            to_send = (self.api_view(messages) if self.api_view else None) or messages
            reply: ModelReply | None = None
            try:
                for ev in self.client.stream(to_send, tools, interrupt):
                    if isinstance(ev, ModelReply):
                        reply = ev
                    else:
                        yield self._stream_event(ev)
            except LLMError as exc:
                if exc.partial_text:
                    # Keep what the user already saw, so nothing said is lost.
                    messages.append({"role": "assistant", "content": exc.partial_text})
                yield TurnError(message=exc.message, partial_text=exc.partial_text, iterations=iteration)
                return
            assert reply is not None  # stream() always ends with a ModelReply or raises
            interrupted = reply.finish_reason == "interrupted"
            calls = [] if interrupted else reply.tool_calls
            assistant = ModelReply(
                reply.content, calls, reply.finish_reason, reply.usage, reply.reasoning, reply.provider_fields
            ).to_api()
            if assistant.get("content") or calls:
                messages.append(assistant)
            yield ModelCalled(iteration, reply.usage, assistant, reply.finish_reason)
            if interrupted:
                yield TurnDone(final_text=reply.content, iterations=iteration, interrupted=True)
                return
            if not calls:
                yield TurnDone(final_text=reply.content, iterations=iteration)
                return
            yield from self._run_tools(calls, messages, interrupt)

    @staticmethod
    def _stream_event(ev: TextChunk | ReasoningChunk | Notice) -> Event:
        if isinstance(ev, TextChunk):
            return TextDelta(ev.text)
        if isinstance(ev, ReasoningChunk):
            return ReasoningDelta(ev.text)
        return ModelNotice(ev.text)

    def _run_tools(
        self, calls: list[ToolCallRequest], messages: list[dict[str, Any]], interrupt: threading.Event
    ) -> Iterator[Event]:
        parallel = len(calls) > 1 and all(
            (tool := self.registry.get(c.name)) is not None and tool.parallel_safe for c in calls
        )
        if self.before_tools is not None:
            self.before_tools(calls)
        for c in calls:
            yield ToolStarted(c.id, c.name, c.arguments)
        if parallel:
            with ThreadPoolExecutor(max_workers=min(self.max_parallel_tools, len(calls))) as pool:
                futures = [pool.submit(self._call_one, c, interrupt) for c in calls]
                outcomes = [f.result() for f in futures]
            for c, (result, duration) in zip(calls, outcomes, strict=True):
                yield self._finish(c, result, duration, messages, self._limit(c.name))
        else:
            for c in calls:
                result, duration = self._call_one(c, interrupt)
                yield self._finish(c, result, duration, messages, self._limit(c.name))

    def _call_one(self, call: ToolCallRequest, interrupt: threading.Event) -> tuple[ToolResult, float]:
        if interrupt.is_set():
            return INTERRUPTED_RESULT, 0.0
        started = time.monotonic()
        result = self.registry.dispatch(call.name, call.arguments, self.ctx)
        return result, time.monotonic() - started

    def _limit(self, name: str) -> int:
        """What one result of tool `name` may hold (its own `max_result_chars`; an unknown name's
        refusal gets the default)."""
        tool = self.registry.get(name)
        return tool.max_result_chars if tool is not None else MAX_RESULT_CHARS

    @staticmethod
    def _finish(
        call: ToolCallRequest,
        result: ToolResult,
        duration: float,
        messages: list[dict[str, Any]],
        limit: int = MAX_RESULT_CHARS,
    ) -> ToolFinished:
        """The model boundary: the one place a tool's result becomes the text the model reads,
        cut (still JSON) past the tool's `max_result_chars`."""
        content = result.content(limit)
        msg = {"role": "tool", "tool_call_id": call.id, "content": content}
        messages.append(msg)
        return ToolFinished(call.id, call.name, call.arguments, content, result.ok, duration, msg)
