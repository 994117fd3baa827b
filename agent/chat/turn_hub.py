"""A running turn's frames for the sockets that open while it runs: a reload, a second tab,
another device (docs/BEHAVIOUR.md, "Joining an answer being written").

Each turn of the browser chat has a hub on the server process whose thread runs it, listening on
its own channel in the group `turn.<session_id>` until the turn ends. It is not tied to the socket
that sent the message, which may be gone (its tab reloaded), and the channel layer reaches it from
every server process (Redis) or within the one (in memory). A socket opened while a turn of its
session runs sends `turn.join` there: the hub answers with every frame of the turn so far
(`chat.catchup`, runs of text deltas joined, so the page renders the answer so far as the live
renderer did) and from then on the turn's frames are mirrored to the session's group for it, as
for a tab that was open when the turn began. `turn.stop` stops the turn from any process.

The turn's frames go out in numbered batches, recorded and sent under one lock with the catchups:
a batch mirrored to a joining socket before its catchup is in that catchup, so the socket drops
it (agent/chat/consumers.py) and shows each frame once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from agent.chat.frames import Frame, coalesce


def group_of(session_id: str) -> str:
    return f"turn.{session_id}"


class TurnHub:
    def __init__(self, layer: Any, session_id: str, stop: Callable[[], object]) -> None:
        self.layer = layer
        self.group = group_of(session_id)
        self.stop = stop
        self.id = uuid.uuid4().hex  # names this turn in its frames' batches
        self.seq = 0  # batches recorded so far
        self.frames: list[Frame] = []  # every frame of the turn so far, as sent
        self.listeners: set[str] = set()  # sockets that joined mid-turn and want its frames
        self.lock = asyncio.Lock()  # a batch is recorded and sent, or a catchup sent, at a time
        self.channel = ""
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Listen for joins before the turn's first frame, so no socket opened meanwhile misses it."""
        self.channel = await self.layer.new_channel("turn.")
        await self.layer.group_add(self.group, self.channel)
        self._task = asyncio.create_task(self._listen())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.channel:
            await self.layer.group_discard(self.group, self.channel)

    def record(self, frames: list[Frame]) -> dict[str, Any]:
        """Note a batch about to be sent (the caller holds `lock`); its mark for the mirror."""
        self.frames.extend(frames)
        self.seq += 1
        return {"turn": self.id, "seq": self.seq}

    async def _listen(self) -> None:
        while True:
            message = await self.layer.receive(self.channel)
            kind = message.get("type")
            if kind == "turn.join":
                await self._catch_up(str(message["channel"]))
            elif kind == "turn.leave":
                self.listeners.discard(str(message["channel"]))
            elif kind == "turn.stop":
                self.stop()

    async def _catch_up(self, channel: str) -> None:
        async with self.lock:
            frames = [f for f in coalesce(list(self.frames)) if f is not None]
            catchup = {"type": "chat.catchup", "turn": self.id, "seq": self.seq, "frames": frames}
            await self.layer.send(channel, catchup)
            self.listeners.add(channel)
