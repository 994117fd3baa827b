"""A turn's frames: what each event of a turn becomes for the page (`event_frame`), and the frames'
way from the turn's worker thread to the websocket's event loop (`FrameQueue`).

The turn thread produces a frame per streamed chunk. Waking the event loop once per frame
(`call_soon_threadsafe` each time) cost ~7% of the server's CPU under 20 busy chats (bench/live.py);
here the thread wakes the loop only when no wake-up is pending, and the loop takes every frame
that arrived meanwhile in one batch. Consecutive text deltas of a batch are joined into one
delta frame (the page appends delta text, so it shows the same thing), so a slow socket or a
busy loop sends fewer, larger frames instead of falling behind.

An answer's Markdown is rendered as it streams (`TurnFrames`, over foundation/live_markdown.py):
a delta frame carries its raw `text` always, and when blocks completed, their sanitised `html`
with the open `tail` (text) after them and whether that tail is an open `fence` (its language).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from agent.chat.runner import TurnSaved, TurnStarted
from agent.loop import (
    ModelCalled,
    ModelNotice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from agent.tools.results import MAX_RESULT_CHARS
from foundation.live_markdown import LiveMarkdown, Update
from foundation.rendering import render_markdown

Frame = dict[str, Any]  # one JSON message to the page: {"type": ..., ...}


class FrameQueue:
    """Frames (None marks the end of a turn) from one producer thread to one consumer task."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._frames: list[Frame | None] = []
        self._wake_pending = False
        self._ready = asyncio.Event()  # touched on the loop only

    def put(self, frame: Frame | None) -> None:
        """Called on the turn's thread."""
        with self._lock:
            self._frames.append(frame)
            if self._wake_pending:
                return
            self._wake_pending = True
        self._loop.call_soon_threadsafe(self._ready.set)

    async def get_batch(self) -> list[Frame | None]:
        """Every frame that arrived since the last batch (at least one), in order."""
        await self._ready.wait()
        with self._lock:
            frames, self._frames = self._frames, []
            self._wake_pending = False
            self._ready.clear()
        return coalesce(frames)


def coalesce(frames: list[Frame | None]) -> list[Frame | None]:
    """Join runs of text deltas into one delta frame each; every other frame stays as it is."""
    out: list[Frame | None] = []
    for frame in frames:
        last = out[-1] if out else None
        if frame is not None and frame["type"] == "delta" and last is not None and last["type"] == "delta":
            out[-1] = _join_deltas(last, frame)
        else:
            out.append(frame)
    return out


def _join_deltas(a: Frame, b: Frame) -> Frame:
    """One delta frame the page shows as it would show `a` then `b`: the blocks of both, and the
    tail as `b` left it (or `a`'s with `b`'s text appended, as the page appends it)."""
    text = a["text"] + b["text"]
    if "tail" in b:
        return {**b, "text": text, "html": a.get("html", "") + b["html"]}
    if "tail" in a:
        return {**a, "text": text, "tail": a["tail"] + b["text"]}
    return {"type": "delta", "text": text}


# -- a turn's events, as frames -------------------------------------------------------------------


def _tool_finished(e: ToolFinished) -> Frame:
    # Tool results can be long (file listings, search results); the card shows a readable head.
    result = e.result if len(e.result) <= MAX_RESULT_CHARS else e.result[:MAX_RESULT_CHARS] + "\n… (truncated)"
    return {
        "type": "tool_finished",
        "call_id": e.call_id,
        "name": e.name,
        "result": result,
        "ok": e.ok,
        "duration": round(e.duration, 3),
    }


def _saved(e: TurnSaved) -> Frame:
    return {
        "type": "saved",
        "turns_until_memory_review": e.turns_until_memory_review,
        "iters_until_skill_review": e.iters_until_skill_review,
        "review_spawned": e.review_spawned,
        # A review spawned by an earlier turn may still run: the service adds that, with the
        # chat's stored title, from one query (knowledge/history/runs.py).
        "review_running": e.review_spawned,
    }


def estimate_tokens(text: str) -> int:
    """About four characters a token, for servers that report no usage."""
    return max(1, len(text) // 4) if text else 0


# Event type -> frame builder.
FRAME_BUILDERS: dict[type, Callable[[Any], Frame | None]] = {
    # `html`: the person's message rendered as a reload would show it (their code blocks included).
    TurnStarted: lambda e: {
        "type": "turn_started",
        "message_id": e.user_message_id,
        "text": e.text,
        "kind": e.kind,  # a new question, or a version made in place (agent/chat/versions.py)
        "answer_id": e.answer_id,
        "html": render_markdown(e.text),
    },
    TextDelta: lambda e: {"type": "delta", "text": e.text},
    # The model's thinking while it streams: the page shows it in a collapsed "Thinking" block.
    ReasoningDelta: lambda e: {"type": "reasoning", "text": e.text},
    # A feature the server lacks, learned this turn (e.g. no tool calls): one line for the person.
    ModelNotice: lambda e: {"type": "notice", "text": e.text},
    # What the answer cost, for the line under it: as the server reported, estimated otherwise.
    ModelCalled: lambda e: {
        "type": "usage",
        "tokens": e.usage.completion_tokens or estimate_tokens(str(e.message.get("content") or "")),
        "estimated": not e.usage.reported,
    },
    ToolStarted: lambda e: {"type": "tool_started", "call_id": e.call_id, "name": e.name, "arguments": e.arguments},
    ToolFinished: _tool_finished,
    TurnDone: lambda e: {
        "type": "done",
        "final_html": render_markdown(e.final_text),
        "interrupted": e.interrupted,
        "hit_limit": e.hit_limit,
    },
    TurnError: lambda e: {"type": "error", "error": e.message, "partial": e.partial_text, "retry": True},
    TurnSaved: _saved,
}


def event_frame(event: object) -> Frame | None:
    builder = FRAME_BUILDERS.get(type(event))
    return builder(event) if builder is not None else None


def _delta(text: str, update: Update | None) -> Frame:
    if update is None:
        return {"type": "delta", "text": text}
    return {"type": "delta", "text": text, "html": update.html, "tail": update.tail, "fence": update.fence}


class TurnFrames:
    """The frames of one turn's events, its answers' Markdown rendered as they stream.

    Each model call's text is one answer block on the page (text after a tool call starts a new
    one): when the call ends (or the turn fails), what is left open is rendered, so the page shows
    every answer as a reload would. A Continue streams plain text: the page shows the stopped
    answer's source with the new text joined to it, and the final render replaces both at the end.
    """

    def __init__(self) -> None:
        self._live: LiveMarkdown | None = LiveMarkdown()

    def frames(self, event: object) -> list[Frame]:
        if isinstance(event, TurnStarted) and event.kind == "continue":
            self._live = None
        if isinstance(event, TextDelta):
            return [_delta(event.text, self._live.feed(event.text) if self._live else None)]
        out: list[Frame] = []
        if isinstance(event, ModelCalled | TurnError) and self._live is not None:
            rest = self._live.close()
            if rest is not None:
                out.append(_delta("", rest))
        frame = event_frame(event)
        return out + ([frame] if frame is not None else [])
