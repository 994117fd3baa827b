"""A socket that asks to join while an answer is being written (a reload, a second tab, another
device) gets the turn's frames so far, its start marked "joined", then the rest live, each piece of
text once; Stop from it stops the turn even when the tab that sent the message is gone. Asked on an
idle chat, the answer is "idle"."""

from __future__ import annotations

from typing import Any

import pytest

from agent.chat.turn_hub import Follower
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


async def _join(session_id: str, owner: Any) -> Any:
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "join"})  # as the page does whenever its socket opens
    return comm


async def test_a_socket_joining_after_the_sender_left_gets_the_answer_so_far_then_the_rest(llm, owner, session_id):
    llm.push(Reply(text=ANSWER, chunk_delay=0.01))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "what is the plan?"})
    started = await _until_text(sender)
    await sender.disconnect()  # the tab reloads
    joined = await _join(session_id, owner)
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
    joined = await _join(session_id, owner)
    frames = await frames_until(joined, "ready")
    assert frames[0]["type"] == "turn_started" and frames[0]["joined"]
    assert [f["type"] for f in frames].count("turn_started") == 1
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
    joined = await _join(session_id, owner)
    assert (await joined.receive_json_from(timeout=15))["joined"]
    await joined.send_json_to({"type": "stop"})
    frames = await frames_until(joined, "ready")
    assert {"type": "stopping", "running": True} in frames
    done = [f for f in frames if f["type"] == "done"]
    assert done and done[0]["interrupted"]
    assert len(_text(frames)) < len(ANSWER * 5)
    await joined.disconnect()


async def test_a_socket_that_left_after_joining_leaves_the_answer_to_the_others(llm, owner, session_id):
    llm.push(Reply(text=ANSWER, chunk_delay=0.01))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    await sender.send_json_to({"type": "message", "text": "what is the plan?"})
    seen = await _until_text(sender)
    first = await _join(session_id, owner)
    assert (await first.receive_json_from(timeout=15))["joined"]
    await first.disconnect()  # a second tab closed mid-answer
    second = await _join(session_id, owner)
    frames = await frames_until(second, "ready")
    assert frames[0]["joined"] and _text(frames) == ANSWER
    assert _text(seen + await frames_until(sender, "ready")) == ANSWER
    for comm in (sender, second):
        await comm.disconnect()


async def test_joining_an_idle_chat_says_idle_and_the_next_answer_streams(llm, owner, session_id):
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    assert await comm.receive_nothing(timeout=0.3)  # nothing asked, nothing said
    await comm.send_json_to({"type": "join"})
    assert await comm.receive_json_from(timeout=5) == {"type": "idle"}
    llm.push(Reply(text="Fine."))
    await comm.send_json_to({"type": "message", "text": "hello"})
    frames = await frames_until(comm, "ready")
    assert frames[0]["type"] == "turn_started" and "joined" not in frames[0] and _text(frames) == "Fine."
    await comm.disconnect()


# -- what one socket shows of a turn it joined, whatever order its batches and catchup arrive in -----


def _batch(seq: int, *frames: dict[str, Any], turn: str = "t1") -> dict[str, Any]:
    return {"type": "chat.mirror", "turn": turn, "seq": seq, "frames": list(frames), "origin": "x"}


def _delta(text: str) -> dict[str, Any]:
    return {"type": "delta", "text": text}


STARTED = {"type": "turn_started", "message_id": 1, "text": "q"}


def test_batches_that_arrive_before_the_catchup_show_after_it_once():
    follower = Follower()
    assert follower.join()
    # Batch 3 was mirrored before the catchup was made (it holds it); batch 4 after, but is here first.
    assert follower.mirrored(_batch(3, _delta("c"))) == ([], False)
    assert follower.mirrored(_batch(4, _delta("d"))) == ([], False)
    catchup = {"turn": "t1", "seq": 3, "frames": [STARTED, _delta("abc")]}
    shown = follower.caught_up(catchup)
    assert shown == [{**STARTED, "joined": True}, _delta("abc"), _delta("d")]
    assert follower.mirrored(_batch(4, _delta("d"))) == ([], False)  # shown already
    assert follower.mirrored(_batch(5, _delta("e"))) == ([_delta("e")], False)
    assert follower.caught_up(catchup) == []  # a second answer to a join asked again


def test_a_turn_seen_without_its_start_is_joined_and_a_new_turn_is_followed_from_its_start():
    follower = Follower()
    assert follower.mirrored(_batch(7, _delta("late"))) == ([], True)  # ask its hub for the rest
    assert follower.mirrored(_batch(8, _delta("later"))) == ([], False)  # asked already
    shown = follower.caught_up({"turn": "t1", "seq": 7, "frames": [STARTED, _delta("...late")]})
    assert shown == [{**STARTED, "joined": True}, _delta("...late"), _delta("later")]
    nxt = _batch(1, STARTED, _delta("x"), turn="t2")
    assert follower.mirrored(nxt) == ([STARTED, _delta("x")], False)
    assert follower.mirrored({"type": "chat.mirror", "frames": [_delta("y")], "origin": "x"}) == ([_delta("y")], False)
