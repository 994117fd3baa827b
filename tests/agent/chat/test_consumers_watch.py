"""A tab showing a turn that another server process runs: when that process dies (or its lease
runs out) the tab hears "The server writing this answer stopped" and "ready" instead of staying
busy, at once when it presses Stop; a turn that ends normally ends the watch without a word."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from agent.chat import consumers
from knowledge.history import turns
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession
from tests.agent.ws import frames_until, open_socket
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _dead_worker() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{this_worker().rpartition(':')[0]}:{proc.pid}"


def _lost(frames: list[dict[str, Any]]) -> bool:
    return [f["type"] for f in frames[-2:]] == ["error", "ready"] and frames[-2]["error"] == consumers.SERVER_STOPPED


async def test_a_tab_opened_on_a_turn_whose_server_died_is_freed_and_the_next_message_works(
    llm, owner, session_id, monkeypatch
):
    monkeypatch.setattr(consumers, "WATCH_EVERY", 0.05)
    await sync_to_async(turns.claim)(session_id, worker=_dead_worker())
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    assert _lost(await frames_until(comm, "ready"))
    assert not await sync_to_async(turns.is_busy)(session_id)
    llm.push(Reply(text="Back again."))
    await comm.send_json_to({"type": "message", "text": "hello?"})
    frames = await frames_until(comm, "ready")
    assert [f for f in frames if f["type"] == "done"] and not [f for f in frames if f["type"] == "error"]
    await comm.disconnect()


async def test_a_turn_on_another_host_is_given_up_only_once_its_lease_runs_out(llm, owner, session_id, monkeypatch):
    monkeypatch.setattr(consumers, "WATCH_EVERY", 0.05)
    await sync_to_async(turns.claim)(session_id, worker="another-host:41")  # alive for all this host knows
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    assert await comm.receive_nothing(timeout=0.5)  # ten checks: its lease holds, the tab waits
    # Its heartbeat stops: the lease is left to run out (as a clock past it would see).
    expired = timezone.now() - timedelta(seconds=1)
    await sync_to_async(ChatSession.objects.filter(pk=session_id).update)(turn_lease_until=expired)
    assert _lost(await frames_until(comm, "ready"))
    await comm.disconnect()


async def test_stop_on_a_turn_whose_server_died_says_nothing_runs_and_ends_it_at_once(
    llm, owner, session_id, monkeypatch
):
    monkeypatch.setattr(consumers, "WATCH_EVERY", 3600.0)  # only Stop can end it within the test
    await sync_to_async(turns.claim)(session_id, worker=_dead_worker())
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "stop"})
    frames = await frames_until(comm, "ready")
    assert frames[0] == {"type": "stopping", "running": False}
    assert _lost(frames)
    await comm.disconnect()


async def test_a_turn_that_ends_normally_ends_the_watch_without_an_error(llm, owner, session_id, monkeypatch):
    monkeypatch.setattr(consumers, "WATCH_EVERY", 0.01)  # checks race the turn's own end
    llm.push(Reply(text="Answer for both tabs. " * 20, chunk_delay=0.005))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    watcher = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "hello from tab one"})
    await frames_until(sender, "ready")
    mirrored = await frames_until(watcher, "ready")
    assert not [f for f in mirrored if f["type"] == "error"]
    assert await watcher.receive_nothing(timeout=0.3)  # no second "ready" from the watch
    for comm in (sender, watcher):
        await comm.disconnect()


async def test_a_tab_that_missed_the_turns_first_frames_still_watches_it(llm, owner, session_id, monkeypatch):
    monkeypatch.setattr(consumers, "WATCH_EVERY", 0.05)
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    # A turn on another worker that learned of this socket only after its turn_started went out.
    await sync_to_async(turns.claim)(session_id, worker=_dead_worker())
    mirror = {"type": "chat.mirror", "frames": [{"type": "delta", "text": "Exit 137"}], "origin": "elsewhere"}
    await get_channel_layer().group_send(f"chat.{session_id}", mirror)
    frames = await frames_until(comm, "ready")
    assert frames[0] == {"type": "delta", "text": "Exit 137", "mirrored": True}
    assert _lost(frames)
    await comm.disconnect()
