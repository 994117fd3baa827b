"""A socket opened while an answer is being written (a reload, a second tab, another device)
joins it: the turn's frames so far, its start marked "joined", then the rest live, each piece of
text once; Stop from it stops the turn even when the tab that sent the message is gone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.ws import frames_until, open_socket
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "# Plan\n\nFirst the **build**, then the tests. " + "and one more step " * 40


def _text(frames: list[dict[str, Any]]) -> str:
    return "".join(f["text"] for f in frames if f["type"] == "delta")


async def _until_text(comm: Any) -> list[dict[str, Any]]:
    frames = [await comm.receive_json_from(timeout=15)]
    while not _text(frames):
        frames.append(await comm.receive_json_from(timeout=15))
    return frames


async def test_a_socket_opened_after_the_sender_left_gets_the_answer_so_far_then_the_rest(llm, owner, session_id):
    llm.push(Reply(text=ANSWER, chunk_delay=0.01))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "what is the plan?"})
    started = await _until_text(sender)
    await sender.disconnect()  # the tab reloads
    joined = await open_socket(f"/ws/chat/{session_id}/", owner)
    frames = await frames_until(joined, "ready")
    first = frames[0]
    assert first["type"] == "turn_started" and first["joined"] and first["mirrored"]
    assert first["text"] == "what is the plan?" and first["message_id"] == started[0]["message_id"]
    assert _text(frames) == ANSWER  # what was written before the join, then the rest, each once
    assert [f["type"] for f in frames[-3:]] == ["done", "saved", "ready"]
    assert frames.count(first) == 1 and not [f for f in frames if f["type"] == "error"]
    await joined.disconnect()


async def test_a_second_socket_joining_beside_the_sender_sees_each_piece_once(llm, owner, session_id):
    llm.push(Reply(text=ANSWER, chunk_delay=0.01))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "what is the plan?"})
    seen = await _until_text(sender)
    joined = await open_socket(f"/ws/chat/{session_id}/", owner)
    frames = await frames_until(joined, "ready")
    assert frames[0]["type"] == "turn_started" and frames[0]["joined"]
    assert _text(frames) == ANSWER
    assert _text(seen + await frames_until(sender, "ready")) == ANSWER
    for comm in (sender, joined):
        await comm.disconnect()


async def test_stop_from_a_joined_socket_stops_the_answer_when_the_sender_is_gone(llm, owner, session_id):
    llm.push(Reply(text=ANSWER * 5, chunk_delay=0.02))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "a long one"})
    await _until_text(sender)
    await sender.disconnect()
    joined = await open_socket(f"/ws/chat/{session_id}/", owner)
    assert (await joined.receive_json_from(timeout=15))["joined"]
    await joined.send_json_to({"type": "stop"})
    frames = await frames_until(joined, "ready")
    assert {"type": "stopping", "running": True} in frames
    done = [f for f in frames if f["type"] == "done"]
    assert done and done[0]["interrupted"]
    assert len(_text(frames)) < len(ANSWER * 5)
    await joined.disconnect()


async def test_a_socket_opened_on_an_idle_chat_gets_nothing(llm, owner, session_id):
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()
