"""One socket's side of its session: a second tab that joins an answer being written gets the
answer so far then the rest; a tab showing a turn whose server stopped renewing its lease hears
"The server writing this answer stopped" and "ready"; the sockets of a session know of each other,
so a turn is mirrored only while another one listens. Real channel layer, real TurnHub, real lease
rows; the socket is a list of the frames it was sent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from agent.chat.frames import FrameQueue
from agent.chat.turn_hub import TurnHub
from agent.chat.turn_watch import SERVER_STOPPED, TurnWatch
from knowledge.history import turns
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db(transaction=True)

STARTED = {"type": "turn_started", "message_id": 7, "text": "what is the plan?"}


class Tab:
    """A socket as TurnWatch sees it: the frames it was sent, and Channels' delivery of the
    session group's messages to its handlers (what the consumer's one-line handlers do)."""

    def __init__(self, layer: Any, session_id: str, channel: str, every: float) -> None:
        self.frames: list[dict[str, Any]] = []
        self.watch = TurnWatch(layer, session_id, channel, self._send, every=every)
        self._layer, self._channel = layer, channel
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, session_id: str, every: float = 3600.0) -> Tab:
        layer = get_channel_layer()
        tab = cls(layer, session_id, await layer.new_channel(), every)
        await tab.watch.enter()
        tab._reader = asyncio.create_task(tab._read())
        return tab

    async def _send(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)

    async def _read(self) -> None:
        while True:
            message = await self._layer.receive(self._channel)
            if message["type"] == "tab.closed":
                return
            await getattr(self.watch, "on_" + message["type"].replace(".", "_"))(message)

    async def close(self) -> None:
        self.watch.end()
        await self.watch.leave()
        # The reader ends on a message of its own, not cancelled in its receive: with the Redis
        # layer that was seen to leave the layer's receive lock held for the next test's loop.
        await self._layer.send(self._channel, {"type": "tab.closed"})
        assert self._reader is not None
        await self._reader


async def _until(condition: Callable[[], bool]) -> None:
    """Waits for what the tab shows; the bound only keeps a broken test from hanging."""
    async with asyncio.timeout(15):
        while not condition():
            await asyncio.sleep(0.01)


def _types(frames: list[dict[str, Any]]) -> list[str]:
    return [f["type"] for f in frames]


async def _running_turn(session_id: str) -> tuple[TurnHub, FrameQueue, list[dict[str, Any]]]:
    """A turn of this process, sent to the tab that sent the message (the list returned)."""
    await sync_to_async(turns.claim)(session_id)
    sent: list[dict[str, Any]] = []

    async def deliver(frames: list[dict[str, Any]]) -> bool:
        sent.extend(frames)
        return True

    hub = TurnHub(
        get_channel_layer(), session_id, deliver=deliver, has_peers=lambda: False, origin="sender", stop=lambda: None
    )
    queue = FrameQueue(asyncio.get_running_loop())
    await hub.start(queue)
    return hub, queue, sent


async def test_a_second_tab_gets_the_answer_so_far_then_the_rest_each_piece_once(session_id):
    hub, queue, sent = await _running_turn(session_id)
    for frame in (STARTED, {"type": "delta", "text": "First the build, "}):
        queue.put(frame)
    await _until(lambda: len(sent) == 2)
    # A short lease check: a join sent before the hub listens is asked again at the next one.
    tab = await Tab.open(session_id, every=0.05)
    await tab.watch.join()
    await _until(lambda: len(tab.frames) == 2)
    queue.put({"type": "delta", "text": "then the tests."})
    queue.put(None)  # the turn's end: its hub sends "ready"
    await _until(lambda: _types(tab.frames)[-1:] == ["ready"])
    assert tab.frames == [
        {**STARTED, "joined": True, "mirrored": True},
        {"type": "delta", "text": "First the build, ", "mirrored": True},
        {"type": "delta", "text": "then the tests.", "mirrored": True},
        {"type": "ready", "mirrored": True},
    ]
    assert tab.watch.watch is None  # "ready" ended the lease watch: no second "ready" follows
    await tab.close()


async def test_a_tab_joining_an_idle_chat_hears_idle(session_id):
    tab = await Tab.open(session_id)
    await tab.watch.join()
    assert tab.frames == [{"type": "idle"}]
    await tab.close()


async def test_a_turn_on_another_worker_whose_lease_lapses_ends_with_server_stopped_then_ready(session_id):
    await sync_to_async(turns.claim)(session_id, worker="another-host:41")  # alive for all this host knows
    tab = await Tab.open(session_id)  # checks only when poked: each check is one Stop
    await tab.watch.introduce()  # a page opened while that answer is being written
    assert tab.watch.watch is not None
    # Its heartbeat stops: the lease is left to run out (as a clock past it would see).
    expired = timezone.now() - timedelta(seconds=1)
    await sync_to_async(ChatSession.objects.filter(pk=session_id).update)(turn_lease_until=expired)
    tab.watch.poke()  # Stop pressed: checked now
    await _until(lambda: bool(tab.frames))
    await _until(lambda: tab.watch.watch is None)
    assert tab.frames == [
        {"type": "error", "error": SERVER_STOPPED, "retry": False, "mirrored": True},
        {"type": "ready", "mirrored": True},
    ]
    assert not await sync_to_async(turns.is_busy)(session_id)  # the next message is taken
    await tab.close()


async def test_a_turns_own_ready_arriving_after_the_watch_ended_it_is_not_shown_twice(session_id):
    await sync_to_async(turns.claim)(session_id, worker="another-host:41")
    tab = await Tab.open(session_id)
    await tab.watch.introduce()
    expired = timezone.now() - timedelta(seconds=1)
    await sync_to_async(ChatSession.objects.filter(pk=session_id).update)(turn_lease_until=expired)
    tab.watch.poke()
    await _until(lambda: tab.watch.watch is None)
    # That worker was only slow: its own end of the turn comes through the channel layer late.
    late = {"type": "chat.mirror", "frames": [{"type": "ready"}], "origin": "elsewhere"}
    await tab.watch.on_chat_mirror(late)
    assert _types(tab.frames) == ["error", "ready"]
    # The next turn's frames, its "ready" included, are shown as ever.
    for frame in (STARTED, {"type": "delta", "text": "Next."}, {"type": "ready"}):
        await tab.watch.on_chat_mirror({"type": "chat.mirror", "frames": [frame], "origin": "elsewhere"})
    assert _types(tab.frames) == ["error", "ready", "turn_started", "delta", "ready"]
    await tab.close()


async def test_a_turn_that_ended_normally_is_ended_by_its_own_frames_even_when_they_lag_many_checks(session_id):
    await sync_to_async(turns.claim)(session_id, worker="another-host:41")
    tab = await Tab.open(session_id, every=0.01)  # a check every 10 ms races the turn's own end
    await tab.watch.introduce()
    await sync_to_async(turns.release)(session_id, worker="another-host:41")  # the turn ended there
    await asyncio.sleep(0.3)  # thirty checks see it released before its last frames get here
    late = [{"type": "done", "text": "All set."}, {"type": "ready"}]
    await tab.watch.on_chat_mirror({"type": "chat.mirror", "frames": late, "origin": "elsewhere"})
    assert tab.frames == [{**frame, "mirrored": True} for frame in late]
    assert tab.watch.watch is None  # its "ready" ended the watch: nothing more follows
    await tab.close()


async def test_the_sockets_of_a_session_know_of_each_other_until_one_leaves(session_id):
    first = await Tab.open(session_id)
    await first.watch.introduce()
    assert not first.watch.has_peers()  # alone: its turns skip the channel layer
    second = await Tab.open(session_id)
    await second.watch.introduce()
    await _until(lambda: first.watch.has_peers() and second.watch.has_peers())
    await second.close()
    await _until(lambda: not first.watch.has_peers())
    await first.close()
