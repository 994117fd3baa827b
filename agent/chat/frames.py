"""A turn's frames: what each event of a turn becomes for the page (`event_frame`), and the frames'
way from the turn's worker thread to the websocket's event loop (`FrameQueue`).

The turn thread produces a frame per streamed chunk. Waking the event loop from a thread costs
both sides: at a real model's pace (a chunk every 20 ms) the wake-up's write took 0.14 ms of the
turn thread and the loop's return from its wait 0.2 ms, most of a chunk's cost (bench/RESULTS.md).
So the thread wakes the loop only when no wake-up is pending, the loop takes every frame that
arrived meanwhile in one batch, and while text streams in faster than `FRAME_WINDOW` (one chat's
fast model, or many chats at once) the loop stops being woken for text deltas at all: it collects
every chat's frames on a timer of its own, once per window, until a window passes with none.
A turn's first delta (its first token) and every other frame (a tool's start, the answer's end)
still wake it at once. Consecutive text deltas of a batch are joined into one delta frame (the
page appends delta text, so it shows the same thing), so a slow socket or a busy loop sends fewer,
larger frames instead of falling behind.

An answer's Markdown is rendered as it streams (`TurnFrames`, over foundation/live_markdown.py):
a delta frame carries its raw `text` always, and when blocks completed, their sanitised `html`
with the open `tail` (text) after them and whether that tail is an open `fence` (its language).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
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


# How long a text delta may wait for the loop's own collection while deltas arrive faster than
# this (seconds): 25 updates a second still read as smooth streaming.
FRAME_WINDOW = 0.04


class FrameQueue:
    """Frames (None marks the end of a turn) from one producer thread to one consumer task."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._wakes = _Wakes.of(loop)
        self._frames: list[Frame | None] = []  # guarded by the loop's `_Wakes.lock`
        self._listed = False  # among the loop's queues with frames to hand out
        self._had_delta = False
        self._ready = asyncio.Event()  # touched on the loop only
        self._wakes.opened()

    def put(self, frame: Frame | None) -> None:
        """Called on the turn's thread."""
        # The first token, and anything but text, is shown at once; the rest of the text may
        # wait for the loop's next collection.
        urgent = frame is None or frame["type"] != "delta" or not self._had_delta
        if frame is not None and frame["type"] == "delta":
            self._had_delta = True
        self._wakes.put(self, frame, urgent)

    def discard(self) -> None:
        """The turn this queue was made for never started (its claim was refused)."""
        self._wakes.closed()

    async def get_batch(self) -> list[Frame | None]:
        """Every frame that arrived since the last batch (at least one), in order."""
        while True:
            await self._ready.wait()
            with self._wakes.lock:
                frames, self._frames = self._frames, []
                self._ready.clear()
            if frames:  # (a collection may find frames an earlier batch already took)
                return coalesce(frames)


class _Wakes:
    """When the frame queues of one event loop wake it: the producers' side (`put`, on their
    threads) and the loop's (`_woken`, `_collect`), under one lock."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # (held weakly: the loop is this object's key)
        self.lock = threading.Lock()
        self.listed: list[FrameQueue] = []  # queues with frames not yet handed to their task
        self.open = 0  # queues whose turn has not ended
        self.wake_sent = False  # a wake-up is on its way to the loop
        # The loop collects on its own timer: producers leave text deltas to it. Set and cleared
        # by the loop only, under the lock, so a producer that sees it set knows a collection
        # will come.
        self.collecting = False
        self.timer: asyncio.TimerHandle | None = None  # the next collection (loop only)
        self.last_wake = -FRAME_WINDOW  # the loop's time of the last wake-up a producer sent

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> _Wakes:
        wakes = _loop_wakes.get(loop)
        if wakes is None:
            wakes = _loop_wakes[loop] = cls(loop)
        return wakes

    def opened(self) -> None:
        with self.lock:
            self.open += 1

    def closed(self) -> None:
        with self.lock:
            self.open -= 1

    def put(self, queue: FrameQueue, frame: Frame | None, urgent: bool) -> None:
        with self.lock:
            queue._frames.append(frame)
            if frame is None:
                self.open -= 1
            if not queue._listed:
                queue._listed = True
                self.listed.append(queue)
            if self.wake_sent or (self.collecting and not urgent):
                return
            self.wake_sent = True
        loop = self._loop()
        if loop is not None:  # (None: the loop is gone, and every task that could read this)
            loop.call_soon_threadsafe(self._woken)

    def _take(self) -> list[FrameQueue]:
        queues, self.listed = self.listed, []
        for queue in queues:
            queue._listed = False
        return queues

    def _woken(self) -> None:
        """A producer's wake-up: hand out every frame. Wake-ups coming faster than the window
        start the loop's own collection; the last turn's end stops it."""
        loop = self._loop()
        assert loop is not None  # this runs on it
        now = loop.time()
        with self.lock:
            self.wake_sent = False
            start = not self.collecting and self.open > 0 and now - self.last_wake < FRAME_WINDOW
            stop = self.collecting and self.open == 0
            self.collecting = (self.collecting or start) and not stop
            self.last_wake = now
            queues = self._take()
        for queue in queues:
            queue._ready.set()
        if stop and self.timer is not None:
            self.timer.cancel()  # no empty collection after the last answer ended
            self.timer = None
        if start:
            self.timer = loop.call_later(FRAME_WINDOW, self._collect)

    def _collect(self) -> None:
        """The loop's own collection, once a window while frames keep coming; it stops after a
        window with none (producers wake the loop again)."""
        with self.lock:
            queues = self._take()
            self.collecting = bool(queues) and self.open > 0
        for queue in queues:
            queue._ready.set()
        loop = self._loop()
        self.timer = loop.call_later(FRAME_WINDOW, self._collect) if self.collecting and loop else None


# Each event loop's wake policy (daphne runs one loop; tests run one per test).
_loop_wakes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Wakes] = weakref.WeakKeyDictionary()


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
