"""What one chat socket shows of the turns of its session it did not start, and who else listens
(docs/ARCHITECTURE.md, "The path of a turn").

Every socket of one session is in the group `chat.<session_id>`. `TurnWatch` is one socket's part
in it, whatever its consumer's base class: it introduces the socket to the group (`chat.join`,
answered `chat.peer`; `chat.leave` when it goes), so the socket knows whether another one listens
(`has_peers`: its own turns are mirrored only then). It shows the frames mirrored from a turn
another socket started (`chat.mirror`), asks that turn's hub for the answer so far when it joins
one mid-way (`turn.join`, answered `chat.catchup`; agent/chat/turn_hub.py, `Follower` keeps each
frame once and in order), and watches the lease of the turn it shows (knowledge/history/turns.py):
when the server running it dies, the socket gets {"type": "error", "error": SERVER_STOPPED} and
"ready" within seconds, so no tab stays busy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async

from agent.chat.frames import Frame
from agent.chat.turn_hub import Follower, group_of
from knowledge.history import turns

SERVER_STOPPED = "The server writing this answer stopped. What it wrote so far is kept; send a message to go on."
# How often a socket showing another worker's turn checks that turn's lease (seconds). With the
# lease's length this bounds how long a tab can show an answer whose server died.
WATCH_EVERY = 2.0
# How long a turn seen released may take for its own "ready" to come through the channel layer
# before the watch says it itself (seconds). A count of checks was not enough: at a short check
# interval the Redis layer's delivery lagged two checks, and the tab showed the watch's "ready"
# and then the turn's last frames after it.
ENDED_GRACE = 1.0

# Sends one frame to this socket's page (nothing once the page is gone).
SendFrame = Callable[[dict[str, Any]], Awaitable[None]]


class TurnWatch:
    def __init__(self, layer: Any, session_id: str, channel: str, send: SendFrame, *, every: float = WATCH_EVERY):
        self.layer = layer
        self.session_id = session_id
        self.channel = channel  # this socket's channel on the layer
        self.group = f"chat.{session_id}"
        self.send = send
        self.every = every
        self.follower = Follower()  # what it shows of the turns it did not start
        # The other sockets of this session, which this one's turns are mirrored to. Without
        # them a turn's frames skip the channel layer: no second dispatch of every frame.
        self.peers: set[str] = set()
        self.watch: asyncio.Task[None] | None = None  # the lease watch of a turn shown, not run, here
        self.poked = asyncio.Event()  # check that turn now, not at the next `every`
        # The watch ended the turn shown here with its own "ready": the turn's own, if it still
        # comes through the channel layer, is the same news and is not shown twice.
        self.ended_here = False

    def has_peers(self) -> bool:
        return bool(self.peers)

    async def enter(self) -> None:
        """The socket joins its session's group (before it is accepted)."""
        await self.layer.group_add(self.group, self.channel)

    async def introduce(self) -> None:
        """The socket is open: the others learn it listens, and a turn running now is watched (a
        page opened while an answer is being written)."""
        await self.layer.group_send(self.group, {"type": "chat.join", "channel": self.channel})
        await self._watch_current_turn()

    async def leave(self) -> None:
        """The socket closed: the others stop mirroring to it, and so does a turn it joined. A
        running turn goes on (its messages are stored)."""
        await self.layer.group_send(self.group, {"type": "chat.leave", "channel": self.channel})
        await self.layer.group_discard(self.group, self.channel)
        if self.follower.asked:
            await self.layer.group_send(group_of(self.session_id), {"type": "turn.leave", "channel": self.channel})

    def end(self) -> None:
        """Nothing started elsewhere is shown here any more (the socket closed, or it claimed the
        session for a turn of its own: any turn watched here is over)."""
        self._end_watch()
        self.follower.give_up()

    def poke(self) -> None:
        """Stop was pressed: a turn watched here whose server died ends now, not at the next check."""
        self.poked.set()

    # -- the session group's messages (the consumer's channel-layer handlers hand them here) ----------

    async def on_chat_join(self, event: dict[str, Any]) -> None:
        """Another socket opened on this session: it listens, and it learns that this one does."""
        if event["channel"] != self.channel:
            self.peers.add(event["channel"])
            await self.layer.send(event["channel"], {"type": "chat.peer", "channel": self.channel})

    async def on_chat_peer(self, event: dict[str, Any]) -> None:
        self.peers.add(event["channel"])

    async def on_chat_leave(self, event: dict[str, Any]) -> None:
        self.peers.discard(event["channel"])

    async def on_chat_mirror(self, event: dict[str, Any]) -> None:
        """Frames of a turn started from another socket of this session."""
        if event["origin"] == self.channel:
            return
        frames, join = self.follower.mirrored(event)
        if join:  # its first frames went out before its worker knew of this socket
            await self._ask_to_join()
        await self._show(frames)
        if join and self.watch is None:
            await self._watch_current_turn()

    async def on_chat_catchup(self, event: dict[str, Any]) -> None:
        """The frames so far of the turn this socket joined (agent/chat/turn_hub.py)."""
        await self._show(self.follower.caught_up(event))

    async def join(self) -> None:
        """The page asked for the turn running now: its frames so far then the rest, or "idle"."""
        if await self._watch_current_turn() is None:
            self.follower.give_up()
            await self.send({"type": "idle"})
        elif self.follower.join():
            await self._ask_to_join()

    async def _show(self, frames: list[Frame]) -> None:
        for frame in frames:
            if frame["type"] == "ready" and self.ended_here:
                self.ended_here = False  # this tab was told already, by the watch
                continue
            if frame["type"] == "turn_started":
                self.ended_here = False  # a new turn: its "ready" is news
            await self.send({**frame, "mirrored": True})
            if frame["type"] == "ready":
                self._end_watch()
            elif frame["type"] == "turn_started" or self.watch is None:
                # A turn's first frames reach only the sockets its worker already knew of:
                # any frame of a turn not yet watched starts the watch.
                await self._watch_current_turn()

    async def _ask_to_join(self) -> None:
        await self.layer.group_send(group_of(self.session_id), {"type": "turn.join", "channel": self.channel})

    # -- the lease of a turn shown here but run by another socket, maybe on another worker -----------

    async def _watch_current_turn(self) -> turns.Holder | None:
        holder = await database_sync_to_async(turns.holder, thread_sensitive=False)(self.session_id)
        self._end_watch()
        if holder is not None:
            self.watch = asyncio.create_task(self._watch_turn(holder))
        return holder

    def _end_watch(self) -> None:
        watch, self.watch = self.watch, None
        if watch is not None and watch is not asyncio.current_task():
            watch.cancel()

    async def _watch_turn(self, holder: turns.Holder) -> None:
        """End this tab's view of the turn `holder` names once its lease is void (its server
        died or froze): the error, then "ready", so the input takes the next message."""
        loop = asyncio.get_running_loop()
        ended_at: float | None = None  # the loop's time when the turn was first seen released
        while True:
            try:
                await asyncio.wait_for(self.poked.wait(), self.every)
            except TimeoutError:
                pass
            self.poked.clear()
            # Off the one thread all consumers share for sync work, as the claim: many tabs watch.
            state = await database_sync_to_async(turns.check, thread_sensitive=False)(self.session_id, holder)
            if state == "running":
                if self.follower.joining:
                    # Its hub may have started listening just after the join was sent.
                    await self._ask_to_join()
                continue
            if state == "ended":
                # Its own "ready" is on its way through the channel layer: given the grace to
                # arrive, and sent here only if its worker died right after the turn.
                if ended_at is None:
                    ended_at = loop.time()
                if loop.time() - ended_at < ENDED_GRACE:
                    continue
            self.follower.give_up()  # no turn left to join
            if state == "lost":
                await self.send({"type": "error", "error": SERVER_STOPPED, "retry": False, "mirrored": True})
            await self.send({"type": "ready", "mirrored": True})
            self.watch, self.ended_here = None, True
            return
