"""Websocket refusals against a real daphne: bad session ids and oversized frames get a close
reason, never an HTTP 500 or a bare connection reset."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from agent.chat.ratelimit import max_frame_chars
from tests.daphne import Daphne, Http, start_daphne

pytestmark = pytest.mark.slow  # every test here talks to a daphne subprocess

SMALL_LIMIT = 1000  # agent.max_message_chars for the small-limit server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    with start_daphne(tmp_path_factory.mktemp("ws-default")) as s:
        yield s


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    config = f"agent:\n  max_message_chars: {SMALL_LIMIT}\n"
    with start_daphne(tmp_path_factory.mktemp("ws-small"), config=config) as s:
        yield s


def _owner(server: Daphne) -> tuple[Http, str]:
    client = Http(server.port)
    client.login(server.token)
    assert client.get("/").status == 200  # opens the first chat
    session = server.query("SELECT id FROM knowledge_chatsession ORDER BY started_at LIMIT 1")[0][0]
    return client, str(session)


async def _open(server: Daphne, client: Http, path: str):
    return ws_connect(
        f"ws://127.0.0.1:{server.port}{path}",
        origin=Origin(server.origin),
        additional_headers={"Cookie": f"sessionid={client.cookies['sessionid']}"},
        max_size=None,
        open_timeout=10,
    )


@pytest.mark.parametrize("bad_id", ["a" * 121, "%C3%A9", "x.y"], ids=["121-chars", "e-acute", "dot"])
def test_an_invalid_session_id_is_refused_with_a_close_reason(server: Daphne, bad_id: str) -> None:
    client, _ = _owner(server)

    async def run() -> tuple[dict[str, str], int | None, str]:
        async with await _open(server, client, f"/ws/chat/{bad_id}/") as ws:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            assert ws.close_code is not None
            return frame, ws.close_code, ws.close_reason or ""

    frame, code, reason = asyncio.run(run())
    assert frame["type"] == "error" and "Not a chat session id" in frame["error"]
    assert code == 4400 and "Not a chat session id" in reason
    assert "Internal Server Error" not in server.log() and "Traceback" not in server.log()


def test_a_frame_over_one_mib_gets_a_message_and_the_socket_stays_open(server: Daphne) -> None:
    client, session = _owner(server)

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        async with await _open(server, client, f"/ws/chat/{session}/") as ws:
            await ws.send(json.dumps({"type": "message", "text": "x" * (1024 * 1024 + 10)}))
            refusal = json.loads(await asyncio.wait_for(ws.recv(), 20))
            await ws.send(json.dumps({"type": "ping"}))
            return refusal, json.loads(await asyncio.wait_for(ws.recv(), 10))

    refusal, pong = asyncio.run(run())
    assert refusal["type"] == "error" and "Nothing was sent" in refusal["error"]
    assert pong == {"type": "pong"}


@pytest.mark.slow
def test_daphne_frame_cap_follows_the_configured_limit_and_closes_with_a_reason(small: Daphne) -> None:
    client, session = _owner(small)
    cap = max_frame_chars(SMALL_LIMIT) * 4

    async def just_under() -> str:
        async with await _open(small, client, f"/ws/chat/{session}/") as ws:
            await ws.send("y" * (cap - 10))  # past the consumer's limit, under daphne's cap
            return str(json.loads(await asyncio.wait_for(ws.recv(), 10))["error"])

    async def over() -> tuple[int | None, str]:
        async with await _open(small, client, f"/ws/chat/{session}/") as ws:
            await ws.send("z" * (cap + 10))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return ws.close_code, ws.close_reason or ""

    assert f"limited to {SMALL_LIMIT:,}" in asyncio.run(just_under())
    code, reason = asyncio.run(over())
    assert code == 1009 and "Frame too large" in reason and "Nothing was sent" in reason


def test_a_version_frame_naming_no_message_is_refused_and_the_socket_stays_open(server: Daphne) -> None:
    client, session = _owner(server)

    async def run() -> list[dict[str, str]]:
        async with await _open(server, client, f"/ws/chat/{session}/") as ws:
            await ws.send(json.dumps({"type": "message", "regenerate": "the last one"}))
            bad_field = json.loads(await asyncio.wait_for(ws.recv(), 20))
            await ws.send(json.dumps({"type": "message", "continue": 999999}))
            frames = [json.loads(await asyncio.wait_for(ws.recv(), 20)) for _ in range(2)]  # error, ready
            return [bad_field, *frames]

    bad_field, unknown, ready = asyncio.run(run())
    assert bad_field["type"] == "error" and "must be the id of a message" in bad_field["error"]
    assert unknown["type"] == "error" and "not part of this chat" in unknown["error"] and unknown["retry"] is False
    assert ready == {"type": "ready"}
    assert server.query("SELECT count(*) FROM knowledge_message") == [(0,)]  # nothing stored


BAD_IMAGES = {
    "past-64-bits": {"images": [2**63]},
    "10^30": {"images": [10**30]},
    "negative": {"images": [-1]},
    "zero": {"images": [0]},
    "float": {"images": [1.5]},
    "string": {"images": "7"},
    "string-id": {"images": ["7"]},
    "true": {"images": [True]},
    "nested": {"images": [[1]]},
    "over-the-limit": {"images": [1, 2, 3, 4, 5]},
    "huge-list": {"images": [2**63] * 50_000},
    "attachments": {"attachments": [2**63]},
}


@pytest.mark.parametrize("bad", list(BAD_IMAGES.values()), ids=list(BAD_IMAGES))
def test_bad_image_ids_get_an_error_frame_and_the_socket_stays_open(server: Daphne, bad: dict[str, object]) -> None:
    client, session = _owner(server)

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        async with await _open(server, client, f"/ws/chat/{session}/") as ws:
            await ws.send(json.dumps({"type": "message", "text": "look at this", **bad}))
            refusal = json.loads(await asyncio.wait_for(ws.recv(), 20))
            await ws.send(json.dumps({"type": "ping"}))
            return refusal, json.loads(await asyncio.wait_for(ws.recv(), 10))

    refusal, pong = asyncio.run(run())
    assert refusal["type"] == "error" and refusal["error"].endswith("Nothing was sent.")
    assert pong == {"type": "pong"}
    assert server.query("SELECT count(*) FROM knowledge_message") == [(0,)]
    assert "Traceback" not in server.log()
