"""A running turn and the sockets that show it: a reload, a second tab, another device
(docs/BEHAVIOUR.md, The chat).

`TurnHub` is a turn's side, on the server process whose thread runs it, from its claim to its last
frame. It sends the turn's frames to the socket that sent the message while that socket is open
(a closed one is dropped, the turn goes on), mirrors them to the session's group
(`chat.<session_id>`) while another socket listens, and listens itself on a channel of its own in
the group `turn.<session_id>`, which every server process sharing the channel layer reaches:
`turn.join` (answered `chat.catchup`: every frame of the turn so far, runs of text joined, so the
page renders the answer so far as it streamed; the socket then gets the mirrored frames as a tab
open from the start does), `turn.leave`, and `turn.stop` (Stop pressed on any socket of the
session, wherever the one that sent the message went).

Its channel comes from the layer's `new_channel()` with the default prefix, as every consumer's:
channels_redis reads a process's channels from one Redis list per prefix, and one receiver of a
list of its own would hold the process's receive lock while blocking on it, so neither it nor
the consumers would hear anything.

`Follower` is a socket's side: which mirrored batches and catchups it shows. Batches are numbered
per turn and recorded under one lock with the catchups, so a batch mirrored before a catchup is
in it: a socket joining holds the batches that arrive meanwhile and shows, after the catchup, only
those numbered after it: each frame once, in order, whichever arrives first.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from channels.exceptions import ChannelFull

from agent.chat import live
from agent.chat.frames import Frame, FrameQueue, coalesce

log = logging.getLogger(__name__)

# Sends a batch to the socket that sent the message; False once that socket is gone.
Deliver = Callable[[list[Frame]], Awaitable[bool]]

# How long a turn's end waits for its hub to stop listening (seconds).
CLOSE_WAIT = 10.0
# The hubs of the turns running on this process: each keeps its tasks alive until its turn's
# last frame went out, whatever became of the socket that started it.
_hubs: set[TurnHub] = set()


def group_of(session_id: str) -> str:
    return f"turn.{session_id}"


class TurnHub:
    def __init__(
        self,
        layer: Any,
        session_id: str,
        *,
        deliver: Deliver,
        has_peers: Callable[[], bool],
        origin: str,
        stop: Callable[[], object],
    ) -> None:
        self.layer = layer
        self.session_id = session_id
        self.group = group_of(session_id)
        self.deliver: Deliver | None = deliver
        self.has_peers = has_peers  # the sending socket knows of another socket of the session
        self.origin = origin  # the sending socket's channel: it shows its own frames, not their mirror
        self.stop = stop
        self.id = uuid.uuid4().hex  # names this turn in its frames' batches
        self.seq = 0  # batches sent so far
        self.frames: list[Frame] = []  # every frame of the turn so far, as sent
        self.listeners: set[str] = set()  # sockets that joined mid-turn and want its frames
        self.lock = asyncio.Lock()  # a batch is recorded and sent, or a catchup sent, at a time
        self.running = False
        self.channel = ""
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, queue: FrameQueue) -> None:
        """Send the turn's frames as `queue` yields them, and listen for joins and stops."""
        self.channel = await self.layer.new_channel()  # a name only: no round trip
        self.running = True
        _hubs.add(self)
        live.gate.begin(self.session_id)
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._pump(queue))]

    async def _pump(self, queue: FrameQueue) -> None:
        """Send the turn's frames in order, a batch per wake-up; then release any toast waiting
        for this turn."""
        try:
            ended = False
            while not ended:
                batch = await queue.get_batch()
                ended = None in batch
                frames = [f for f in batch if f is not None] + ([{"type": "ready"}] if ended else [])
                if ended:
                    # No receive of this hub is left pending once a tab hears "ready" (and maybe
                    # closes, or the server shuts down); its group is left after the last frames.
                    await self._stop_listening()
                await self._send(frames)
                if any(f["type"] == "saved" and f.get("review_spawned") for f in frames):
                    await live.broadcast(live.REVIEW_STARTED, {"session_id": self.session_id})
            await self.layer.group_discard(self.group, self.channel)
        finally:
            self.running = False
            _hubs.discard(self)
            live.gate.delivered(self.session_id)
            if not self._tasks[0].done():
                self._tasks[0].cancel()  # the pump itself was cancelled (the server shuts down)

    async def _stop_listening(self) -> None:
        """End the listener with a message of its own rather than by cancelling it: with the
        channels_redis layer, a receive cancelled as the event loop closes (a test's end, a
        server's shutdown) was seen to stay cancelling, or to leave the layer's receive lock held
        for the next loop."""
        listen = self._tasks[0]
        if not listen.done():
            await self.layer.send(self.channel, {"type": "turn.closed"})
            done, _ = await asyncio.wait({listen}, timeout=CLOSE_WAIT)
            if not done:
                log.warning("the hub of session %s did not stop listening; cancelling it", self.session_id)
                listen.cancel()
                return
        if not listen.cancelled() and (failure := listen.exception()) is not None:
            log.error("the hub of session %s stopped listening early", self.session_id, exc_info=failure)

    async def _send(self, frames: list[Frame]) -> None:
        async with self.lock:
            self.frames.extend(frames)
            self.seq += 1
            if self.deliver is not None:
                try:
                    still_open = await self.deliver(frames)
                except Exception:
                    log.exception("sending a batch of session %s to its tab failed; it gets no more", self.session_id)
                    still_open = False
                if not still_open:
                    self.deliver = None  # its tab reloaded or closed: the others still get the turn
            if self.listeners or self.has_peers():
                mirror = {"type": "chat.mirror", "frames": frames, "origin": self.origin, "turn": self.id}
                try:
                    await self.layer.group_send(f"chat.{self.session_id}", {**mirror, "seq": self.seq})
                except Exception:
                    # The channel layer failed for a moment (Redis restarting): the turn goes on
                    # and is stored; the other tabs show it on their next join or reload.
                    log.exception("mirroring a batch of session %s failed", self.session_id)

    async def _listen(self) -> None:
        # A join sent before this hub is in its group goes unanswered: the joining socket asks
        # again at its next check of the turn's lease (turn_watch.TurnWatch._watch_turn).
        await self.layer.group_add(self.group, self.channel)
        while True:
            message = await self.layer.receive(self.channel)
            kind = message.get("type")
            if kind == "turn.closed":
                return
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
            try:
                await self.layer.send(channel, catchup)
            except ChannelFull:
                # That socket reads nothing (its page froze): it is not sent the rest either.
                log.warning("a socket joining session %s reads nothing; it is left out", self.session_id)
                return
            self.listeners.add(channel)


class Follower:
    """What one socket shows of the turns it did not start: the mirrored batches (`chat.mirror`)
    and catchups (`chat.catchup`) of TurnHub, each frame once and in order."""

    def __init__(self) -> None:
        self.joining = False  # a join was asked for and its catchup is awaited
        self.asked = False  # this socket ever asked a hub for its frames (it says when it leaves)
        self.turn: str | None = None  # the turn shown here from its start or its catchup
        self.seq = 0  # the last batch of `turn` shown
        self.held: list[dict[str, Any]] = []  # batches that came while joining

    def join(self) -> bool:
        """Whether a join is to be asked for (none is awaited already)."""
        if self.joining:
            return False
        self.joining = self.asked = True
        return True

    def give_up(self) -> None:
        """The turn is over or lost without its catchup: nothing more to wait for."""
        self.joining = False
        self.held = []

    def mirrored(self, event: dict[str, Any]) -> tuple[list[Frame], bool]:
        """The frames of a mirrored batch to show now, and whether to ask to join its turn (its
        start was never seen here: this socket learned of it late)."""
        turn, frames = event.get("turn"), list(event["frames"])
        if turn is None:
            return frames, False
        seq = int(event["seq"])
        if turn == self.turn:
            if seq <= self.seq:
                return [], False  # in the catchup shown already
            self.seq = seq
            return frames, False
        if any(f["type"] == "turn_started" for f in frames):
            # A turn followed from its start: a join still awaited was for one that ended since.
            self.turn, self.seq, self.joining, self.held = turn, seq, False, []
            return frames, False
        self.held.append(event)
        return [], self.join()

    def caught_up(self, event: dict[str, Any]) -> list[Frame]:
        """The frames of a catchup to show now: the turn so far (its start marked "joined"), then
        the batches held meanwhile that came after it."""
        turn, seq = str(event["turn"]), int(event["seq"])
        if not self.joining:
            return []  # an answer to an earlier join
        if turn == self.turn:
            self.joining = False
            return []  # followed here from its start: every frame of it was shown
        self.turn, self.seq, self.joining = turn, seq, False
        frames = [{**f, "joined": True} if f["type"] == "turn_started" else f for f in event["frames"]]
        for held in sorted((h for h in self.held if h["turn"] == turn), key=lambda h: int(h["seq"])):
            if int(held["seq"]) > self.seq:
                self.seq = int(held["seq"])
                frames.extend(held["frames"])
        self.held = []
        return frames
