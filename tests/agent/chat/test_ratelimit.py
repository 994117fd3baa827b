"""The chat socket's limits (agent/chat/ratelimit.py), through Channels' communicator with the real
runner and the scripted model: beyond the per-connection rate limit a frame gets "Slow down: …",
nothing is stored and the socket stays open; an oversized frame is refused before parsing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from agent.chat import ratelimit
from agent.chat import service as chat_service
from knowledge.models import Message
from tests.agent.ws import open_socket
from tests.conftest import write_config
from tests.fakellm import Reply


class Clock:
    """The sockets' clock, moved by the test: a slow machine's turns take no time on it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    real = ratelimit.ConnectionLimits
    monkeypatch.setattr(ratelimit, "ConnectionLimits", lambda: real(clock=clock))
    return clock


@pytest.fixture
def ws_owner(transactional_db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("owner")


async def _until_ready(comm: WebsocketCommunicator) -> list[dict[str, Any]]:
    frames = [await comm.receive_json_from(timeout=15)]
    while frames[-1]["type"] not in ("ready",):
        frames.append(await comm.receive_json_from(timeout=15))
    return frames


def _stored_user_texts(session_id: str) -> list[str]:
    return list(
        Message.objects.filter(session_id=session_id, role="user").order_by("id").values_list("content", flat=True)
    )


@pytest.mark.django_db(transaction=True)
async def test_messages_beyond_the_rate_limit_are_refused_kept_out_and_the_socket_stays_open(
    llm: Any, ws_owner: Any, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ratelimit, "MESSAGE_BURST", 3)
    monkeypatch.setattr(ratelimit, "MESSAGE_REFILL_PER_SECOND", 2.0)
    session_id = (await sync_to_async(chat_service.create_session)()).pk
    comm = await open_socket(f"/ws/chat/{session_id}/", ws_owner)
    for i in range(3):
        await comm.send_json_to({"type": "message", "text": f"turn {i}"})
        assert any(f["type"] == "done" for f in await _until_ready(comm))
    await comm.send_json_to({"type": "message", "text": "one too many"})
    refused = await comm.receive_json_from(timeout=5)
    assert refused["type"] == "error" and refused["error"].startswith("Slow down:"), refused
    assert "at most 3 messages" in refused["error"] and "was not sent" in refused["error"]
    assert 0 < refused["retry_after"] <= 0.5 and "retry" not in refused  # the page unlocks its input
    assert await sync_to_async(_stored_user_texts)(session_id) == ["turn 0", "turn 1", "turn 2"]
    await comm.send_json_to({"type": "ping"})  # still open
    assert await comm.receive_json_from(timeout=5) == {"type": "pong"}
    clock.now += refused["retry_after"]
    await comm.send_json_to({"type": "message", "text": "one too many"})  # resent after the wait: accepted
    assert any(f["type"] == "done" for f in await _until_ready(comm))
    assert await sync_to_async(_stored_user_texts)(session_id) == ["turn 0", "turn 1", "turn 2", "one too many"]
    assert len([r for r in llm.chat_requests() if r.get("stream")]) == 4  # the refused frame never reached the model
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_flood_of_frames_is_slowed_down_and_the_socket_stays_open(
    llm: Any, ws_owner: Any, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ratelimit, "FRAME_BURST", 10)
    monkeypatch.setattr(ratelimit, "FRAME_REFILL_PER_SECOND", 5.0)
    comm = await open_socket("/ws/chat/flood/", ws_owner)
    for _ in range(30):
        await comm.send_json_to({"type": "ping"})
    replies = [await comm.receive_json_from(timeout=5) for _ in range(30)]
    pongs = [r for r in replies if r == {"type": "pong"}]
    slow = [r for r in replies if r["type"] == "error" and r["error"].startswith("Slow down:")]
    assert len(pongs) == 10 and len(slow) == 20
    clock.now += 0.2  # one frame's worth of refill
    await comm.send_json_to({"type": "ping"})
    assert await comm.receive_json_from(timeout=5) == {"type": "pong"}
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_oversized_frame_is_refused_before_parsing_and_nothing_is_stored(
    llm: Any, home: Path, ws_owner: Any
) -> None:
    write_config(home, "agent:\n  max_message_chars: 100\n")
    session_id = (await sync_to_async(chat_service.create_session)()).pk
    comm = await open_socket(f"/ws/chat/{session_id}/", ws_owner)
    await comm.send_to(text_data="[" * 5_000_000)  # not even JSON: refused by size, not by a parse error
    frame = await comm.receive_json_from(timeout=5)
    assert frame["type"] == "error" and "5,000,000 characters" in frame["error"] and "limited to 100" in frame["error"]
    await comm.send_json_to({"type": "message", "text": "z" * 101})
    frame = await comm.receive_json_from(timeout=5)
    assert "the limit is 100" in frame["error"] and "Nothing was sent" in frame["error"]
    assert await sync_to_async(_stored_user_texts)(session_id) == []
    assert not llm.chat_requests()
    llm.push(Reply(text="fine"))
    await comm.send_json_to({"type": "message", "text": "z" * 100})  # exactly the limit: accepted
    assert any(f["type"] == "done" for f in await _until_ready(comm))
    await comm.disconnect()


def test_token_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    bucket = ratelimit.TokenBucket(2, 0.5, clock=lambda: now[0])
    assert bucket.take() == 0.0 and bucket.take() == 0.0
    assert bucket.take() == pytest.approx(2.0)
    now[0] = 1.0
    assert bucket.take() == pytest.approx(1.0)
    now[0] = 2.0
    assert bucket.take() == 0.0
    now[0] = 100.0  # never more than the burst
    assert [bucket.take() for _ in range(3)][-1] > 0
